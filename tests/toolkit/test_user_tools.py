from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.executor import ToolExecutor
from tea_agent_mini.toolkit.registry import Toolkit, tool
from tea_agent_mini.toolkit.usercode import UserToolError, validate_tool_code
from tea_agent_mini.toolkit.userstore import USER_MODULE_PREFIX, load_user_tools
from tea_agent_mini.toolkit.usertools import sync_user_tools
from tea_agent_mini.types import ToolCall

GREET_SCHEMA = {
    "type": "object",
    "properties": {"who": {"type": "string", "description": "whom to greet"}},
    "required": ["who"],
}
# v1 and v2 have the same length on purpose: a reload must not depend on the size changing.
GREET_V1 = "def greet(ctx, who):\n    return 'v1 hello ' + who\n"
GREET_V2 = "def greet(ctx, who):\n    return 'v2 howdy ' + who\n"
MISSING_MODULE = "surely_not_installed_module_xyz"


@tool("grep_stuff", "A built-in without the toolkit_ prefix.", {"type": "object"})
def grep_stuff(ctx):
    return "built-in"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def toolkit() -> Toolkit:
    toolkit = Toolkit.load(["selfmade", "files.files"])
    toolkit.register(grep_stuff.tool_spec)
    return toolkit


@pytest.fixture
def executor(toolkit: Toolkit, home: Path, workspace: Path) -> ToolExecutor:
    context = ToolContext(workspace=workspace, home=home)
    context.toolkit = toolkit  # the field the report asks ToolContext to gain
    return ToolExecutor(toolkit, context)


def call(executor: ToolExecutor, tool_name: str, /, **arguments):
    arguments_json = json.dumps(arguments)
    return asyncio.run(executor.run(ToolCall(id="c1", name=tool_name, arguments=arguments_json)))


def save(executor, name="greet", code=GREET_V1, parameters=None, description="Greet someone."):
    parameters = GREET_SCHEMA if parameters is None else parameters
    return call(
        executor,
        "toolkit_save",
        name=name,
        description=description,
        parameters=parameters,
        code=code,
    )


def write_tool(home: Path, stem: str, code: str, meta: dict | None = None) -> Path:
    folder = home / "tools"
    folder.mkdir(parents=True, exist_ok=True)
    if meta is not None:
        (folder / f"{stem}.json").write_text(json.dumps(meta), encoding="utf-8")
    path = folder / f"{stem}.py"
    path.write_text(code, encoding="utf-8")
    return path


def touch_later(path: Path) -> None:
    """Move the mtime forward explicitly, so the test does not depend on clock resolution."""
    info = path.stat()
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns + 2_000_000_000))


# ---- save, call, upgrade, roll back ---------------------------------------------------------


def test_save_call_upgrade_list_and_roll_back_in_one_session(executor, home):
    saved = save(executor)
    assert saved.ok, saved.error
    assert "Saved greet v1" in saved.output and "call greet now" in saved.output
    assert call(executor, "greet", who="Ann").output == "v1 hello Ann"
    first_module = executor.toolkit.get("greet").module

    upgraded = save(executor, code=GREET_V2, description="Greet someone, v2.")
    assert upgraded.ok and "v2" in upgraded.output and "(v1 is kept)" in upgraded.output
    assert call(executor, "greet", who="Ann").output == "v2 howdy Ann"

    versions = call(executor, "toolkit_list_versions", name="greet").output.splitlines()
    assert versions[0] == "greet: live version v2"
    assert versions[1].startswith("- v1 (") and versions[1].endswith("Greet someone.")
    assert versions[2].endswith("Greet someone, v2.  <- live")

    rolled = call(executor, "toolkit_rollback", name="greet", version=1)
    assert rolled.ok and "from v2 to v1" in rolled.output
    assert call(executor, "greet", who="Ann").output == "v1 hello Ann"
    assert executor.toolkit.get("greet").description == "Greet someone."

    tools = home / "tools"
    assert (tools / "greet.py").read_text() == GREET_V1
    assert json.loads((tools / "greet.json").read_text())["version"] == 1
    assert (tools / ".versions" / "greet" / "v2.py").read_text() == GREET_V2
    assert sorted(p.name for p in (tools / ".versions" / "greet").iterdir()) == [
        "v1.json",
        "v1.py",
        "v2.json",
        "v2.py",
    ]
    # the next save continues the numbering instead of overwriting v2
    assert "Saved greet v3" in save(executor, code=GREET_V2).output
    # replaced versions do not pile up in sys.modules
    assert first_module not in sys.modules
    assert executor.toolkit.get("greet").module in sys.modules


def test_a_restart_picks_up_the_live_version(executor, home):
    save(executor)
    save(executor, code=GREET_V2)
    call(executor, "toolkit_rollback", name="greet", version=1)

    fresh = Toolkit.load(["selfmade"])
    report = sync_user_tools(fresh, home)
    assert (report.loaded, report.errors) == (["greet"], {})
    assert fresh.get("greet").func(None, who="Bo") == "v1 hello Bo"
    assert fresh.get("greet").mutates is True


def test_list_versions_without_a_name_lists_all_tools(executor, home):
    assert call(executor, "toolkit_list_versions").output == "You have no tools of your own yet."
    save(executor)
    write_tool(home, "handmade", "X = 1\n")
    listed = call(executor, "toolkit_list_versions").output
    assert "- greet v1: Greet someone." in listed
    assert "- handmade.py: hand-written module (not versioned)" in listed


def test_rollback_to_an_unknown_version_changes_nothing(executor):
    save(executor)
    result = call(executor, "toolkit_rollback", name="greet", version=7)
    assert not result.ok and "no version 7 (versions: v1)" in result.error
    assert call(executor, "greet", who="A").output == "v1 hello A"


def test_kwargs_tool_with_context(executor, workspace):
    (workspace / "notes.txt").write_text("one two three", encoding="utf-8")
    code = (
        "import json\n\n"
        "def _count(text):\n    return len(text.split())\n\n"
        "def count_words(ctx, **kw):\n"
        "    text = ctx.resolve(kw['path']).read_text()\n"
        "    return {'words': _count(text), 'unique': kw.get('unique', False)}\n"
    )
    schema = {
        "type": "object",
        "properties": {"path": {"type": "string"}, "unique": {"type": "boolean"}},
        "required": ["path"],
    }
    result = call(
        executor,
        "toolkit_save",
        name="count_words",
        description="Count words.",
        parameters=json.dumps(schema),  # models sometimes send the schema as a string
        code=code,
    )
    assert result.ok, result.error
    output = call(executor, "count_words", path="notes.txt", unique="true").output
    assert json.loads(output) == {"words": 3, "unique": True}


def test_save_without_a_live_toolkit_still_writes(home, workspace):
    toolkit = Toolkit.load(["selfmade"])
    executor = ToolExecutor(toolkit, ToolContext(workspace=workspace, home=home))
    result = save(executor)
    assert result.ok and "loads at the next start" in result.output
    assert toolkit.get("greet") is None
    assert (home / "tools" / "greet.py").is_file()


def test_saving_is_refused_in_read_only_mode(toolkit, home, workspace):
    context = ToolContext(workspace=workspace, home=home, approval="never")
    context.toolkit = toolkit
    result = save(ToolExecutor(toolkit, context))
    assert not result.ok and "read-only" in result.error
    assert not (home / "tools").exists()


# ---- refusals ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("toolkit_file", "reserved for built-in tools"),
        ("grep_stuff", "is a built-in tool"),
        ("Bad-Name", "is not valid"),
        ("class", "Python keyword"),
    ],
)
def test_names_that_clash_or_break_the_rules_are_refused(executor, home, name, message):
    code = f"def {name}(ctx, who):\n    return who\n" if name.isidentifier() else GREET_V1
    result = save(executor, name=name, code=code)
    assert not result.ok and message in result.error
    assert not (home / "tools").exists()
    assert call(executor, "grep_stuff").output == "built-in"


@pytest.mark.parametrize(
    ("code", "schema", "message"),
    [
        ("def greet(ctx, who, loud=False):\n    return who\n", None, "['loud'] of greet()"),
        (GREET_V1, {**GREET_SCHEMA, "properties": {"who": {}, "x": {}}}, "['x'] are not"),
        (GREET_V1, {"type": "object", "properties": {"who": {}}}, "must be listed in"),
        (GREET_V1, {**GREET_SCHEMA, "additionalProperties": True}, "no **kwargs"),
        (GREET_V1, {**GREET_SCHEMA, "properties": {"who": {"type": "str"}}}, "type must be"),
        (GREET_V1, {**GREET_SCHEMA, "required": ["nobody"]}, "not in parameters.properties"),
        (GREET_V1, {"type": "array"}, "JSON schema object"),
        (GREET_V1, "{not json", "not valid JSON"),
    ],
)
def test_schema_mismatches_are_refused(executor, home, code, schema, message):
    result = save(executor, code=code, parameters=schema)
    assert not result.ok
    assert message in result.error
    assert not (home / "tools").exists()


@pytest.mark.parametrize(
    ("code", "message"),
    [
        ("def greet(ctx, who)\n    return who\n", "syntax error in greet.py at line 1"),
        ("def hello(ctx, who):\n    return who\n", "must define a top-level function"),
        ("async def greet(ctx, who):\n    return who\n", "not async def"),
        ("def greet(context, who):\n    return who\n", "must be `ctx`"),
        ("def greet(ctx, *who):\n    return who\n", "must not take *who"),
        (GREET_V1 + "\ndef helper():\n    pass\n", "leading underscore: helper"),
        (GREET_V1 + GREET_V2, "defined more than once"),
        (f"import {MISSING_MODULE}\n" + GREET_V1, f"'{MISSING_MODULE}' is not installed"),
        ("raise RuntimeError('boom at import')\n" + GREET_V1, "RuntimeError: boom at import"),
        ("import sys\nsys.exit(3)\n" + GREET_V1, "SystemExit: 3"),
    ],
)
def test_bad_code_is_refused_and_nothing_is_saved(executor, home, code, message):
    modules_before = set(sys.modules)
    result = save(executor, code=code)
    assert not result.ok
    assert message in result.error
    assert not (home / "tools").exists()
    assert executor.toolkit.get("greet") is None
    assert not [m for m in set(sys.modules) - modules_before if m.startswith(USER_MODULE_PREFIX)]


def test_missing_import_is_reported_never_installed(executor):
    result = save(executor, code=f"from {MISSING_MODULE}.sub import thing\n" + GREET_V1)
    assert "install it yourself" in result.error
    assert "never install" in result.error


def test_a_failed_upgrade_keeps_the_working_version(executor):
    save(executor)
    broken = save(executor, code="def greet(ctx, who):\n    return 1/0 +\n")
    assert not broken.ok
    assert call(executor, "greet", who="A").output == "v1 hello A"
    assert "live version v1" in call(executor, "toolkit_list_versions", name="greet").output


def test_a_hand_written_module_name_is_not_taken_over(executor, home):
    write_tool(home, "greet", "X = 1\n")
    result = save(executor)
    assert not result.ok and "was not made by toolkit_save" in result.error


def test_validate_tool_code_accepts_keyword_only_and_defaults():
    code = "def t(ctx, /, a, *, b, c=1, **rest):\n    return a\n"
    schema = {
        "type": "object",
        "properties": {"a": {}, "b": {}, "c": {}, "extra": {}},
        "required": ["a", "b"],
    }
    entry = validate_tool_code("t", code, schema)
    assert (entry.params, entry.no_default, entry.var_keyword) == (
        ("a", "b", "c"),
        ("a", "b"),
        True,
    )
    with pytest.raises(UserToolError, match=r"\['b'\] have no default"):
        validate_tool_code("t", code, {**schema, "required": ["a"]})


# ---- loading from the directory, hot reload --------------------------------------------------


HANDMADE = (
    "from tea_agent_mini import tool\n\n"
    "@tool('shout', 'Shout.', {'type': 'object', 'properties': {'text': {'type': 'string'}},"
    " 'required': ['text']})\n"
    "def shout(ctx, text):\n    return text.upper() + '{suffix}'\n"
)


def test_broken_files_are_reported_and_never_break_the_others(home):
    meta = {"name": "greet", "description": "Greet.", "parameters": GREET_SCHEMA, "version": 1}
    write_tool(home, "greet", GREET_V1, meta)
    write_tool(home, "handmade", HANDMADE.replace("{suffix}", "!"))
    write_tool(home, "a_syntax", "def a_syntax(ctx:\n", {**meta, "name": "a_syntax"})
    write_tool(home, "b_raises", "raise ValueError('nope')\n")
    write_tool(home, "c_missing", f"import {MISSING_MODULE}\n")
    # inside a try block the import escapes the static check and fails while loading
    write_tool(home, "d_missing_lazy", f"try:\n    import {MISSING_MODULE}\nfinally:\n    pass\n")
    write_tool(home, "e_no_tool", "X = 1\n")
    write_tool(home, "f_bad_meta", "def f_bad_meta(ctx):\n    pass\n")
    (home / "tools" / "f_bad_meta.json").write_text("{broken", encoding="utf-8")
    write_tool(home, "z_dup", HANDMADE.replace("{suffix}", "?"))
    write_tool(home, "_private", "raise SystemExit\n")

    specs, errors = load_user_tools(home)

    assert sorted(s.name for s in specs) == ["greet", "shout"]
    assert "syntax error in a_syntax.py at line 1" in errors["a_syntax"]
    assert "ValueError: nope" in errors["b_raises"]
    assert f"'{MISSING_MODULE}' is not installed; install it yourself" in errors["c_missing"]
    assert f"'{MISSING_MODULE}' is not installed" in errors["d_missing_lazy"]
    assert "defines no tool" in errors["e_no_tool"]
    assert "f_bad_meta.json is not valid tool metadata" in errors["f_bad_meta"]
    assert "already defined by handmade.py" in errors["z_dup"]
    assert set(errors) == {
        "a_syntax",
        "b_raises",
        "c_missing",
        "d_missing_lazy",
        "e_no_tool",
        "f_bad_meta",
        "z_dup",
    }
    greet = next(s for s in specs if s.name == "greet")
    assert greet.func(None, who="Z") == "v1 hello Z"


def test_sync_registers_good_tools_and_records_errors(toolkit, home):
    write_tool(home, "handmade", HANDMADE.replace("{suffix}", "!"))
    write_tool(home, "broken", "raise ValueError('nope')\n")
    write_tool(
        home,
        "shadow",
        "from tea_agent_mini import tool\n\n"
        "@tool('toolkit_file', 'Fake.', {'type': 'object'})\n"
        "def fake(ctx):\n    return 'fake'\n",
    )
    builtin = toolkit.get("toolkit_file")

    report = sync_user_tools(toolkit, home)

    assert report.loaded == ["shout"]
    assert "would shadow the built-in" in report.errors["shadow"]
    assert toolkit.get("toolkit_file") is builtin
    assert "ValueError: nope" in toolkit.load_errors["user tool broken"]
    assert toolkit.get("shout").func(None, text="hi") == "HI!"


def test_reload_picks_up_new_changed_and_deleted_files(executor, home):
    path = write_tool(home, "handmade", HANDMADE.replace("{suffix}", "!"))
    first = call(executor, "toolkit_reload")
    assert first.output == "loaded: shout"
    assert call(executor, "shout", text="a").output == "A!"

    again = call(executor, "toolkit_reload")
    assert again.output == "unchanged: shout"

    path.write_text(HANDMADE.replace("{suffix}", "?"), encoding="utf-8")  # same size
    touch_later(path)
    assert call(executor, "toolkit_reload").output == "reloaded: shout"
    assert call(executor, "shout", text="a").output == "A?"

    path.write_text("def broken(:\n", encoding="utf-8")
    touch_later(path)
    failed = call(executor, "toolkit_reload").output
    assert "failed handmade:" in failed and "the previously loaded version stays" in failed
    assert call(executor, "shout", text="a").output == "A?"

    path.unlink()
    assert call(executor, "toolkit_reload").output == "removed: shout"
    assert executor.toolkit.get("shout") is None
    assert "user tool handmade" not in executor.toolkit.load_errors


def test_hand_edit_of_a_saved_tool_is_hot_reloaded(executor, home):
    save(executor)
    path = home / "tools" / "greet.py"
    path.write_text(GREET_V2, encoding="utf-8")
    touch_later(path)
    assert call(executor, "toolkit_reload").output == "reloaded: greet"
    assert call(executor, "greet", who="C").output == "v2 howdy C"


def test_a_name_defined_by_another_user_file_is_refused(executor, home):
    write_tool(home, "handmade", HANDMADE.replace("{suffix}", "!"))
    call(executor, "toolkit_reload")
    code = "def shout(ctx, who):\n    return who\n"
    result = save(executor, name="shout", code=code)
    assert not result.ok and "already defined by handmade.py" in result.error
    assert call(executor, "shout", text="a").output == "A!"
