"""toolkit_diff_edit (one replacement, shown as a diff) and toolkit_diff (generate, preview,
apply and undo a change to several files).

Unified diffs are applied by ``patch.py``; every write records an undo snapshot (``undo.py``).
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import tool
from tea_agent_mini.tools.files import patch as patching
from tea_agent_mini.tools.files import undo
from tea_agent_mini.tools.files.edit import no_match_message
from tea_agent_mini.tools.files.fileio import read_utf8, write_atomic

MAX_CONTEXT_LINES = 20


def unified_diff(
    old: str | None, new: str | None, path: str, context: int = 3, *, new_path: str = ""
) -> str:
    """A unified diff that ``patch.py`` (and git apply) accept; None means no file."""
    old_label = "/dev/null" if old is None else f"a/{path}"
    new_label = "/dev/null" if new is None else f"b/{new_path or path}"
    lines = difflib.unified_diff(
        _lines(old or ""),
        _lines(new or ""),
        old_label,
        new_label,
        n=context,
    )
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _lines(text: str) -> list[str]:
    # only at \n, as patch.py splits files: str.splitlines would also split at \r and \f
    return re.findall(r"[^\n]*\n|[^\n]+", text)


def count_changes(diff: str) -> tuple[int, int]:
    """(added, removed) lines of a unified diff."""
    added = removed = 0
    for line in diff.splitlines():
        if line.startswith("+") and not line.startswith("+++ "):
            added += 1
        elif line.startswith("-") and not line.startswith("--- "):
            removed += 1
    return added, removed


def replace_unique(text: str, old: str, new: str, label: str) -> str:
    """``text`` with the single occurrence of ``old`` replaced (CRLF files handled)."""
    if not old:
        raise ToolError("old_string is empty; to create a file use toolkit_save_file")
    if old == new:
        raise ToolError("old_string and new_string are the same; nothing to change")
    crlf = "\r\n" in text and "\r" not in old
    body = text.replace("\r\n", "\n") if crlf else text
    count = body.count(old)
    if count == 0:
        raise ToolError(no_match_message(body, old, label))
    if count > 1:
        lines = [body.count("\n", 0, m.start()) + 1 for m in re.finditer(re.escape(old), body)]
        raise ToolError(
            f"old_string occurs {count} times in '{label}' (at lines "
            f"{', '.join(map(str, lines[:10]))}); add surrounding lines to make it unique"
        )
    body = body.replace(old, new, 1)
    return body.replace("\n", "\r\n") if crlf else body


# ---- toolkit_diff_edit ---------------------------------------------------------------------


@tool("toolkit_diff_edit", mutates=True)
def toolkit_diff_edit(
    ctx: ToolContext, file_path: str, old_string: str, new_string: str, preview: bool = False
) -> str:
    """Replace one exact piece of text in a file and show the change as a unified diff.
    old_string must occur exactly once (whitespace included). With preview=true nothing is
    written: you see the diff and can call again with preview=false to apply it. Applied
    edits can be reverted with toolkit_diff action='undo'.

    Args:
        file_path: file to edit, relative to the workspace
        old_string: exact text to replace
        new_string: the replacement text
        preview: only show the diff, do not change the file (default false)
    """
    path = ctx.resolve(file_path)
    shown = ctx.relative(path)
    text = read_utf8(path, file_path)
    changed = replace_unique(text, old_string, new_string, file_path)
    diff = unified_diff(text, changed, shown)
    added, removed = count_changes(diff)
    if preview:
        return (
            f"preview only, {shown} was not changed (+{added} -{removed}); call again with "
            f"preview=false to apply:\n{diff}"
        )
    befores = undo.capture([path])
    write_atomic(path, changed.encode("utf-8"), label=shown)
    note = undo.record(ctx, f"diff_edit {shown}", befores)
    return f"edited {shown} (+{added} -{removed}) {note}\n{diff}"


# ---- toolkit_diff --------------------------------------------------------------------------

Action = Literal["generate", "preview", "apply", "undo"]
FILE_CHANGE_SCHEMA: dict[str, Any] = {  # one item of `files`
    "type": "object",
    "properties": {
        "file_path": {"type": "string"},
        "new_content": {"type": "string"},
        "old_string": {"type": "string"},
        "new_string": {"type": "string"},
    },
    "required": ["file_path"],
}


@tool("toolkit_diff", mutates=True, mutating_actions=("apply", "undo"))
def toolkit_diff(
    ctx: ToolContext,
    action: Action,
    files: Annotated[list[dict[str, Any]] | None, {"items": FILE_CHANGE_SCHEMA}] = None,
    patch: str | None = None,
    from_file: str | None = None,
    to_file: str | None = None,
    context_lines: int = 3,
    force: bool = False,
) -> str:
    """Work with multi-file changes as unified diffs. generate: make a diff without writing
    (from `files` changes, or between the files `from_file` and `to_file`). preview: check
    that `files` or a `patch` apply and show the resulting diff, writing nothing. apply:
    apply `files` or a unified-diff `patch` to all files at once (nothing is written if any
    part does not fit) and record an undo step. undo: restore the files changed by the last
    apply (also undoes toolkit_diff_edit and toolkit_batch_process).

    Args:
        action: generate or preview a diff, apply a patch, or undo the last change
        files: [generate/preview/apply] changes as objects: {file_path, new_content} replaces
            (or creates) the whole file; {file_path, old_string, new_string} replaces one
            exact, unique piece of text
        patch: [preview/apply] a unified diff ('--- a/path', '+++ b/path', '@@' hunks), e.g.
            the output of generate
        from_file: [generate] the old file
        to_file: [generate] the new file
        context_lines: [generate/preview] unchanged lines around each change (default 3)
        force: [undo] restore even when a file was changed again since
    """
    context = min(max(0, context_lines), MAX_CONTEXT_LINES)
    if action == "undo":
        return undo.undo_last(ctx, force)
    if action == "generate" and (from_file or to_file):
        return _compare_files(ctx, from_file, to_file, context)
    if action not in ("generate", "preview", "apply"):
        raise ToolError(f"unknown action {action!r}; use generate, preview, apply or undo")
    if files and patch:
        raise ToolError("pass either `files` or `patch`, not both")
    if patch and action == "generate":
        raise ToolError(
            "generate makes a patch from `files` or from_file/to_file; to check a patch use preview"
        )
    if files:
        changes = plan_files(ctx, files)
    elif patch:
        changes = patching.plan_patch(ctx, patch)
    else:
        raise ToolError(f"action '{action}' needs `files` or `patch`")
    if action == "apply":
        return apply_changes(ctx, changes, "toolkit_diff apply")
    diff = render_changes(changes, context)
    if action == "generate":
        return diff or "(no differences)"
    summary = patching.summarize(changes).replace("Applied patch to", "Would change", 1)
    return f"preview, nothing written:\n{summary}\n\n{diff}"


def _compare_files(ctx: ToolContext, old: str | None, new: str | None, context: int) -> str:
    if not old or not new:
        raise ToolError("comparing files needs both from_file and to_file")
    old_path = ctx.resolve(old, must_exist=True)
    new_path = ctx.resolve(new, must_exist=True)
    old_text = read_utf8(old_path, old)
    new_text = read_utf8(new_path, new)
    old_label, new_label = ctx.relative(old_path), ctx.relative(new_path)
    text = unified_diff(old_text, new_text, old_label, context, new_path=new_label)
    return text or f"{old_label} and {new_label} are identical"


def plan_files(ctx: ToolContext, entries: list[dict[str, Any]]) -> list[patching.FileChange]:
    """The new content of every file named in ``entries``; nothing is written."""
    originals: dict[Path, str | None] = {}
    planned: dict[Path, str] = {}
    for number, entry in enumerate(entries, start=1):
        name = entry.get("file_path") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name.strip():
            raise ToolError(f"files[{number - 1}] needs a 'file_path'")
        path = ctx.resolve(name)
        if path not in originals:
            originals[path] = read_utf8(path, name) if path.exists() else None
        current = planned.get(path, originals[path])
        planned[path] = _entry_content(entry, current, name, number)
    changes = []
    for path, text in planned.items():
        before = originals[path]
        if text == before:
            continue
        added, removed = count_changes(unified_diff(before, text, path.name))
        kind = "A" if before is None else "M"
        changes.append(
            patching.FileChange(path, ctx.relative(path), kind, text, None, added, removed)
        )
    if not changes:
        raise ToolError("the changes leave every file as it is; nothing to do")
    return changes


def _entry_content(entry: dict[str, Any], current: str | None, name: str, number: int) -> str:
    if isinstance(entry.get("new_content"), str):
        return entry["new_content"]
    old, new = entry.get("old_string"), entry.get("new_string")
    if not isinstance(old, str) or not isinstance(new, str):
        raise ToolError(
            f"files[{number - 1}] ({name}) needs new_content, or old_string and new_string"
        )
    if current is None:
        raise ToolError(f"'{name}' does not exist; give its new_content to create it")
    return replace_unique(current, old, new, name)


def render_changes(changes: list[patching.FileChange], context: int = 3) -> str:
    """The planned changes as one unified diff (current files on disk vs planned content)."""
    parts = []
    for change in changes:
        before: str | None
        if change.kind == "R" and change.removed_path is not None:
            before = read_utf8(change.removed_path, change.display)
            parts.append(f"renamed {change.removed_path.name} -> {change.display}\n")
        else:
            before = read_utf8(change.path, change.display) if change.path.exists() else None
        parts.append(unified_diff(before, change.text, change.display, context))
    return "".join(parts)


def apply_changes(ctx: ToolContext, changes: list[patching.FileChange], label: str) -> str:
    """Write planned changes; on a failure restore what was written. Records an undo step."""
    paths = [change.path for change in changes]
    paths += [change.removed_path for change in changes if change.removed_path is not None]
    befores = undo.capture(paths)
    try:
        patching.write_changes(changes)
    except ToolError:
        for item in befores:
            _put_back(item)
        raise
    note = undo.record(ctx, label, befores)
    return f"{patching.summarize(changes)}\n{note}"


def _put_back(item: undo.FileBefore) -> None:
    try:
        if item.before is None:
            item.path.unlink(missing_ok=True)
        else:
            item.path.write_bytes(item.before)
    except OSError:
        pass  # the original error is the one to report
