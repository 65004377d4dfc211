from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tea_agent_mini.errors import ToolError, WorkspaceError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.executor import ToolExecutor
from tea_agent_mini.toolkit.registry import Toolkit
from tea_agent_mini.tools.files import undo
from tea_agent_mini.tools.files.diffs import toolkit_diff, toolkit_diff_edit, unified_diff
from tea_agent_mini.tools.files.patch import parse_patch
from tea_agent_mini.types import ToolCall, ToolResult

APP = "def add(a, b):\n    return a + b\n\n\nprint(add(1, 2))\n"


@pytest.fixture
def ctx(workspace: Path, tea_home: Path) -> ToolContext:
    return ToolContext(workspace=workspace, home=tea_home)


@pytest.fixture
def app(workspace: Path) -> Path:
    path = workspace / "app.py"
    path.write_text(APP)
    return path


# ---- toolkit_diff_edit ---------------------------------------------------------------------


def test_diff_edit_preview_shows_and_writes_nothing(ctx, app):
    out = toolkit_diff_edit(ctx, "app.py", "a + b", "a - b", preview=True)
    assert "preview only" in out and "(+1 -1)" in out
    assert "-    return a + b\n+    return a - b" in out
    assert app.read_text() == APP


def test_diff_edit_applies_and_can_be_undone(ctx, app):
    out = toolkit_diff_edit(ctx, "app.py", "a + b", "a - b")
    assert out.startswith("edited app.py (+1 -1)") and "--- a/app.py" in out
    assert app.read_text() == APP.replace("a + b", "a - b")
    assert "undid 'diff_edit app.py'" in toolkit_diff(ctx, "undo")
    assert app.read_text() == APP


def test_diff_edit_keeps_crlf(ctx, workspace):
    path = workspace / "win.txt"
    path.write_bytes(b"one\r\ntwo\r\n")
    toolkit_diff_edit(ctx, "win.txt", "one\ntwo", "one\nzwei")
    assert path.read_bytes() == b"one\r\nzwei\r\n"


@pytest.mark.parametrize(
    ("old", "message"),
    [("a * b", "not found"), ("add(", r"occurs 2 times .*lines 1, 5"), ("", "empty")],
)
def test_diff_edit_refuses_unclear_edits(ctx, app, old, message):
    with pytest.raises(ToolError, match=message):
        toolkit_diff_edit(ctx, "app.py", old, "x")
    assert app.read_text() == APP


# ---- toolkit_diff --------------------------------------------------------------------------


def test_generate_apply_undo_round_trip(ctx, workspace, app):
    new_app = APP.replace("print(add(1, 2))", "print(add(2, 3))\nprint('done')")
    patch = toolkit_diff(
        ctx,
        "generate",
        files=[
            {"file_path": "app.py", "new_content": new_app},
            {"file_path": "pkg/new.py", "new_content": "X = 1"},  # no final newline
        ],
    )
    assert "--- a/app.py" in patch and "--- /dev/null" in patch and "+++ b/pkg/new.py" in patch
    assert "\\ No newline at end of file" in patch
    assert app.read_text() == APP and not (workspace / "pkg").exists()  # generate writes nothing

    preview = toolkit_diff(ctx, "preview", patch=patch)
    assert preview.startswith("preview, nothing written:\nWould change 2 files:")
    assert "M app.py" in preview and "A pkg/new.py" in preview
    assert app.read_text() == APP

    applied = toolkit_diff(ctx, "apply", patch=patch)
    assert "Applied patch to 2 files" in applied and "undo" in applied
    assert app.read_text() == new_app
    assert (workspace / "pkg/new.py").read_text() == "X = 1"

    undone = toolkit_diff(ctx, "undo")
    assert "restored app.py" in undone and "removed pkg/new.py" in undone
    assert app.read_text() == APP
    assert not (workspace / "pkg/new.py").exists()
    with pytest.raises(ToolError, match="nothing to undo"):
        toolkit_diff(ctx, "undo")


def test_apply_files_with_replacements_and_undo_stack(ctx, workspace, app):
    (workspace / "b.txt").write_text("b1\nb2\n")
    toolkit_diff(ctx, "apply", files=[{"file_path": "b.txt", "new_content": "B\n"}])
    toolkit_diff(
        ctx,
        "apply",
        files=[
            {"file_path": "app.py", "old_string": "a + b", "new_string": "b + a"},
            {"file_path": "app.py", "old_string": "add(1, 2)", "new_string": "add(5, 6)"},
        ],
    )
    assert "b + a" in app.read_text() and "add(5, 6)" in app.read_text()
    out = toolkit_diff(ctx, "undo")
    assert "1 earlier step(s) can still be undone" in out
    assert app.read_text() == APP and (workspace / "b.txt").read_text() == "B\n"
    toolkit_diff(ctx, "undo")
    assert (workspace / "b.txt").read_text() == "b1\nb2\n"


def test_a_failing_entry_writes_no_file(ctx, workspace, app):
    (workspace / "other.txt").write_text("keep\n")
    with pytest.raises(ToolError, match="not found"):
        toolkit_diff(
            ctx,
            "apply",
            files=[
                {"file_path": "other.txt", "new_content": "changed\n"},
                {"file_path": "app.py", "old_string": "missing text", "new_string": "x"},
            ],
        )
    assert (workspace / "other.txt").read_text() == "keep\n"
    assert app.read_text() == APP


def test_undo_refuses_when_the_file_changed_since(ctx, app):
    toolkit_diff(ctx, "apply", files=[{"file_path": "app.py", "new_content": "v2\n"}])
    app.write_text("edited by hand\n")
    with pytest.raises(ToolError, match="changed after"):
        toolkit_diff(ctx, "undo")
    assert app.read_text() == "edited by hand\n"
    toolkit_diff(ctx, "undo", force=True)
    assert app.read_text() == APP


def test_generate_between_two_files(ctx, workspace):
    (workspace / "old.txt").write_text("a\nb\nc\n")
    (workspace / "new.txt").write_text("a\nB\nc")
    out = toolkit_diff(ctx, "generate", from_file="old.txt", to_file="new.txt")
    assert out.startswith("--- a/old.txt\n+++ b/new.txt\n")
    assert "-b\n-c\n+B\n+c\n\\ No newline at end of file" in out
    same = toolkit_diff(ctx, "generate", from_file="old.txt", to_file="old.txt")
    assert "identical" in same


def test_patch_outside_workspace_is_refused(ctx, workspace):
    patch = "--- /dev/null\n+++ b/../evil.txt\n@@ -0,0 +1 @@\n+x\n"
    with pytest.raises(WorkspaceError):
        toolkit_diff(ctx, "apply", patch=patch)
    assert not (workspace.parent / "evil.txt").exists()


def test_unified_diff_parses_back():
    diff = unified_diff("x\ny\nz", "x\nY\nz", "f.txt")
    (patch,) = parse_patch(diff)
    assert (patch.old_path, patch.new_path) == ("f.txt", "f.txt")
    assert patch.hunks[0].new_lines == ["x", "Y", "z"]
    assert patch.hunks[0].no_newline_old and patch.hunks[0].no_newline_new


# ---- through the executor ------------------------------------------------------------------

MODULES = [
    "files.savefile",
    "files.diffs",
    "files.batch",
    "dev.formatting",
    "dev.codereview",
    "dev.testrun",
    "git.git",
    "dev.project",
]


def test_the_tool_modules_load_cleanly():
    toolkit = Toolkit.load([*MODULES, "dev.release"])
    assert toolkit.load_errors == {}
    assert len(toolkit.names()) == 12


def test_read_only_mode_allows_generate_but_not_apply(workspace, tea_home, app):
    ctx = ToolContext(workspace=workspace, home=tea_home, approval="never")
    executor = ToolExecutor(Toolkit.load(["files.diffs"]), ctx)
    files = [{"file_path": "app.py", "old_string": "a + b", "new_string": "a * b"}]

    def call(action: str) -> ToolResult:
        arguments = json.dumps({"action": action, "files": files})
        return asyncio.run(executor.run(ToolCall("1", "toolkit_diff", arguments)))

    generated = call("generate")
    assert generated.ok and "+    return a * b" in generated.output
    refused = call("apply")
    assert not refused.ok and "read-only mode" in refused.error
    assert app.read_text() == APP


def test_the_undo_stack_is_bounded(ctx, workspace, app, monkeypatch):
    monkeypatch.setattr(undo, "MAX_STACK_BYTES", len(APP) + 10)
    toolkit_diff(ctx, "apply", files=[{"file_path": "app.py", "new_content": "v2\n"}])
    toolkit_diff(ctx, "apply", files=[{"file_path": "app.py", "new_content": "v3\n"}])
    assert "0 earlier step(s)" not in toolkit_diff(ctx, "undo")
    assert app.read_text() == "v2\n"
    with pytest.raises(ToolError, match="nothing to undo"):
        toolkit_diff(ctx, "undo")  # the oldest step was dropped to stay within the bound
    monkeypatch.setattr(undo, "MAX_SNAPSHOT_BYTES", 1)
    out = toolkit_diff(ctx, "apply", files=[{"file_path": "app.py", "new_content": "v4\n"}])
    assert "no undo snapshot" in out and app.read_text() == "v4\n"
