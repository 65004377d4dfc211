"""toolkit_self_evolve: a change that breaks the tests is rolled back, one that passes stays.

The workspace is a git repository with a module and a test; pytest and ruff run for real (both
are in the test environment).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tea_agent_mini.errors import ToolError, WorkspaceError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.executor import ToolExecutor
from tea_agent_mini.toolkit.registry import Toolkit
from tea_agent_mini.tools.evolve.selfevolve import toolkit_self_evolve
from tea_agent_mini.tools.evolve.target import package_root
from tea_agent_mini.tools.selfmade import toolkit_save
from tea_agent_mini.types import ToolCall

CALC = "def add(a, b):\n    return a + b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
IDENTITY = ("-c", "user.name=t", "-c", "user.email=t@example.com")


def git(workspace: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *IDENTITY, "-C", str(workspace), *args], capture_output=True, text=True, check=True
    )
    return done.stdout


@pytest.fixture
def repo(workspace: Path) -> Path:
    (workspace / "calc.py").write_text(CALC)
    (workspace / "test_calc.py").write_text(TEST)
    git(workspace, "init", "-q")
    git(workspace, "add", "-A")
    git(workspace, "commit", "-q", "-m", "start")
    return workspace


@pytest.fixture
def ctx(repo: Path, tea_home: Path) -> ToolContext:
    return ToolContext(workspace=repo, home=tea_home)


def rolled_back(ctx: ToolContext, path: str, change, **kw) -> str:
    with pytest.raises(ToolError) as info:
        toolkit_self_evolve(ctx, path, change, **kw)
    return str(info.value)


def layers(report: str) -> dict[str, str]:
    """{layer: status} from a rendered report."""
    found = {}
    for line in report.splitlines():
        if line.startswith("- "):
            name, _, rest = line[2:].partition(": ")
            found[name] = rest.split(" - ")[0]
    return found


def test_a_change_that_breaks_the_tests_is_rolled_back(ctx, repo, tea_home):
    before = (repo / "calc.py").read_bytes()
    report = rolled_back(ctx, "calc.py", {"old": "a + b", "new": "a - b"})
    assert (repo / "calc.py").read_bytes() == before
    assert "rolled back: the tests check failed" in report
    assert layers(report) == {
        "snapshot": "ok",
        "backup": "ok",
        "apply": "ok",
        "syntax": "ok",
        "compile": "ok",
        "lint": "ok",
        "signatures": "ok",
        "tests": "failed",
        "rollback": "ok",
    }
    assert "test_calc.py::test_add" in report
    backups = list((tea_home / "backups" / "self_evolve").rglob("calc.py"))
    assert [b.read_bytes() for b in backups] == [before]
    assert git(repo, "status", "--porcelain") == ""


def test_a_change_that_passes_stays(ctx, repo):
    change = {"old": "    return a + b", "new": '    """The sum."""\n    return b + a'}
    report = toolkit_self_evolve(ctx, "calc.py", change)
    assert report.startswith("calc.py: the change is kept")
    assert (
        repo / "calc.py"
    ).read_text() == 'def add(a, b):\n    """The sum."""\n    return b + a\n'
    assert layers(report)["tests"] == "ok" and "1 passed" in report
    head = git(repo, "rev-parse", "HEAD").strip()
    assert f"HEAD {head[:12]} is the snapshot" in report
    assert "rollback" not in layers(report)


def test_a_syntax_error_is_rolled_back_at_the_syntax_layer(ctx, repo):
    report = rolled_back(ctx, "calc.py", {"old": "a + b", "new": "a +"})
    assert (repo / "calc.py").read_text() == CALC
    assert layers(report) == {
        "snapshot": "ok",
        "backup": "ok",
        "apply": "ok",
        "syntax": "failed",
        "rollback": "ok",
    }


def test_what_only_the_compiler_sees_fails_at_compile(ctx, repo):
    report = rolled_back(ctx, "calc.py", {"content": "x = 1\nreturn x\n"})
    assert layers(report)["syntax"] == "ok" and layers(report)["compile"] == "failed"
    assert "'return' outside function" in report
    assert (repo / "calc.py").read_text() == CALC
    assert not list(repo.rglob("*.pyc"))  # compiled to a temporary folder


def ruff_installed() -> bool:
    import shutil

    done = subprocess.run([sys.executable, "-m", "ruff", "--version"], capture_output=True)
    return shutil.which("ruff") is not None or done.returncode == 0


@pytest.mark.skipif(not ruff_installed(), reason="ruff is not installed")
def test_a_new_lint_finding_is_rolled_back(ctx, repo):
    (repo / "calc.py").write_text("import sys\n\n\n" + CALC)  # one finding there already (F401)
    report = rolled_back(ctx, "calc.py", {"old": "import sys", "new": "import os\nimport sys"})
    assert layers(report)["lint"] == "failed" and "F401 `os` imported but unused" in report
    assert "`sys`" not in report.split("lint:")[1].split("- rollback")[0]
    assert (repo / "calc.py").read_text() == "import sys\n\n\n" + CALC
    kept = toolkit_self_evolve(ctx, "calc.py", {"old": "a + b", "new": "b + a"})
    assert "lint: ok - ruff: no new findings (1 before)" in kept


def test_a_changed_signature_is_a_warning_naming_its_callers(ctx, repo):
    report = toolkit_self_evolve(ctx, "calc.py", {"old": "add(a, b)", "new": "add(a, b, c=0)"})
    assert "(read the warnings)" in report
    assert "signatures: warning - add(a, b) -> add(a, b, c=0); used in test_calc.py:1" in report


def test_a_unified_diff_and_a_whole_file_are_changes_too(ctx, repo):
    diff = "@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a + b\n+    return b + a\n"
    assert "kept" in toolkit_self_evolve(ctx, "calc.py", diff)
    assert (repo / "calc.py").read_text() == "def add(a, b):\n    return b + a\n"
    new = {"content": "def twice(x):\n    return 2 * x\n"}
    report = toolkit_self_evolve(ctx, "util.py", json.dumps(new))
    assert layers(report)["backup"] == "skipped" and (repo / "util.py").exists()
    with pytest.raises(ToolError, match="needs one of"):
        toolkit_self_evolve(ctx, "calc.py", {"new": "x"})


def test_a_dirty_tree_gets_no_git_snapshot_but_the_backup(ctx, repo):
    (repo / "test_calc.py").write_text(TEST + "\n")
    report = toolkit_self_evolve(ctx, "calc.py", {"old": "a + b", "new": "b + a"})
    assert layers(report)["snapshot"] == "skipped" and "uncommitted" in report
    assert layers(report)["backup"] == "ok"


def test_the_installed_package_is_refused(ctx, repo, tea_home):
    module = package_root() / "policy.py"
    before = module.read_bytes()
    outside = ToolContext(workspace=repo, home=tea_home, allow_outside_workspace=True)
    with pytest.raises(ToolError, match="never modified"):
        toolkit_self_evolve(outside, str(module), {"old": "auto", "new": "ask"})
    (repo / "policy.py").symlink_to(module)  # through a link inside the workspace
    with pytest.raises(ToolError, match="never modified"):
        toolkit_self_evolve(outside, "policy.py", {"old": "auto", "new": "ask"})
    with pytest.raises(WorkspaceError):  # confined: the link leads out of the workspace
        toolkit_self_evolve(ctx, "policy.py", {"old": "auto", "new": "ask"})
    assert module.read_bytes() == before


def test_the_agents_own_data_is_refused(ctx, tea_home):
    with pytest.raises(ToolError, match="tool file"):
        toolkit_self_evolve(ctx, "tool:nothing", {"content": "x = 1\n"})
    (tea_home / "config.yaml").write_text("agent: {}\n")
    outside = ToolContext(workspace=ctx.workspace, home=tea_home, allow_outside_workspace=True)
    with pytest.raises(ToolError, match="agent's own data"):
        toolkit_self_evolve(outside, str(tea_home / "config.yaml"), {"content": "x: 1\n"})


def run_call(executor: ToolExecutor, arguments: dict):
    call = ToolCall(id="c1", name="toolkit_self_evolve", arguments=json.dumps(arguments))
    return asyncio.run(executor.run(call))


def test_approval_never_refuses_and_ask_asks(repo, tea_home):
    toolkit = Toolkit.load(["evolve.selfevolve"])
    arguments = {"path": "calc.py", "change": {"old": "a + b", "new": "b + a"}}
    never = ToolExecutor(toolkit, ToolContext(workspace=repo, home=tea_home, approval="never"))
    result = run_call(never, arguments)
    assert not result.ok and "read-only mode" in (result.error or "")
    asked = []

    def decline(name, arguments_json):
        asked.append(name)
        return False

    context = ToolContext(workspace=repo, home=tea_home, approval="ask", approve=decline)
    result = run_call(ToolExecutor(toolkit, context), arguments)
    assert asked == ["toolkit_self_evolve"] and "declined" in (result.error or "")
    assert (repo / "calc.py").read_text() == CALC


def test_a_scripted_model_keeps_only_the_change_that_passes(model_config, scripted_server, repo):
    from tea_agent_mini.config import load_config
    from tea_agent_mini.runtime import Runtime
    from tests.fakes.scripted_server import Reply, ToolCallSpec

    def evolve(old: str, new: str) -> Reply:
        change = {"old": old, "new": new}
        return Reply(
            tool_calls=[ToolCallSpec("toolkit_self_evolve", {"path": "calc.py", "change": change})]
        )

    scripted_server.push(
        evolve("return a + b", "return a * b"),  # breaks test_add: rolled back
        evolve("return a + b", "return sum((a, b))"),  # passes: stays
        Reply(text="add() now uses sum()."),
    )

    async def turn():
        runtime = Runtime(load_config())
        try:
            session = runtime.session(follow_up=False)
            events = [event async for event in session.run_turn("rewrite add with sum()")]
            return events, runtime.store.messages.of_topic(session.topic_id)
        finally:
            await runtime.aclose()

    events, messages = asyncio.run(turn())
    assert events[-1].text == "add() now uses sum()."
    results = [(m.status, m.text) for m in messages if m.role == "tool"]
    assert [status for status, _ in results] == ["failed", "ok"]
    assert "rolled back: the tests check failed" in results[0][1]
    assert "the change is kept" in results[1][1]
    assert (repo / "calc.py").read_text() == "def add(a, b):\n    return sum((a, b))\n"


GREET_SCHEMA = {
    "type": "object",
    "properties": {"who": {"type": "string"}},
    "required": ["who"],
}


def test_a_tool_of_your_own_becomes_a_new_version_or_stays_as_it_was(workspace, tea_home):
    toolkit = Toolkit.load(["selfmade"])
    ctx = ToolContext(workspace=workspace, home=tea_home, toolkit=toolkit)
    code = "def greet(ctx, who):\n    return 'hello ' + who\n"
    toolkit_save(ctx, "greet", "Greet someone.", GREET_SCHEMA, code)
    report = toolkit_self_evolve(ctx, "tool:greet", {"old": "'hello '", "new": "'howdy '"})
    assert "reload: ok - saved as v2; reloaded in this session" in report
    assert layers(report)["tests"] == "skipped" and layers(report)["tool"] == "ok"
    assert toolkit.get("greet").func(ctx, who="x") == "howdy x"
    meta = json.loads((tea_home / "tools" / "greet.json").read_text())
    assert meta["version"] == 2
    # a change that breaks the tool's convention (a parameter the schema lacks) is undone
    live = (tea_home / "tools" / "greet.py").read_bytes()
    report = rolled_back(ctx, "tool:greet", {"old": "(ctx, who)", "new": "(ctx, who, extra)"})
    assert layers(report)["tool"] == "failed" and layers(report)["rollback"] == "ok"
    assert (tea_home / "tools" / "greet.py").read_bytes() == live
    assert json.loads((tea_home / "tools" / "greet.json").read_text())["version"] == 2
    assert toolkit.get("greet").func(ctx, who="y") == "howdy y"
