from __future__ import annotations

from pathlib import Path

import pytest

from tea_agent_mini.errors import ToolError, WorkspaceError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.tools.files.edit import toolkit_apply_patch, toolkit_edit
from tea_agent_mini.tools.files.patch import find_block, parse_patch

SOURCE = """def greet(name):
    print("hello", name)


def main():
    greet("world")
    greet("tea")
"""


@pytest.fixture
def ctx(workspace: Path, tea_home: Path) -> ToolContext:
    return ToolContext(workspace=workspace, home=tea_home)


@pytest.fixture
def source(workspace: Path) -> Path:
    path = workspace / "app.py"
    path.write_text(SOURCE)
    return path


# ---- toolkit_edit --------------------------------------------------------------------------


def test_a_unique_match_is_replaced(ctx, source):
    out = toolkit_edit(ctx, "app.py", 'print("hello", name)', 'print("hi", name)')
    assert "replaced 1 occurrence (first at line 2)" in out
    assert source.read_text() == SOURCE.replace('"hello"', '"hi"')


def test_several_matches_need_replace_all(ctx, source):
    with pytest.raises(ToolError, match=r"occurs 2 times .*lines 6, 7"):
        toolkit_edit(ctx, "app.py", 'greet("', 'welcome("')
    assert source.read_text() == SOURCE
    out = toolkit_edit(ctx, "app.py", 'greet("', 'welcome("', replace_all=True)
    assert "replaced 2 occurrences" in out
    assert source.read_text().count('welcome("') == 2


def test_no_match_names_the_closest_line(ctx, source):
    with pytest.raises(
        ToolError, match=r"not found.*closest line is 2: .*print\(\"hello\", name\)"
    ):
        toolkit_edit(ctx, "app.py", 'print("helo", name)', "x")
    assert source.read_text() == SOURCE


def test_no_match_in_a_small_file_shows_its_text_and_in_a_big_one_asks_to_read_it(
    ctx, source, workspace
):
    with pytest.raises(ToolError) as caught:
        toolkit_edit(ctx, "app.py", "assert median([4, 1]) == 2.5", "x")
    assert str(caught.value).endswith(
        f"Its whole text is:\n{SOURCE.rstrip()}\nCopy old_string from it exactly."
    )
    (workspace / "big.py").write_text("".join(f"x{i} = {i}\n" for i in range(100)))
    with pytest.raises(ToolError, match=r"not found in 'big.py'\. Read the file again"):
        toolkit_edit(ctx, "big.py", "assert median([4, 1]) == 2.5", "x")


def test_no_match_explains_whitespace_differences(ctx, source):
    with pytest.raises(ToolError, match="matches if whitespace is ignored"):
        toolkit_edit(ctx, "app.py", 'def main():\n  greet("world")', "x")


def test_empty_old_string_creates_a_new_file(ctx, workspace):
    out = toolkit_edit(ctx, "pkg/new.py", "", "x = 1\ny = 2\n")
    assert "created pkg/new.py (2 lines)" in out
    assert (workspace / "pkg/new.py").read_text() == "x = 1\ny = 2\n"


def test_empty_old_string_on_an_existing_file_is_refused(ctx, source):
    with pytest.raises(ToolError, match="already exists"):
        toolkit_edit(ctx, "app.py", "", "boom")
    assert source.read_text() == SOURCE


def test_crlf_files_match_lf_old_strings_and_stay_crlf(ctx, workspace):
    path = workspace / "win.txt"
    path.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    toolkit_edit(ctx, "win.txt", "two\nthree", "2\n3")
    assert path.read_bytes() == b"one\r\n2\r\n3\r\n"


def test_edit_refuses_missing_files_same_text_and_escapes(ctx, source):
    with pytest.raises(ToolError, match="does not exist"):
        toolkit_edit(ctx, "missing.py", "a", "b")
    with pytest.raises(ToolError, match="the same"):
        toolkit_edit(ctx, "app.py", "greet", "greet")
    with pytest.raises(WorkspaceError):
        toolkit_edit(ctx, "../elsewhere.py", "", "x")


# ---- toolkit_apply_patch -------------------------------------------------------------------

MULTI = """diff --git a/app.py b/app.py
--- a/app.py
+++ b/app.py
@@ -1,2 +1,2 @@
 def greet(name):
-    print("hello", name)
+    print("hi", name)
@@ -5,3 +5,4 @@
 def main():
     greet("world")
     greet("tea")
+    greet("patch")
--- /dev/null
+++ b/docs/notes.md
@@ -0,0 +1,2 @@
+# Notes
+created by a patch
--- a/old.txt
+++ /dev/null
@@ -1,2 +0,0 @@
-obsolete
-file
"""


def test_a_multi_file_patch_is_applied(ctx, workspace, source):
    (workspace / "old.txt").write_text("obsolete\nfile\n")
    out = toolkit_apply_patch(ctx, MULTI)
    assert "Applied patch to 3 files" in out
    assert "M app.py (+2 -1)" in out and "A docs/notes.md (+2)" in out and "D old.txt (-2)" in out
    expected = SOURCE.replace('"hello"', '"hi"') + '    greet("patch")\n'
    assert source.read_text() == expected
    assert (workspace / "docs/notes.md").read_text() == "# Notes\ncreated by a patch\n"
    assert not (workspace / "old.txt").exists()


def test_a_bad_hunk_leaves_every_file_untouched(ctx, workspace, source):
    (workspace / "old.txt").write_text("obsolete\nfile\n")
    bad = MULTI.replace('     greet("tea")\n', '     greet("coffee")\n')
    with pytest.raises(ToolError) as info:
        toolkit_apply_patch(ctx, bad)
    message = str(info.value)
    assert "no file was changed" in message and "app.py: hunk 2" in message
    assert "at line 7 the patch expects '    greet(\"coffee\")'" in message
    assert source.read_text() == SOURCE
    assert not (workspace / "docs").exists()
    assert (workspace / "old.txt").exists()


def test_wrong_line_numbers_and_counts_are_tolerated(ctx, source):
    patch = """--- app.py
+++ app.py
@@ -40,9 +40,9 @@
 def main():
-    greet("world")
+    greet("earth")
"""
    toolkit_apply_patch(ctx, patch)
    assert 'greet("earth")' in source.read_text()
    assert 'greet("world")' not in source.read_text()


def test_hunks_without_numbers_are_located_by_context(ctx, source):
    patch = '--- a/app.py\n+++ b/app.py\n@@\n def main():\n-    greet("world")\n'
    toolkit_apply_patch(ctx, patch)
    assert 'greet("world")' not in source.read_text()


def test_creating_an_existing_file_is_refused(ctx, source):
    patch = "--- /dev/null\n+++ b/app.py\n@@ -0,0 +1 @@\n+new\n"
    with pytest.raises(ToolError, match="already exists"):
        toolkit_apply_patch(ctx, patch)
    assert source.read_text() == SOURCE


def test_no_newline_markers_and_crlf(ctx, workspace):
    path = workspace / "crlf.txt"
    path.write_bytes(b"a\r\nb\r\nc")
    patch = (
        "--- a/crlf.txt\n+++ b/crlf.txt\n@@ -2,2 +2,2 @@\n b\n-c\n"
        "\\ No newline at end of file\n+C\n"
    )
    toolkit_apply_patch(ctx, patch)
    assert path.read_bytes() == b"a\r\nb\r\nC\r\n"


def test_a_rename_with_changes(ctx, workspace):
    (workspace / "before.txt").write_text("one\ntwo\n")
    patch = "--- a/before.txt\n+++ b/after/after.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n"
    assert "R after/after.txt" in toolkit_apply_patch(ctx, patch)
    assert not (workspace / "before.txt").exists()
    assert (workspace / "after/after.txt").read_text() == "one\n2\n"


@pytest.mark.parametrize(
    "patch",
    ["just some prose", "--- a/x\n+++ b/x\n", "@@ -1 +1 @@\n-a\n+b\n"],
    ids=["prose", "no-hunks", "hunk-without-header"],
)
def test_not_a_patch(ctx, patch):
    with pytest.raises(ToolError):
        toolkit_apply_patch(ctx, patch)


def test_patches_cannot_escape_the_workspace(ctx, tmp_path):
    patch = "--- /dev/null\n+++ b/../escaped.txt\n@@ -0,0 +1 @@\n+x\n"
    with pytest.raises(WorkspaceError):
        toolkit_apply_patch(ctx, patch)
    assert not (tmp_path / "escaped.txt").exists()


def test_parse_patch_reads_counts_and_paths():
    patches = parse_patch(MULTI)
    assert [(p.old_path, p.new_path) for p in patches] == [
        ("app.py", "app.py"),
        (None, "docs/notes.md"),
        ("old.txt", None),
    ]
    assert [len(h.lines) for h in patches[0].hunks] == [3, 4]


def test_find_block_prefers_the_nearest_match():
    lines = ["x", "a", "b", "x", "a", "b"]
    assert find_block(lines, ["a", "b"], expected=4) == 4
    assert find_block(lines, ["a", "b"], expected=0) == 1
    assert find_block(lines, ["a  ", "b"], expected=0) == 1  # trailing whitespace drift
    assert find_block(lines, ["q"], expected=0) is None
