"""Unified diffs: parse them and apply them to the workspace, all files or none.

Tolerant of what models write: wrong hunk line counts, hunks whose line numbers are off (the
nearest matching place is used), ``@@`` headers without numbers, trailing-whitespace drift,
``a/`` and ``b/`` prefixes, CRLF files.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path

from tea_agent_mini.errors import ToolError, WorkspaceError
from tea_agent_mini.toolkit.context import ToolContext

_HUNK_RE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass
class Hunk:
    old_start: int | None  # 1-based; None when the header had no line numbers
    lines: list[tuple[str, str]] = field(default_factory=list)  # (" " | "-" | "+", text)
    no_newline_old: bool = False
    no_newline_new: bool = False

    @property
    def old_lines(self) -> list[str]:
        return [text for tag, text in self.lines if tag != "+"]

    @property
    def new_lines(self) -> list[str]:
        return [text for tag, text in self.lines if tag != "-"]


@dataclass
class FilePatch:
    old_path: str | None  # None for /dev/null (a new file)
    new_path: str | None  # None for /dev/null (a deleted file)
    hunks: list[Hunk] = field(default_factory=list)


@dataclass
class FileChange:
    path: Path
    display: str
    kind: str  # A(dded), M(odified), D(eleted), R(enamed)
    text: str | None = None  # new content; None when deleted
    removed_path: Path | None = None  # the old name of a renamed file
    added: int = 0
    removed: int = 0


def parse_patch(text: str) -> list[FilePatch]:
    """Split a unified diff into per-file patches. Raises ToolError when there is none."""
    # only "\n" separates diff lines: str.splitlines would also split at \f, \x1c, \u2028 ...
    lines = text.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    patches: list[FilePatch] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if _is_file_header(lines, i):
            old, new = _strip_prefixes(_header_path(line[4:]), _header_path(lines[i + 1][4:]))
            patches.append(FilePatch(old, new))
            i += 2
        elif line.startswith("@@"):
            if not patches:
                raise ToolError("the patch has a hunk before any '--- a/file' / '+++ b/file' pair")
            hunk, i = _parse_hunk(lines, i)
            patches[-1].hunks.append(hunk)
        elif line.startswith(("Binary files ", "GIT binary patch")):
            raise ToolError("binary patches are not supported")
        else:
            i += 1  # "diff --git", "index ...", mode lines and prose are ignored
    patches = [p for p in patches if p.hunks or p.new_path is None]
    if not patches:
        raise ToolError(
            "no file changes found: expected a unified diff with '--- a/path', '+++ b/path' "
            "and '@@ -start,count +start,count @@' hunks"
        )
    return patches


def _is_file_header(lines: list[str], i: int) -> bool:
    return lines[i].startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")


def _header_path(raw: str) -> str | None:
    path = raw.split("\t", 1)[0].strip()
    if len(path) > 1 and path[0] == path[-1] == '"':
        path = path[1:-1]
    return None if path == "/dev/null" else path


def _strip_prefixes(old: str | None, new: str | None) -> tuple[str | None, str | None]:
    """Drop git's a/ and b/ prefixes when both sides carry them."""
    if (
        (old or new)
        and (old is None or old.startswith("a/"))
        and (new is None or new.startswith("b/"))
    ):
        return (old[2:] if old else None, new[2:] if new else None)
    return old, new


def _parse_hunk(lines: list[str], i: int) -> tuple[Hunk, int]:
    match = _HUNK_RE.match(lines[i])
    left_old: int | None  # lines of the old and new side still to come, when the header says
    left_new: int | None
    if match:
        hunk = Hunk(old_start=int(match.group(1)))
        left_old = int(match.group(2)) if match.group(2) is not None else 1
        left_new = int(match.group(4)) if match.group(4) is not None else 1
    else:  # "@@" or "@@ def f():" without numbers: locate by content alone
        hunk = Hunk(old_start=None)
        left_old = left_new = None
    i += 1
    while i < len(lines):
        line = lines[i]
        counted = left_old is not None and left_new is not None
        done = left_old is not None and left_new is not None and left_old <= 0 and left_new <= 0
        if line.startswith(("@@", "diff --git ")):
            break
        if _is_file_header(lines, i) and (done or not counted):
            break
        if line.startswith("\\"):  # "\ No newline at end of file" refers to the line before
            _mark_no_newline(hunk)
            i += 1
            continue
        tag, text = (line[0], line[1:]) if line else (" ", "")
        if tag not in " -+":
            break
        hunk.lines.append((tag, text))
        if left_old is not None and left_new is not None:
            left_old -= tag != "+"
            left_new -= tag != "-"
        i += 1
    # blank lines after the last hunk (between files, at the end) are not context
    while hunk.lines and hunk.lines[-1] == (" ", "") and (left_old is None or left_old < 0):
        hunk.lines.pop()
        if left_old is not None:
            left_old += 1
    return hunk, i


def _mark_no_newline(hunk: Hunk) -> None:
    if not hunk.lines:
        return
    tag = hunk.lines[-1][0]
    hunk.no_newline_old |= tag in " -"
    hunk.no_newline_new |= tag in " +"


def apply_hunks(lines: list[str], hunks: list[Hunk], label: str) -> list[str]:
    """Apply hunks to lines (without line ends). Raises ToolError naming the hunk that misses."""
    result = list(lines)
    offset = 0  # old line numbers -> current positions
    floor = 0  # hunks apply in order and never overlap
    for number, hunk in enumerate(hunks, start=1):
        old, new = hunk.old_lines, hunk.new_lines
        if hunk.old_start is None:
            expected = floor
        else:
            expected = hunk.old_start - (1 if old else 0) + offset
        pos = find_block(result, old, expected, floor)
        if pos is None:
            raise ToolError(_miss_message(result, hunk, number, label))
        result[pos : pos + len(old)] = new
        if hunk.old_start is not None:
            offset = pos + len(new) - (hunk.old_start - (1 if old else 0) + len(old))
        floor = pos + len(new)
    return result


def find_block(lines: list[str], block: list[str], expected: int, floor: int = 0) -> int | None:
    """Index where ``block`` occurs, nearest to ``expected`` first; exact, then ignoring
    trailing whitespace."""
    last = len(lines) - len(block)
    if not block:
        return min(max(expected, floor), len(lines))
    if last < floor:
        return None
    expected = min(max(expected, floor), last)
    order = [expected]
    for distance in range(1, max(expected - floor, last - expected) + 1):
        order += [p for p in (expected - distance, expected + distance) if floor <= p <= last]
    for same in (_exact, _loose):
        for pos in order:
            if same(lines, block, pos):
                return pos
    return None


def _exact(lines: list[str], block: list[str], pos: int) -> bool:
    return lines[pos : pos + len(block)] == block


def _loose(lines: list[str], block: list[str], pos: int) -> bool:
    return all(
        a.rstrip() == b.rstrip() for a, b in zip(lines[pos : pos + len(block)], block, strict=True)
    )


def _miss_message(lines: list[str], hunk: Hunk, number: int, label: str) -> str:
    old = hunk.old_lines
    where = f" (expected near line {hunk.old_start})" if hunk.old_start else ""
    message = f"{label}: hunk {number}{where} does not match the file"
    pos, count = _longest_partial_match(lines, old, (hunk.old_start or 1) - 1)
    if count:
        found = lines[pos + count] if pos + count < len(lines) else "<end of file>"
        message += (
            f": at line {pos + count + 1} the patch expects {old[count]!r} "
            f"but the file has {found!r}"
        )
    else:
        first = next((line.strip() for line in old if line.strip()), "")
        stripped = [line.strip() for line in lines]
        close = difflib.get_close_matches(first, stripped, n=1, cutoff=0.6) if first else []
        if first:
            message += f"; its first line {first!r} was not found"
        if close:
            message += f" (closest: line {stripped.index(close[0]) + 1}: {close[0]!r})"
    return message + ". Re-read the file and make the context lines match it exactly."


def _longest_partial_match(lines: list[str], block: list[str], expected: int) -> tuple[int, int]:
    """(position, matching leading lines) of the best partial match, nearest first on ties."""
    best = (0, 0)
    for pos in sorted(range(len(lines)), key=lambda p: abs(p - expected)):
        count = 0
        while (
            count < len(block)
            and pos + count < len(lines)
            and lines[pos + count].rstrip() == block[count].rstrip()
        ):
            count += 1
        if count > best[1]:
            best = (pos, count)
    return best


def plan_patch(ctx: ToolContext, text: str) -> list[FileChange]:
    """Work out every file's new content without writing anything. Raises ToolError listing
    every problem when any hunk or file does not fit."""
    planned: dict[Path, tuple[list[str], str, bool] | None] = {}
    changes: list[FileChange] = []
    problems: list[ToolError] = []
    for patch in parse_patch(text):
        try:
            changes.append(_plan_file(ctx, patch, planned))
        except ToolError as exc:
            problems.append(exc)
    if problems:
        kind = WorkspaceError if any(isinstance(p, WorkspaceError) for p in problems) else ToolError
        listing = "\n- ".join(map(str, problems))
        raise kind(f"patch not applied, no file was changed:\n- {listing}")
    return changes


def _plan_file(
    ctx: ToolContext, patch: FilePatch, planned: dict[Path, tuple[list[str], str, bool] | None]
) -> FileChange:
    label = patch.new_path or patch.old_path or "?"
    source = ctx.resolve(patch.old_path) if patch.old_path else None
    target = ctx.resolve(patch.new_path) if patch.new_path else None
    lines: list[str]
    if source is None:
        assert target is not None
        if planned.get(target) is not None or (target not in planned and _nonempty(target)):
            raise ToolError(f"{label}: the patch creates it, but it already exists")
        lines, eol, final_newline = [], "\n", True
    else:
        lines, eol, final_newline = _current(source, planned, patch.old_path or "")
    new_lines = apply_hunks(lines, patch.hunks, label)
    if patch.hunks and patch.hunks[-1].no_newline_new:
        final_newline = False
    elif patch.hunks and patch.hunks[-1].no_newline_old:
        final_newline = True
    added = sum(tag == "+" for h in patch.hunks for tag, _ in h.lines)
    removed = sum(tag == "-" for h in patch.hunks for tag, _ in h.lines)
    if target is None:
        assert source is not None
        if any(line.strip() for line in new_lines):
            raise ToolError(f"{label}: the patch deletes it but does not remove all its lines")
        planned[source] = None
        return FileChange(source, ctx.relative(source), "D", removed=removed)
    kind = "A" if source is None else "M" if source == target else "R"
    if kind == "R" and (
        planned.get(target) is not None or (target not in planned and target.exists())
    ):
        raise ToolError(f"{label}: the patch renames a file onto an existing one")
    content = eol.join(new_lines) + (eol if final_newline and new_lines else "")
    planned[target] = (new_lines, eol, final_newline)
    removed_path = None
    if kind == "R":
        assert source is not None
        planned[source] = None
        removed_path = source
    return FileChange(target, ctx.relative(target), kind, content, removed_path, added, removed)


def _nonempty(path: Path) -> bool:
    return path.exists() and (path.is_dir() or path.stat().st_size > 0)


def _current(
    path: Path, planned: dict[Path, tuple[list[str], str, bool] | None], name: str
) -> tuple[list[str], str, bool]:
    """(lines, line ending, ends with a newline) of a file, as planned so far or on disk."""
    if path in planned:
        state = planned[path]
        if state is None:
            raise ToolError(f"{name}: an earlier part of the patch deleted or renamed it")
        return list(state[0]), state[1], state[2]
    if not path.is_file():
        raise ToolError(f"{name}: no such file (a new file needs '--- /dev/null')")
    data = path.read_bytes()
    if b"\x00" in data[:8192]:
        raise ToolError(f"{name}: binary file, cannot be patched")
    text = data.decode("utf-8", errors="surrogateescape")
    eol = "\r\n" if "\r\n" in text else "\n"
    text = text.replace("\r\n", "\n")
    lines = text.split("\n") if text else []
    final_newline = text.endswith("\n")
    if final_newline:
        lines.pop()
    return lines, eol, final_newline


def write_changes(changes: list[FileChange]) -> None:
    """Write the planned changes (parents created, renamed and deleted files removed)."""
    for change in changes:
        try:
            if change.text is None:
                change.path.unlink(missing_ok=True)
                continue
            change.path.parent.mkdir(parents=True, exist_ok=True)
            change.path.write_bytes(change.text.encode("utf-8", errors="surrogateescape"))
            if change.removed_path is not None:
                change.removed_path.unlink(missing_ok=True)
        except OSError as exc:
            raise ToolError(f"{change.display}: cannot write: {exc.strerror or exc}") from exc


def summarize(changes: list[FileChange]) -> str:
    lines = [f"Applied patch to {len(changes)} file{'s' if len(changes) != 1 else ''}:"]
    for change in changes:
        counts = [f"+{change.added}"] if change.added else []
        counts += [f"-{change.removed}"] if change.removed else []
        suffix = f" ({' '.join(counts)})" if counts else ""
        lines.append(f"  {change.kind} {change.display}{suffix}")
    return "\n".join(lines)
