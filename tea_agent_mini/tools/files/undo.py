"""Undo snapshots for the editing tools, kept in the topic's tool state.

Before toolkit_diff, toolkit_diff_edit or toolkit_batch_process change files, they record each
file's previous bytes (or that it did not exist) and a hash of what they wrote. ``undo_last``
puts the previous contents back, unless a file was changed again since (``force`` overrides).
"""

from __future__ import annotations

import base64
import hashlib
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.tools.files.fileio import read_bytes_or_none, write_atomic

STATE_KEY = "toolkit_diff.undo"
MAX_ENTRIES = 20
MAX_SNAPSHOT_BYTES = 4 * 1024 * 1024
# the whole stack lives in one state value: oldest steps are dropped beyond this
MAX_STACK_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class FileBefore:
    path: Path
    before: bytes | None  # None: the file did not exist


def capture(paths: Iterable[Path]) -> list[FileBefore]:
    """What the files hold now (call before writing them)."""
    seen: dict[Path, FileBefore] = {}
    for path in paths:
        if path not in seen:
            seen[path] = FileBefore(path, read_bytes_or_none(path))
    return list(seen.values())


def digest(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def record(ctx: ToolContext, label: str, befores: list[FileBefore]) -> str:
    """Push a snapshot (call after writing). Returns a note for the tool's answer."""
    size = sum(len(item.before or b"") for item in befores)
    if size > MAX_SNAPSHOT_BYTES:
        return f"(no undo snapshot: the previous contents are over {MAX_SNAPSHOT_BYTES:,} bytes)"
    entry = {
        "label": label,
        "time": time.strftime("%Y-%m-%d %H:%M:%S"),
        "files": [
            {
                "path": str(item.path),
                "before": _encode(item.before),
                "after": digest(read_bytes_or_none(item.path)),
            }
            for item in befores
        ],
    }
    stack = [*(ctx.state_get(STATE_KEY, []) or []), entry][-MAX_ENTRIES:]
    while len(stack) > 1 and sum(map(_entry_size, stack)) > MAX_STACK_BYTES:
        stack.pop(0)
    ctx.state_set(STATE_KEY, stack)
    return f"(undo with toolkit_diff action='undo'; {len(stack)} step(s) recorded)"


def _entry_size(entry: dict) -> int:
    return sum(len(item["before"] or "") for item in entry["files"])


def _encode(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode("ascii")


def undo_last(ctx: ToolContext, force: bool = False) -> str:
    """Restore the files of the most recent snapshot and drop it from the stack."""
    stack = list(ctx.state_get(STATE_KEY, []) or [])
    if not stack:
        raise ToolError(
            "nothing to undo: no change by toolkit_diff, toolkit_diff_edit or "
            "toolkit_batch_process was recorded in this session"
        )
    entry = stack[-1]
    files = [(ctx.resolve(item["path"]), item) for item in entry["files"]]
    changed = [
        ctx.relative(path)
        for path, item in files
        if digest(read_bytes_or_none(path)) != item["after"]
    ]
    if changed and not force:
        raise ToolError(
            f"not undone: {', '.join(changed)} changed after '{entry['label']}'; undoing would "
            "lose those later edits. Pass force=true to restore the earlier contents anyway."
        )
    lines = [f"undid '{entry['label']}' ({entry['time']}):"]
    for path, item in files:
        lines.append("  " + _restore(ctx, path, item["before"]))
    ctx.state_set(STATE_KEY, stack[:-1])
    if len(stack) > 1:
        lines.append(f"{len(stack) - 1} earlier step(s) can still be undone")
    return "\n".join(lines)


def _restore(ctx: ToolContext, path: Path, encoded: str | None) -> str:
    shown = ctx.relative(path)
    if encoded is None:
        try:
            path.unlink(missing_ok=True)
        except OSError as exc:
            raise ToolError(f"cannot remove '{shown}': {exc.strerror or exc}") from exc
        return f"removed {shown} (it did not exist before)"
    write_atomic(path, base64.b64decode(encoded), label=shown)
    return f"restored {shown}"
