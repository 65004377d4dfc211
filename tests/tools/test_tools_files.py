from __future__ import annotations

from pathlib import Path

import pytest

from tea_agent_mini.errors import ToolError, WorkspaceError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.tools.files import files
from tea_agent_mini.tools.files.files import toolkit_file


@pytest.fixture
def ctx(workspace: Path, tea_home: Path) -> ToolContext:
    return ToolContext(workspace=workspace, home=tea_home)


def test_write_creates_parents_then_read_returns_the_exact_text(ctx, workspace):
    text = "line one\nzwei\r\n茶\n"
    message = toolkit_file(ctx, "write", filename="deep/er/file.txt", content=text)
    assert "created" in message and "deep/er/file.txt" in message
    assert (workspace / "deep/er/file.txt").read_bytes() == text.encode()
    assert toolkit_file(ctx, "read", filename="deep/er/file.txt") == text


def test_append_adds_to_the_end(ctx, workspace):
    toolkit_file(ctx, "write", filename="log.txt", content="a\n")
    assert "appended" in toolkit_file(ctx, "append", filename="log.txt", content="b\n")
    toolkit_file(ctx, "append", filename="new/log2.txt", content="c")
    assert (workspace / "log.txt").read_text() == "a\nb\n"
    assert (workspace / "new/log2.txt").read_text() == "c"


def test_write_needs_content_and_empty_content_is_fine(ctx, workspace):
    with pytest.raises(ToolError, match="needs 'content'"):
        toolkit_file(ctx, "write", filename="x.txt")
    toolkit_file(ctx, "write", filename="empty.txt", content="")
    assert (workspace / "empty.txt").read_text() == ""


def test_read_a_window_says_how_many_lines_there_are(ctx, workspace):
    (workspace / "long.txt").write_text("".join(f"{i}\n" for i in range(1, 101)))
    out = toolkit_file(ctx, "read", filename="long.txt", offset=10, limit=3)
    assert out.startswith("10\n11\n12\n")
    assert "[showing lines 10-12 of 100; continue with offset=13]" in out
    end = toolkit_file(ctx, "read", filename="long.txt", offset=99, limit=10)
    assert end.startswith("99\n100\n") and "of 100" in end and "continue" not in end
    past = toolkit_file(ctx, "read", filename="long.txt", offset=500)
    assert "past the end" in past


def test_a_whole_long_file_ends_with_its_line_count_and_a_short_one_is_returned_as_is(
    ctx, workspace
):
    (workspace / "long.txt").write_text("".join(f"{i}\n" for i in range(1, 76)))
    (workspace / "short.txt").write_text("a\nb\n")
    out = toolkit_file(ctx, "read", filename="long.txt")
    assert out.endswith("\n75\n[end of file: 75 lines]")
    assert toolkit_file(ctx, "read", filename="short.txt") == "a\nb\n"


def test_read_stops_at_the_character_cap(ctx, workspace, monkeypatch):
    monkeypatch.setattr(files, "MAX_READ_CHARS", 50)
    (workspace / "wide.txt").write_text("".join(f"{i:09d}\n" for i in range(20)))
    out = toolkit_file(ctx, "read", filename="wide.txt")
    assert out.count("\n") == 5  # five 10-character lines and the note
    assert "showing lines 1-5 of 20; stopped at 50 characters; continue with offset=6" in out


def test_binary_files_are_refused(ctx, workspace):
    (workspace / "blob.bin").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(200))
    with pytest.raises(ToolError, match="binary"):
        toolkit_file(ctx, "read", filename="blob.bin")


@pytest.mark.parametrize(
    ("sample", "binary"),
    [
        (b"plain text\n", False),
        ("茶".encode() * 10, False),
        ("茶".encode()[:2], False),  # a character cut by the sample's end
        (b"a\x00b", True),
        (bytes(range(1, 9)) * 20, True),
        ("café".encode("latin-1"), False),
    ],
    ids=["text", "utf8", "cut-utf8", "nul", "controls", "latin1"],
)
def test_is_binary(sample, binary):
    assert files.is_binary(sample) is binary


def test_read_missing_or_directory(ctx, workspace):
    with pytest.raises(ToolError, match="does not exist"):
        toolkit_file(ctx, "read", filename="nope.txt")
    (workspace / "d").mkdir()
    with pytest.raises(ToolError, match="directory"):
        toolkit_file(ctx, "read", filename="d")


def test_list_marks_directories_and_can_recurse(ctx, workspace):
    (workspace / "src/pkg").mkdir(parents=True)
    (workspace / "src/pkg/mod.py").write_text("x = 1\n")
    (workspace / "README.md").write_text("hi")
    (workspace / "node_modules/lib").mkdir(parents=True)
    (workspace / "node_modules/lib/index.js").write_text("")
    flat = toolkit_file(ctx, "list")
    assert "node_modules/\nsrc/\nREADME.md  (2 B)" in flat
    assert "mod.py" not in flat
    deep = toolkit_file(ctx, "list", path=".", recursive=True)
    assert "src/pkg/\nsrc/pkg/mod.py  (6 B)" in deep
    assert "node_modules/  (not expanded)" in deep and "index.js" not in deep


def test_list_is_bounded(ctx, workspace, monkeypatch):
    monkeypatch.setattr(files, "MAX_LIST_ENTRIES", 5)
    for i in range(10):
        (workspace / f"f{i}.txt").write_text("")
    out = toolkit_file(ctx, "list")
    assert out.count(".txt") == 5 and "listing stopped at 5 entries" in out


@pytest.mark.parametrize("action", ["read", "write", "append"])
def test_escapes_are_refused(ctx, workspace, tmp_path, action):
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    (workspace / "link.txt").symlink_to(outside)
    for name in ("../outside.txt", "link.txt", str(outside)):
        with pytest.raises(WorkspaceError):
            toolkit_file(ctx, action, filename=name, content="pwned")
    assert outside.read_text() == "secret"


def test_listing_outside_is_refused(ctx):
    with pytest.raises(WorkspaceError):
        toolkit_file(ctx, "list", path="..")


def test_unknown_action_and_missing_filename(ctx):
    with pytest.raises(ToolError, match="needs 'filename'"):
        toolkit_file(ctx, "read")
    with pytest.raises(ToolError, match="unknown action"):
        toolkit_file(ctx, "delete", filename="x")
