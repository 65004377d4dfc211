"""toolkit_file: read, write, append and list files, always inside the workspace."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Literal

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import SKIP_DIRS, ToolContext
from tea_agent_mini.toolkit.registry import tool

DEFAULT_READ_LINES = 2000
MAX_READ_CHARS = 256 * 1024
COUNT_NOTE_LINES = 20  # a whole file this long or longer ends with its line count
MAX_LIST_ENTRIES = 1000
BINARY_SNIFF_BYTES = 8192

Action = Literal["read", "write", "list", "append"]


@tool("toolkit_file", mutates=True, mutating_actions=("write", "append"))
def toolkit_file(
    ctx: ToolContext,
    action: Action,
    filename: str = "",
    content: str | None = None,
    path: str = ".",
    offset: int = 1,
    limit: Annotated[
        int, f"[read] how many lines to return (default {DEFAULT_READ_LINES})"
    ] = DEFAULT_READ_LINES,
    recursive: bool = False,
) -> str:
    """Read, write, append to, or list files in the workspace. read: returns the file's text;
    for a long file only a window of lines is returned and a note at the end gives the total
    and the offset to continue from (a whole file of 20 lines or more ends with its line
    count). Binary files are refused. write: replaces the whole file (parent directories are
    created). append: adds to the end. list: names in a directory, directories marked with a
    trailing '/'. Paths are relative to the workspace; paths outside it are refused. To change
    part of a file prefer toolkit_edit.

    Args:
        action: read a text file, write (replace) it, append to it, or list a dir
        filename: [read/write/append] file path, relative to the workspace
        content: [write/append] the text to write
        path: [list] directory to list, relative to the workspace (default '.')
        offset: [read] first line to return, 1-based (default 1)
        recursive: [list] include subdirectories (default false)
    """
    if action == "list":
        return list_directory(ctx, path or ".", recursive)
    target = filename or (path if path not in ("", ".") else "")
    if not target:
        raise ToolError(f"action '{action}' needs 'filename'")
    if action == "read":
        return read_text(ctx, target, offset, limit)
    if action in ("write", "append"):
        if content is None:
            raise ToolError(f"action '{action}' needs 'content'")
        return write_text(ctx, target, content, append=action == "append")
    raise ToolError(f"unknown action {action!r}; use read, write, append or list")


def read_text(
    ctx: ToolContext, filename: str, offset: int = 1, limit: int = DEFAULT_READ_LINES
) -> str:
    resolved = ctx.resolve(filename, must_exist=True)
    if resolved.is_dir():
        raise ToolError(f"'{filename}' is a directory; use action 'list'")
    if offset < 1:
        raise ToolError("offset must be 1 or more (lines are numbered from 1)")
    if limit < 1:
        raise ToolError("limit must be 1 or more")
    with open(resolved, "rb") as handle:
        if is_binary(handle.read(BINARY_SNIFF_BYTES)):
            size = resolved.stat().st_size
            raise ToolError(f"'{filename}' looks like a binary file ({size:,} bytes); not shown")
    lines, total, stopped_at = _read_window(resolved, offset, limit)
    text = "".join(lines)
    last = offset + len(lines) - 1
    if offset == 1 and last >= total and stopped_at is None:
        if total < COUNT_NOTE_LINES:
            return text
        # small models count lines by eye and get it wrong; the total answers "how many lines"
        return text.rstrip("\n") + f"\n[end of file: {total} lines]"
    if not lines:
        return f"[file has {total} lines; offset {offset} is past the end]"
    note = f"[showing lines {offset}-{last} of {total}"
    if stopped_at is not None:
        note += f"; stopped at {MAX_READ_CHARS:,} characters"
    if last < total:
        note += f"; continue with offset={last + 1}"
    return text.rstrip("\n") + "\n" + note + "]"


def _read_window(path: Path, offset: int, limit: int) -> tuple[list[str], int, int | None]:
    """(lines in the window, total lines, line where the character cap stopped us or None)."""
    lines: list[str] = []
    size = 0
    total = 0
    stopped_at = None
    with open(path, encoding="utf-8", errors="replace", newline="") as handle:
        for total, line in enumerate(handle, start=1):
            if total < offset or len(lines) >= limit or stopped_at is not None:
                continue
            if size + len(line) > MAX_READ_CHARS and lines:
                stopped_at = total
                continue
            lines.append(line)
            size += len(line)
    return lines, total, stopped_at


def is_binary(sample: bytes) -> bool:
    """NUL bytes, or more than 10% control characters (ESC, tab and line breaks excepted).

    Text in another encoding than UTF-8 is not binary: it is read with replacement characters.
    """
    if b"\x00" in sample:
        return True
    controls = sum(1 for b in sample if (b < 9 or 13 < b < 32) and b != 27)
    return controls > len(sample) // 10


def write_text(ctx: ToolContext, filename: str, content: str, *, append: bool = False) -> str:
    resolved = ctx.resolve(filename)
    if resolved.is_dir():
        raise ToolError(f"'{filename}' is a directory")
    existed = resolved.exists()
    try:
        resolved.parent.mkdir(parents=True, exist_ok=True)
        with open(resolved, "a" if append else "w", encoding="utf-8", newline="") as handle:
            handle.write(content)
    except OSError as exc:
        raise ToolError(f"cannot write '{filename}': {exc.strerror or exc}") from exc
    size = len(content.encode("utf-8"))
    verb = "appended" if append else ("wrote" if existed else "created")
    return f"{verb} {size:,} bytes {'to' if append else 'in'} {ctx.relative(resolved)}"


def list_directory(ctx: ToolContext, path: str, recursive: bool) -> str:
    root = ctx.resolve(path, must_exist=True)
    if not root.is_dir():
        raise ToolError(f"'{path}' is not a directory; use action 'read' for files")
    entries: list[str] = []
    remaining = _walk_listing(root, "", recursive, entries)
    header = f"{ctx.relative(root)}/ ({len(entries)} entries{', recursive' if recursive else ''})"
    footer = f"\n... listing stopped at {MAX_LIST_ENTRIES} entries" if remaining else ""
    return header + "\n" + "\n".join(entries) + footer if entries else header + "\n(empty)"


def _walk_listing(directory: Path, prefix: str, recursive: bool, out: list[str]) -> bool:
    """Append entries below ``directory`` to ``out``; True when the entry cap was hit."""
    try:
        items = sorted(os.scandir(directory), key=lambda e: (not _is_dir(e), e.name.lower()))
    except OSError as exc:
        out.append(f"{prefix}(cannot read: {exc.strerror or exc})")
        return False
    for entry in items:
        if len(out) >= MAX_LIST_ENTRIES:
            return True
        name = prefix + entry.name
        if not _is_dir(entry):
            out.append(f"{name}  ({_size(entry)})")
            continue
        if not recursive or entry.is_symlink():
            out.append(name + "/")
        elif entry.name in SKIP_DIRS:
            out.append(name + "/  (not expanded)")
        else:
            out.append(name + "/")
            if _walk_listing(Path(entry.path), name + "/", recursive, out):
                return True
    return False


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _size(entry: os.DirEntry[str]) -> str:
    try:
        size: float = entry.stat().st_size  # bytes, then the unit's count
    except OSError:
        return "?"
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"
