"""toolkit_edit (exact string replacement) and toolkit_apply_patch (unified diffs)."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import tool
from tea_agent_mini.tools.files import patch as patching


@tool("toolkit_edit", mutates=True)
def toolkit_edit(
    ctx: ToolContext, file_path: str, old_string: str, new_string: str, replace_all: bool = False
) -> str:
    """Replace an exact piece of text in a file. old_string must match the file exactly
    (whitespace and indentation included) and occur exactly once, unless replace_all is true.
    Read the file first to copy the text precisely. With an empty old_string on a file that
    does not exist, the file is created with new_string. For changes to many places or files
    at once use toolkit_apply_patch.

    Args:
        file_path: file to edit, relative to the workspace
        old_string: exact text to replace, including indentation; include enough surrounding
            lines to make it unique. Empty to create a new file.
        new_string: the replacement text
        replace_all: replace every occurrence instead of requiring exactly one (default false)
    """
    path = ctx.resolve(file_path)
    if old_string == "":
        return _create(ctx, path, file_path, new_string)
    if not path.is_file():
        raise ToolError(f"'{file_path}' does not exist (to create it, pass an empty old_string)")
    if old_string == new_string:
        raise ToolError("old_string and new_string are the same; nothing to change")
    raw = _read(path, file_path)
    crlf = "\r\n" in raw and "\r" not in old_string
    text = raw.replace("\r\n", "\n") if crlf else raw
    count = text.count(old_string)
    if count == 0:
        raise ToolError(no_match_message(text, old_string, file_path))
    if count > 1 and not replace_all:
        lines = _match_lines(text, old_string)
        raise ToolError(
            f"old_string occurs {count} times in '{file_path}' (at lines "
            f"{', '.join(map(str, lines[:10]))}); add surrounding lines to make it unique, "
            "or set replace_all to true"
        )
    first_line = text[: text.index(old_string)].count("\n") + 1
    text = (
        text.replace(old_string, new_string)
        if replace_all
        else text.replace(old_string, new_string, 1)
    )
    if crlf:
        text = text.replace("\n", "\r\n")
    _write(path, text, file_path)
    done = count if replace_all else 1
    return (
        f"edited {ctx.relative(path)}: replaced {done} occurrence{'s' if done != 1 else ''} "
        f"(first at line {first_line})"
    )


def _create(ctx: ToolContext, path: Path, name: str, content: str) -> str:
    if path.exists() and (path.is_dir() or path.stat().st_size > 0):
        raise ToolError(
            f"'{name}' already exists; old_string may only be empty when creating a new file"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    _write(path, content, name)
    lines = len(content.splitlines())
    return f"created {ctx.relative(path)} ({lines} line{'s' if lines != 1 else ''})"


def _read(path: Path, name: str) -> str:
    data = path.read_bytes()
    if b"\x00" in data[:8192]:
        raise ToolError(f"'{name}' is a binary file; it cannot be edited as text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(f"'{name}' is not UTF-8 text ({exc.reason} at byte {exc.start})") from exc


def _write(path: Path, text: str, name: str) -> None:
    try:
        path.write_bytes(text.encode("utf-8"))
    except OSError as exc:
        raise ToolError(f"cannot write '{name}': {exc.strerror or exc}") from exc


def _match_lines(text: str, needle: str) -> list[int]:
    return [text.count("\n", 0, m.start()) + 1 for m in re.finditer(re.escape(needle), text)]


SHOWN_FILE_LINES = 60  # a file this small is shown whole when old_string matches nothing in it
SHOWN_FILE_CHARS = 3000


def no_match_message(text: str, old: str, name: str) -> str:
    message = f"old_string was not found in '{name}'"
    squashed_old = _squash(old)
    lines = text.split("\n")
    if squashed_old and squashed_old in _squash(text):
        return (
            message + "; it matches if whitespace is ignored, so the indentation, tabs/spaces or "
            "line breaks differ. Re-read the file and copy the text exactly."
        )
    first = next((line.strip() for line in old.split("\n") if line.strip()), "")
    stripped = [line.strip() for line in lines]
    close = difflib.get_close_matches(first, stripped, n=1, cutoff=0.6) if first else []
    if close:
        number = stripped.index(close[0]) + 1
        message += f". The closest line is {number}: {lines[number - 1]!r}"
    elif len(lines) <= SHOWN_FILE_LINES and len(text) <= SHOWN_FILE_CHARS:
        # a small model often edits a file it never read; its text saves that round trip
        return f"{message}. Its whole text is:\n{text.rstrip()}\nCopy old_string from it exactly."
    return message + ". Read the file again and copy old_string exactly."


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@tool("toolkit_apply_patch", mutates=True)
def toolkit_apply_patch(ctx: ToolContext, patch: str) -> str:
    """Apply a unified diff to one or more files in the workspace. Every hunk is checked before
    anything is written: if one does not fit, no file changes and the error says which hunk
    failed. Hunks are located by their context lines, so slightly wrong line numbers are fine.
    New files use '--- /dev/null', deleted files '+++ /dev/null'.

    Args:
        patch: a unified diff: for each file a '--- a/path' and '+++ b/path' line (use
            /dev/null for new or deleted files) followed by '@@ -l,n +l,n @@' hunks with ' '
            context, '-' removed and '+' added lines
    """
    changes = patching.plan_patch(ctx, patch)
    patching.write_changes(changes)
    return patching.summarize(changes)
