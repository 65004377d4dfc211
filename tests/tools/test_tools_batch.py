from __future__ import annotations

import os
from pathlib import Path

import pytest

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.tools.files.batch import toolkit_batch_process
from tea_agent_mini.tools.files.diffs import toolkit_diff


@pytest.fixture
def ctx(workspace: Path, tea_home: Path) -> ToolContext:
    return ToolContext(workspace=workspace, home=tea_home)


@pytest.fixture
def tree(workspace: Path) -> dict[str, bytes]:
    files = {
        "a.py": b"import os\nold_name = 1\nprint(old_name)\n",
        "pkg/b.py": b"# old_name here\nx = old_name + old_name\n",
        "pkg/notes.md": b"old_name in docs\n",
        "ignored/c.py": b"old_name\n",
        "build.log": b"old_name\n",
        "data.bin": b"old_name\x00\x01\x02",
        "latin1.py": "old_name = 'caf\xe9'\n".encode("latin-1"),
        ".gitignore": b"ignored/\n*.log\n",
    }
    for name, data in files.items():
        path = workspace / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return files


def test_count_honours_glob_gitignore_and_skips_binaries(ctx, tree):
    out = toolkit_batch_process(ctx, "count", glob="*.py", pattern="old_name")
    assert out.startswith("5 match(es) of 'old_name' in 2 of 2 file(s)")
    assert "     2  a.py" in out and "     3  pkg/b.py" in out
    assert "ignored/c.py" not in out and "build.log" not in out
    assert "skipped 1 file(s): latin1.py (not UTF-8)" in out
    everything = toolkit_batch_process(ctx, "count", pattern="old_name")
    assert "data.bin (binary)" in everything and "pkg/notes.md" in everything


def test_replace_dry_run_then_real_then_undo(ctx, workspace, tree):
    dry = toolkit_batch_process(
        ctx, "replace", glob="**/*.py", pattern="old_name", replacement="new_name"
    )
    assert dry.startswith("dry run: would replace 5 occurrence(s) in 2 file(s)")
    assert "\n-old_name = 1\n-print(old_name)\n+new_name = 1\n+print(new_name)\n" in dry
    assert "nothing was written" in dry
    assert (workspace / "a.py").read_bytes() == tree["a.py"]

    real = toolkit_batch_process(
        ctx, "replace", glob="**/*.py", pattern="old_name", replacement="new_name", dry_run=False
    )
    assert real.startswith("replaced 5 occurrence(s) in 2 file(s)")
    assert (workspace / "a.py").read_text() == "import os\nnew_name = 1\nprint(new_name)\n"
    assert (workspace / "pkg/b.py").read_text().count("new_name") == 3
    assert (workspace / "ignored/c.py").read_bytes() == tree["ignored/c.py"]
    assert (workspace / "latin1.py").read_bytes() == tree["latin1.py"]

    toolkit_diff(ctx, "undo")
    assert (workspace / "a.py").read_bytes() == tree["a.py"]
    assert (workspace / "pkg/b.py").read_bytes() == tree["pkg/b.py"]


def test_regex_replace_with_groups(ctx, workspace, tree):
    toolkit_batch_process(
        ctx,
        "replace",
        glob="a.py",
        pattern=r"^(\w+) = (\d+)$",
        replacement=r"\1: int = \2",
        regex=True,
        dry_run=False,
    )
    assert "old_name: int = 1\n" in (workspace / "a.py").read_text()


def test_literal_replacement_is_not_a_template(ctx, workspace, tree):
    toolkit_batch_process(
        ctx, "replace", glob="a.py", pattern="old_name", replacement=r"x\1", dry_run=False
    )
    assert r"x\1 = 1" in (workspace / "a.py").read_text()


def test_stats(ctx, tree):
    out = toolkit_batch_process(ctx, "stats", glob="**/*.{py,md}")
    assert out.startswith("3 text file(s), 6 lines")
    assert ".py" in out and ".md" in out
    assert "      2      0      1" in out  # pkg/b.py: 2 lines, 0 blank, 1 comment


def test_max_files_bounds_the_walk(ctx, workspace):
    for i in range(5):
        (workspace / f"f{i}.txt").write_text("hit\n")
    out = toolkit_batch_process(ctx, "count", glob="*.txt", pattern="hit", max_files=3)
    assert out.startswith("3 match(es)") and "stopped at max_files=3" in out


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"action": "count"}, "needs a pattern"),
        ({"action": "replace", "pattern": "x"}, "needs a replacement"),
        ({"action": "count", "pattern": "(", "regex": True}, "invalid regular expression"),
        ({"action": "count", "pattern": "x", "path": "missing"}, "does not exist"),
    ],
)
def test_bad_requests(ctx, tree, kwargs, message):
    with pytest.raises(ToolError, match=message):
        toolkit_batch_process(ctx, **kwargs)


@pytest.mark.skipif(os.name != "posix", reason="symlinks")
def test_replace_writes_through_symlinks_once(ctx, workspace, tree):
    (workspace / "link.py").symlink_to("a.py")
    out = toolkit_batch_process(
        ctx, "replace", glob="*.py", pattern="old_name", replacement="x", dry_run=False
    )
    assert out.startswith("replaced 5 occurrence(s) in 2 file(s)")
    assert (workspace / "link.py").is_symlink()
    assert (workspace / "a.py").read_text() == "import os\nx = 1\nprint(x)\n"
