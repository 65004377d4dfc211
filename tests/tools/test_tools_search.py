from __future__ import annotations

from pathlib import Path

import pytest

from tea_agent_mini.errors import ToolError, WorkspaceError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.tools.files import search
from tea_agent_mini.tools.files.gitignore import IgnoreFile, compile_glob
from tea_agent_mini.tools.files.search import expand_braces, toolkit_glob, toolkit_grep


@pytest.fixture
def ctx(workspace: Path, tea_home: Path) -> ToolContext:
    return ToolContext(workspace=workspace, home=tea_home)


def write(root: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


@pytest.fixture
def project(workspace: Path) -> Path:
    write(
        workspace,
        {
            ".gitignore": "*.log\nbuild/\n/secret.txt\n!keep.log\n",
            "src/app.py": "import os\n\ndef main():\n    return os.getcwd()  # TODO tidy\n",
            "src/util.py": "def helper():\n    pass\n",
            "src/web/index.ts": "// TODO: types\n",
            "src/.gitignore": "generated.py\n",
            "src/generated.py": "TODO = 'generated'\n",
            "debug.log": "TODO in a log\n",
            "keep.log": "TODO kept\n",
            "build/out.py": "TODO built\n",
            "secret.txt": "TODO secret\n",
            "docs/secret.txt": "TODO not the top-level secret\n",
            "node_modules/lib/index.js": "TODO vendored\n",
            ".git/config": "TODO git\n",
            "image.png": b"\x89PNG\r\n\x1a\n\x00TODO\x00",
        },
    )
    return workspace


def test_glob_recursive_and_top_level(ctx, project):
    out = toolkit_glob(ctx, "**/*.py")
    assert out.splitlines()[1:] == ["src/app.py", "src/util.py"]
    assert toolkit_glob(ctx, "*.py").startswith("no paths match")
    assert "keep.log" in toolkit_glob(ctx, "*.log")
    assert "debug.log" not in toolkit_glob(ctx, "*.log")


def test_glob_under_a_path_with_braces(ctx, project):
    out = toolkit_glob(ctx, "**/*.{py,ts}", path="src")
    assert out.splitlines()[1:] == ["src/app.py", "src/util.py", "src/web/index.ts"]


def test_glob_marks_directories(ctx, project):
    assert "src/web/" in toolkit_glob(ctx, "src/*").splitlines()


def test_glob_is_bounded(ctx, workspace, monkeypatch):
    monkeypatch.setattr(search, "MAX_GLOB_RESULTS", 3)
    write(workspace, {f"f{i}.txt": "" for i in range(7)})
    out = toolkit_glob(ctx, "*.txt")
    assert out.startswith("7 match(es)") and "... and 4 more" in out


def test_grep_respects_gitignore_and_skips_binary_and_vendor_dirs(ctx, project):
    out = toolkit_grep(ctx, "TODO")
    lines = out.splitlines()
    assert "src/app.py:4:    return os.getcwd()  # TODO tidy" in lines
    assert "src/web/index.ts:1:// TODO: types" in lines
    assert "keep.log:1:TODO kept" in lines
    assert "docs/secret.txt:1:TODO not the top-level secret" in lines
    for hidden in ("debug.log", "build/", "node_modules", ".git/", "image.png", "generated.py"):
        assert hidden not in out, hidden
    assert lines[-1] == "4 match(es) in 4 file(s)"


def test_grep_in_a_subdirectory_still_uses_the_parent_gitignore(ctx, workspace):
    write(workspace, {".gitignore": "*.tmp\n", "sub/a.tmp": "needle\n", "sub/b.txt": "needle\n"})
    out = toolkit_grep(ctx, "needle", path="sub")
    assert "sub/b.txt:1:needle" in out and "a.tmp" not in out


def test_grep_glob_ignore_case_and_context(ctx, project):
    out = toolkit_grep(ctx, "def (main|HELPER)", glob="*.py", ignore_case=True, context=1)
    assert out.splitlines()[:6] == [
        "src/app.py-2-",
        "src/app.py:3:def main():",
        "src/app.py-4-    return os.getcwd()  # TODO tidy",
        "--",
        "src/util.py:1:def helper():",
        "src/util.py-2-    pass",
    ]


def test_grep_max_results_and_single_file(ctx, workspace):
    write(workspace, {"many.txt": "hit\n" * 50})
    out = toolkit_grep(ctx, "hit", path="many.txt", max_results=3)
    assert out.count("many.txt:") == 3
    assert "stopped at max_results=3" in out


def test_grep_errors(ctx, project):
    with pytest.raises(ToolError, match="invalid regular expression"):
        toolkit_grep(ctx, "(unclosed")
    with pytest.raises(WorkspaceError):
        toolkit_grep(ctx, "x", path="..")
    assert toolkit_grep(ctx, "zzz-nothing").startswith("no matches for 'zzz-nothing'")


def test_symlinks_out_of_the_workspace_are_not_followed(ctx, workspace, tmp_path):
    write(tmp_path, {"outside/secret.txt": "needle\n"})
    (workspace / "link").symlink_to(tmp_path / "outside")
    (workspace / "file-link.txt").symlink_to(tmp_path / "outside/secret.txt")
    assert toolkit_grep(ctx, "needle").startswith("no matches")


@pytest.mark.parametrize(
    ("rules", "path", "is_dir", "verdict"),
    [
        ("*.log", "a/b/x.log", False, True),
        ("*.log\n!keep.log", "keep.log", False, False),
        ("build/", "build", True, True),
        ("build/", "build", False, None),
        ("/top.txt", "top.txt", False, True),
        ("/top.txt", "sub/top.txt", False, None),
        ("docs/*.md", "docs/a.md", False, True),
        ("docs/*.md", "docs/deep/a.md", False, None),
        ("**/tmp", "a/b/tmp", True, True),
        ("a/**/z", "a/z", False, True),
        ("a/**/z", "a/b/c/z", False, True),
        ("logs/**", "logs/x/y.txt", False, True),
        ("# comment\n\n\\#hash", "#hash", False, True),
        ("file[0-9].txt", "file7.txt", False, True),
        ("file?.txt", "file10.txt", False, None),
    ],
)
def test_gitignore_rules(rules, path, is_dir, verdict):
    assert IgnoreFile.parse(rules).match(path, is_dir) is verdict


def test_gitignore_base_directory():
    rules = IgnoreFile.parse("*.gen\n/root.txt", base="pkg")
    assert rules.match("pkg/a/x.gen", False) is True
    assert rules.match("other/x.gen", False) is None
    assert rules.match("pkg/root.txt", False) is True
    assert rules.match("pkg/a/root.txt", False) is None


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("**/*.py", "a.py", True),
        ("**/*.py", "x/y/a.py", True),
        ("*.py", "x/a.py", False),
        ("src/**/test_*.py", "src/test_a.py", True),
        ("src/**/test_*.py", "src/a/b/test_a.py", True),
        ("[!a]*.txt", "b.txt", True),
        ("[!a]*.txt", "a.txt", False),
    ],
)
def test_compile_glob(pattern, path, matches):
    assert bool(compile_glob(pattern).match(path)) is matches


def test_expand_braces():
    assert expand_braces("*.{py,md}") == ["*.py", "*.md"]
    assert expand_braces("{a,b}/{c,d}") == ["a/c", "a/d", "b/c", "b/d"]
    assert expand_braces("plain") == ["plain"]
