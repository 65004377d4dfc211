"""toolkit_batch_process: count, replace or measure text across the files matching a glob.

Files are found like toolkit_glob finds them (.gitignore honoured, .git/node_modules/venv
skipped); binary, huge and non-UTF-8 files are left alone. Replacement is a dry run unless asked
otherwise, and a real one records an undo step for toolkit_diff action='undo'.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal, get_args

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import tool
from tea_agent_mini.tools.files import undo
from tea_agent_mini.tools.files.diffs import unified_diff
from tea_agent_mini.tools.files.fileio import write_atomic
from tea_agent_mini.tools.files.files import BINARY_SNIFF_BYTES, is_binary
from tea_agent_mini.tools.files.gitignore import compile_glob
from tea_agent_mini.tools.files.search import expand_braces, walk

DEFAULT_MAX_FILES = 200
MAX_FILES = 5000
MAX_FILE_BYTES = 2 * 1024 * 1024
PREVIEW_LINES = 80
COMMENT_PREFIXES = ("#", "//", "--", ";", "%", "/*", "*", "<!--")


@dataclass
class TextFile:
    path: Path
    shown: str
    text: str | None  # None: binary, too large or unreadable (``skipped`` says why)
    skipped: str = ""


Action = Literal["replace", "count", "stats"]
ACTIONS: tuple[str, ...] = get_args(Action)


@tool("toolkit_batch_process", mutates=True, mutating_actions=("replace",))
def toolkit_batch_process(
    ctx: ToolContext,
    action: Action,
    glob: str = "**/*",
    path: str = ".",
    pattern: str = "",
    replacement: str | None = None,
    regex: bool = False,
    ignore_case: bool = False,
    dry_run: bool = True,
    max_files: Annotated[
        int, f"stop after this many files (default {DEFAULT_MAX_FILES})"
    ] = DEFAULT_MAX_FILES,
) -> str:
    """Process every text file matching a glob in the workspace: count occurrences of a text
    or regex, replace it (dry_run=true by default shows the changes without writing; pass
    dry_run=false to write, then toolkit_diff action='undo' can revert), or report line
    statistics per file and per extension. .gitignore'd, binary and huge files are skipped.

    Args:
        action: replace pattern with replacement, count matches, or line statistics
        glob: which files: '*.py' matches by name at any depth, a pattern with '/' matches
            the path, e.g. 'src/**/*.ts'; braces like '*.{js,ts}' work (default: all files)
        path: directory to search (default '.')
        pattern: [replace/count] text or regex to find
        replacement: [replace] the new text; with regex=true \\1 or \\g<name> insert groups
        regex: pattern is a Python regex (default false)
        ignore_case: case-insensitive (default false)
        dry_run: [replace] only show what would change (default true); set false to write the
            files
    """
    if action not in ACTIONS:
        raise ToolError(f"unknown action {action!r}; use replace, count or stats")
    limit = min(max(1, max_files), MAX_FILES)
    files, more = _collect(ctx, path, glob or "**/*", limit)
    if not files:
        return f"no files match {glob!r} under {path or '.'}"
    if action == "stats":
        return _stats(files, more)
    if not pattern:
        raise ToolError(f"action '{action}' needs a pattern")
    finder = _finder(pattern, regex, ignore_case)
    if action == "count":
        return _count(files, finder, pattern, more)
    if replacement is None:
        raise ToolError("action 'replace' needs a replacement (it may be an empty string)")
    return _replace(ctx, files, finder, replacement, regex, dry_run, more)


def _collect(ctx: ToolContext, path: str, glob: str, limit: int) -> tuple[list[TextFile], bool]:
    """The matching files (at most ``limit``) and whether there were more."""
    root = ctx.resolve(path or ".", must_exist=True)
    if not root.is_dir():
        raise ToolError(f"'{path}' is not a directory")
    found: list[TextFile] = []
    seen: set[Path] = set()
    for file in _matching(ctx, root, glob):
        real = Path(os.path.realpath(file))  # write through symlinks, and each file once
        if real in seen:
            continue
        if len(found) >= limit:
            return found, True
        seen.add(real)
        found.append(_load(real, ctx.relative(file)))
    return found, False


def _matching(ctx: ToolContext, root: Path, glob: str) -> Iterator[Path]:
    patterns = expand_braces(glob.strip())
    by_path = [compile_glob(p) for p in patterns if "/" in p]
    by_name = [compile_glob(p) for p in patterns if "/" not in p]
    for entry in walk(ctx, root):
        if entry.is_dir:
            continue
        name = entry.rel.rsplit("/", 1)[-1]
        if any(r.match(name) for r in by_name) or any(r.match(entry.rel) for r in by_path):
            yield entry.path


def _load(path: Path, shown: str) -> TextFile:
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return TextFile(path, shown, None, f"over {MAX_FILE_BYTES // (1024 * 1024)} MB")
        data = path.read_bytes()
    except OSError as exc:
        return TextFile(path, shown, None, f"unreadable: {exc.strerror or exc}")
    if is_binary(data[:BINARY_SNIFF_BYTES]):
        return TextFile(path, shown, None, "binary")
    try:
        return TextFile(path, shown, data.decode("utf-8"))
    except UnicodeDecodeError:
        return TextFile(path, shown, None, "not UTF-8")


def _finder(pattern: str, regex: bool, ignore_case: bool) -> re.Pattern[str]:
    source = pattern if regex else re.escape(pattern)
    try:
        return re.compile(source, (re.IGNORECASE if ignore_case else 0) | re.MULTILINE)
    except re.error as exc:
        raise ToolError(f"invalid regular expression {pattern!r}: {exc}") from exc


def _footer(files: list[TextFile], more: bool) -> str:
    skipped = [f for f in files if f.text is None]
    notes = []
    if skipped:
        shown = ", ".join(f"{f.shown} ({f.skipped})" for f in skipped[:5])
        notes.append(f"skipped {len(skipped)} file(s): {shown}{' ...' if len(skipped) > 5 else ''}")
    if more:
        notes.append(f"stopped at max_files={len(files)}; narrow the glob or raise max_files")
    return ("\n" + "\n".join(notes)) if notes else ""


def _count(files: list[TextFile], finder: re.Pattern[str], pattern: str, more: bool) -> str:
    counts = [(f.shown, len(finder.findall(f.text))) for f in files if f.text is not None]
    hits = sorted((c for c in counts if c[1]), key=lambda c: (-c[1], c[0]))
    total = sum(n for _, n in hits)
    head = f"{total} match(es) of {pattern!r} in {len(hits)} of {len(counts)} file(s)"
    body = "\n".join(f"{n:6d}  {name}" for name, n in hits)
    return head + (":\n" + body if body else "") + _footer(files, more)


def _replace(
    ctx: ToolContext,
    files: list[TextFile],
    finder: re.Pattern[str],
    replacement: str,
    regex: bool,
    dry_run: bool,
    more: bool,
) -> str:
    planned: list[tuple[TextFile, str, int]] = []
    for file in files:
        if file.text is None:
            continue
        try:
            if regex:
                new_text, count = finder.subn(replacement, file.text)
            else:
                new_text, count = finder.subn(lambda _m: replacement, file.text)
        except (re.error, IndexError) as exc:
            raise ToolError(f"invalid replacement {replacement!r}: {exc}") from exc
        if count:
            planned.append((file, new_text, count))
    total = sum(count for _, _, count in planned)
    if not planned:
        return f"no matches in {len(files)} file(s); nothing to replace" + _footer(files, more)
    listing = "\n".join(f"{count:6d}  {file.shown}" for file, _, count in planned)
    if dry_run:
        head = f"dry run: would replace {total} occurrence(s) in {len(planned)} file(s)"
        preview = _preview(planned)
        return (
            f"{head}:\n{listing}\n\n{preview}\nnothing was written; call again with "
            f"dry_run=false to apply{_footer(files, more)}"
        )
    befores = undo.capture(file.path for file, _, _ in planned)
    for file, new_text, _ in planned:
        write_atomic(file.path, new_text.encode("utf-8"), label=file.shown)
    note = undo.record(ctx, f"batch replace in {len(planned)} file(s)", befores)
    return (
        f"replaced {total} occurrence(s) in {len(planned)} file(s) {note}:\n{listing}"
        f"{_footer(files, more)}"
    )


def _preview(planned: list[tuple[TextFile, str, int]]) -> str:
    lines: list[str] = []
    for file, new_text, _ in planned:
        lines += unified_diff(file.text, new_text, file.shown, context=1).splitlines()
        if len(lines) > PREVIEW_LINES:
            break
    if len(lines) > PREVIEW_LINES:
        return "\n".join(lines[:PREVIEW_LINES]) + "\n... (preview cut)\n"
    return "\n".join(lines) + "\n"


def _stats(files: list[TextFile], more: bool) -> str:
    rows = []
    by_ext: dict[str, list[int]] = {}
    for file in files:
        if file.text is None:
            continue
        lines = file.text.splitlines()
        blank = sum(1 for line in lines if not line.strip())
        comment = sum(1 for line in lines if line.lstrip().startswith(COMMENT_PREFIXES))
        size = len(file.text.encode("utf-8"))
        rows.append((file.shown, len(lines), blank, comment, size))
        ext = file.path.suffix.lower() or "(none)"
        total = by_ext.setdefault(ext, [0, 0, 0])
        total[0] += 1
        total[1] += len(lines)
        total[2] += size
    rows.sort(key=lambda r: (-r[1], r[0]))
    out = [
        f"{len(rows)} text file(s), {sum(r[1] for r in rows):,} lines, "
        f"{sum(r[4] for r in rows):,} bytes"
    ]
    out.append("by extension:")
    for ext, (count, line_count, size) in sorted(by_ext.items(), key=lambda item: -item[1][1]):
        out.append(f"  {ext:10s} {count:5d} files {line_count:8,d} lines {size:10,d} bytes")
    out.append("largest files (lines, blank, comment, bytes):")
    for name, line_count, blank, comment, size in rows[:50]:
        out.append(f"  {line_count:7,d} {blank:6,d} {comment:6,d} {size:9,d}  {name}")
    if len(rows) > 50:
        out.append(f"  ... and {len(rows) - 50} more")
    return "\n".join(out) + _footer(files, more)
