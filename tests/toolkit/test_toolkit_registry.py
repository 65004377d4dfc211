from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from tea_agent_mini.toolkit.manifest import EXCLUDED, SHIPPED
from tea_agent_mini.toolkit.registry import Toolkit, ToolSpec, specs_in, tool

SCHEMA = {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}


def test_tool_decorator_keeps_the_function_and_builds_a_spec():
    @tool("demo_tool", "Does a demo.", SCHEMA, requires=("httpx",), concurrency_safe=True)
    def demo(ctx, x):
        return x * 2

    spec = demo.tool_spec
    assert demo(None, "ab") == "abab"
    assert spec.name == "demo_tool"
    assert spec.requires == ("httpx",)
    assert spec.concurrency_safe and not spec.mutates
    assert spec.module == __name__
    assert spec.openai_schema() == {
        "type": "function",
        "function": {"name": "demo_tool", "description": "Does a demo.", "parameters": SCHEMA},
    }


@pytest.mark.parametrize(
    ("name", "parameters"),
    [
        ("has space", SCHEMA),
        ("", SCHEMA),
        ("ok_name", {"type": "array"}),
        ("ok_name", {"type": "object", "properties": {}, "required": ["missing"]}),
    ],
)
def test_tool_decorator_rejects_bad_specs(name, parameters):
    with pytest.raises(ValueError):
        tool(name, "d", parameters)


def test_mutating_actions_make_only_some_calls_mutating():
    @tool("mixed", "d", {"type": "object", "properties": {}}, mutates=True, mutating_actions=["w"])
    def mixed(ctx, action="r"):
        return action

    spec = mixed.tool_spec
    assert spec.mutates_with({"action": "w"})
    assert not spec.mutates_with({"action": "r"})


def test_default_load_has_every_shipped_module_and_no_errors():
    toolkit = Toolkit.load()
    assert toolkit.load_errors == {}
    modules = {spec.module.removeprefix("tea_agent_mini.tools.") for spec in toolkit.specs()}
    assert modules == set(SHIPPED)
    assert not set(SHIPPED) & set(EXCLUDED)
    expected = {"toolkit_file", "toolkit_edit", "toolkit_apply_patch", "toolkit_exec"}
    expected |= {"toolkit_glob", "toolkit_grep", "toolkit_web_fetch", "toolkit_gettime"}
    expected |= {"toolkit_os_info", "toolkit_todo"}
    assert expected <= set(toolkit.names())  # the core tools; other families add more


def test_every_shipped_tool_has_a_complete_schema():
    for spec in Toolkit.load().specs():
        assert len(spec.description) > 40, spec.name
        properties = spec.parameters["properties"]
        for name, prop in properties.items():
            assert "type" in prop, f"{spec.name}.{name}"
            assert prop.get("description"), f"{spec.name}.{name}"


@pytest.fixture
def module_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [m for m in sys.modules if m.startswith("tk_test_")]:
        del sys.modules[name]


def write_module(directory: Path, name: str, body: str) -> str:
    """Write ``tk_test_pkg/<name>.py`` and return its dotted name (bare names are bundled)."""
    package = directory / "tk_test_pkg"
    package.mkdir(exist_ok=True)
    (package / "__init__.py").touch()
    (package / f"{name}.py").write_text(textwrap.dedent(body), encoding="utf-8")
    return f"tk_test_pkg.{name}"


def test_a_failing_module_does_not_break_the_others(module_dir: Path):
    broken = write_module(module_dir, "broken", "import no_such_package_here\n")
    good = write_module(
        module_dir,
        "good",
        """
        from tea_agent_mini.toolkit.registry import tool

        @tool("good_tool", "A good tool.", {"type": "object", "properties": {}})
        def good(ctx):
            return "ok"

        @tool("needy_tool", "Needs a package.", {"type": "object", "properties": {}},
              requires=("no_such_package_here",))
        def needy(ctx):
            return "never"
        """,
    )
    toolkit = Toolkit.load([broken, good, "files.files"])
    assert "good_tool" in toolkit.names()
    assert "toolkit_file" in toolkit.names()
    assert "needy_tool" not in toolkit.names()
    assert "ModuleNotFoundError" in toolkit.load_errors[broken]
    assert "no_such_package_here" in toolkit.load_errors[good]
    assert set(toolkit.load_errors) == {broken, good}


def test_register_refuses_duplicates_and_unregister_removes():
    toolkit = Toolkit.load(["system"])
    spec = toolkit.get("toolkit_gettime")
    assert isinstance(spec, ToolSpec)
    with pytest.raises(ValueError, match="already registered"):
        toolkit.register(spec)
    toolkit.unregister("toolkit_gettime")
    assert toolkit.get("toolkit_gettime") is None
    toolkit.register(spec)
    assert "toolkit_gettime" in toolkit.names()


def test_openai_tools_subset_in_the_given_order_skipping_unknown():
    toolkit = Toolkit.load(["system", "todo"])
    tools = toolkit.openai_tools(["toolkit_todo", "nope", "toolkit_gettime"])
    assert [t["function"]["name"] for t in tools] == ["toolkit_todo", "toolkit_gettime"]
    assert len(toolkit.openai_tools()) == 3


def test_specs_in_skips_tools_imported_from_elsewhere(module_dir: Path):
    name = write_module(module_dir, "reexport", "from tea_agent_mini.tools.system import *\n")
    import importlib

    module = importlib.import_module(name)
    assert specs_in(module) == []


def test_schemas_agree_with_the_function_signatures():
    import inspect

    for spec in Toolkit.load().specs():
        params = dict(inspect.signature(spec.func).parameters)
        assert list(params)[0] == "ctx", spec.name
        del params["ctx"]
        assert set(spec.parameters["properties"]) == set(params), spec.name
        needed = {name for name, p in params.items() if p.default is inspect.Parameter.empty}
        assert needed == set(spec.parameters.get("required", [])), spec.name
