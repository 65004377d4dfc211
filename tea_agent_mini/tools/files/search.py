"""toolkit_glob and toolkit_grep: find files by name or content, in pure Python.

Both skip version-control and dependency directories, honour .gitignore files and report paths
relative to the workspace so they can be passed straight to the other file tools.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import SKIP_DIRS, ToolContext, is_within
from tea_agent_mini.toolkit.registry import tool
from tea_agent_mini.tools.files.files import is_binary
from tea_agent_mini.tools.files.gitignore import IgnoreStack, compile_glob

MAX_GLOB_RESULTS = 500
MAX_GREP_RESULTS = 1000
MAX_CONTEXT = 10
MAX_ENTRIES_WALKED = 200_000
MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_LINE_CHARS = 300


@dataclass(frozen=True)
class Entry:
    path: Path
    rel: str  # relative to the search root, slash-separated
    is_dir: bool


def walk(ctx: ToolContext, root: Path) -> Iterator[Entry]:
    """Entries below ``root`` in sorted depth-first order, minus skipped and ignored ones."""
    workspace = Path(os.path.realpath(ctx.workspace))
    top = workspace if is_within(root, workspace) else root
    # .gitignore rules are anchored at ``top``; ``prefix`` turns root-relative into top-relative
    prefix = os.path.relpath(root, top).replace(os.sep, "/")
    prefix = "" if prefix == "." else prefix + "/"
    stack = [(root, "", _ignores_above(root, top))]
    seen = 0
    while stack:
        directory, rel_dir, ignores = stack.pop()
        ignores = ignores.with_dir(directory, (prefix + rel_dir).rstrip("/"))
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            continue
        below: list[tuple[Path, str, IgnoreStack]] = []
        for entry in entries:
            seen += 1
            if seen > MAX_ENTRIES_WALKED:
                return
            rel = f"{rel_dir}{entry.name}"
            is_dir = _is_dir(entry)
            if is_dir and entry.name in SKIP_DIRS:
                continue
            if ignores.ignored(prefix + rel, is_dir):
                continue
            if _escapes(ctx, entry, workspace):
                continue
            yield Entry(Path(entry.path), rel, is_dir)
            if is_dir and not entry.is_symlink():
                below.append((Path(entry.path), rel + "/", ignores))
        stack.extend(reversed(below))


def _escapes(ctx: ToolContext, entry: os.DirEntry[str], workspace: Path) -> bool:
    """A symlink pointing outside the workspace (while confinement is on)."""
    if ctx.allow_outside_workspace or not entry.is_symlink():
        return False
    return not is_within(Path(os.path.realpath(entry.path)), workspace)


def _ignores_above(root: Path, top: Path) -> IgnoreStack:
    """The .gitignore files from ``top`` down to the parent of ``root``."""
    stack = IgnoreStack()
    for parent in reversed(root.parents):
        if is_within(parent, top):
            rel = os.path.relpath(parent, top).replace(os.sep, "/")
            stack = stack.with_dir(parent, "" if rel == "." else rel)
    return stack


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def expand_braces(pattern: str) -> list[str]:
    """``*.{py,md}`` -> ``["*.py", "*.md"]`` (one level, as models often write it)."""
    match = re.search(r"\{([^{}]*,[^{}]*)\}", pattern)
    if not match:
        return [pattern]
    head, tail = pattern[: match.start()], pattern[match.end() :]
    return [p for part in match.group(1).split(",") for p in expand_braces(head + part + tail)]


@tool("toolkit_glob", concurrency_safe=True)
def toolkit_glob(ctx: ToolContext, pattern: str, path: str = ".") -> str:
    """Find files and directories whose path matches a glob pattern, relative to `path`.
    '*' matches within one directory level, '**' across levels: '*.py' finds Python files
    directly in `path`, '**/*.py' at any depth, 'src/**/test_*.py' below src. Braces like
    '*.{js,ts}' work. .git, node_modules, __pycache__ and venv directories and .gitignore'd
    files are skipped. Directories end with '/'.

    Args:
        pattern: glob pattern, e.g. '**/*.py'
        path: directory to search from, relative to the workspace (default '.')
    """
    root = _search_root(ctx, path, files_ok=False)
    regexes = [compile_glob(p) for p in expand_braces(pattern.strip())]
    found: list[str] = []
    more = 0
    for entry in walk(ctx, root):
        if any(r.match(entry.rel) for r in regexes):
            if len(found) >= MAX_GLOB_RESULTS:
                more += 1
                continue
            found.append(ctx.relative(entry.path) + ("/" if entry.is_dir else ""))
    if not found:
        return f"no paths match {pattern!r} under {ctx.relative(root)}"
    footer = f"\n... and {more} more (narrow the pattern)" if more else ""
    return f"{len(found) + more} match(es):\n" + "\n".join(found) + footer


def _search_root(ctx: ToolContext, path: str, *, files_ok: bool) -> Path:
    root = ctx.resolve(path or ".", must_exist=True)
    if not files_ok and not root.is_dir():
        raise ToolError(f"'{path}' is not a directory")
    return root


@tool("toolkit_grep", concurrency_safe=True)
def toolkit_grep(
    ctx: ToolContext,
    pattern: str,
    path: str = ".",
    glob: str | None = None,
    ignore_case: bool = False,
    max_results: Annotated[
        int, f"stop after this many matching lines (default 200, max {MAX_GREP_RESULTS})"
    ] = 200,
    context: Annotated[
        int, f"lines of context before and after each match (default 0, max {MAX_CONTEXT})"
    ] = 0,
) -> str:
    """Search file contents with a regular expression (Python syntax). Returns 'path:line:text'
    for each matching line ('path-line-text' for context lines), paths relative to the
    workspace. Binary files, .git, node_modules, __pycache__, venv and .gitignore'd files are
    skipped. Use `glob` to restrict to some files and `context` to see surrounding lines.

    Args:
        pattern: Python regular expression to search for
        path: file or directory to search, relative to the workspace (default '.')
        glob: only search files matching this glob, e.g. '*.py' (file name) or 'src/**/*.ts'
            (path)
        ignore_case: case-insensitive (default false)
    """
    try:
        regex = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        raise ToolError(f"invalid regular expression {pattern!r}: {exc}") from exc
    limit = min(max(1, max_results), MAX_GREP_RESULTS)
    context = min(max(0, context), MAX_CONTEXT)
    root = _search_root(ctx, path, files_ok=True)
    out: list[str] = []
    matches = files_matched = files_searched = 0
    for file in _grep_files(ctx, root, glob):
        lines = _text_lines(file)
        if lines is None:
            continue
        files_searched += 1
        found = _grep_lines(regex, lines, ctx.relative(file), context, limit - matches)
        if found[0]:
            files_matched += 1
            matches += found[0]
            if out and context:
                out.append("--")
            out += found[1]
        if matches >= limit:
            break
    if not matches:
        return (
            f"no matches for {pattern!r} in {ctx.relative(root)} ({files_searched} files searched)"
        )
    summary = f"{matches} match(es) in {files_matched} file(s)"
    if matches >= limit:
        summary += f"; stopped at max_results={limit}, narrow the search to see more"
    return "\n".join(out) + "\n\n" + summary


def _grep_files(ctx: ToolContext, root: Path, glob: str | None) -> Iterator[Path]:
    if root.is_file():
        yield root
        return
    patterns = expand_braces(glob.strip()) if glob else []
    by_path = [compile_glob(p) for p in patterns if "/" in p]
    by_name = [compile_glob(p) for p in patterns if "/" not in p]
    for entry in walk(ctx, root):
        if entry.is_dir:
            continue
        name = entry.rel.rsplit("/", 1)[-1]
        if patterns and not (
            any(r.match(name) for r in by_name) or any(r.match(entry.rel) for r in by_path)
        ):
            continue
        yield entry.path


def _text_lines(path: Path) -> list[str] | None:
    """The file's lines, or None for binary, huge or unreadable files."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if is_binary(data[:8192]):
        return None
    return data.decode("utf-8", errors="replace").splitlines()


def _grep_lines(
    regex: re.Pattern[str], lines: list[str], name: str, context: int, limit: int
) -> tuple[int, list[str]]:
    """(matching lines counted, output lines) for one file."""
    hits = []
    for index, line in enumerate(lines):
        if regex.search(line):
            hits.append(index)
            if len(hits) >= limit:
                break
    out: list[str] = []
    shown = -1
    hit_set = set(hits)
    for index in hits:
        start = max(index - context, shown + 1)
        if out and start > shown + 1:
            out.append("--")
        for j in range(start, min(index + context, len(lines) - 1) + 1):
            if j <= shown:
                continue
            sep = ":" if j in hit_set else "-"
            out.append(f"{name}{sep}{j + 1}{sep}{_clip(lines[j])}")
            shown = j
    return len(hits), out


def _clip(line: str) -> str:
    return line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + " ..."
