"""The context block: a turn's volatile context, placed just before the latest user message.

Servers reuse a cached prompt only for an identical prefix. The system prompt and the tool list
stay the same across a session; what changes from turn to turn (the time, the summary of earlier
turns, relevant earlier exchanges, memories, skills, unfinished work, the mode) travels in this
block instead, so only the tail of a request is new.
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["context_block", "time_line", "with_context", "workspace_overview"]

CONTEXT_OPEN = "<context>"
CONTEXT_CLOSE = "</context>"
CONTEXT_NOTE = "(Context for this turn, added by the agent, not written by the user.)"


def context_block(sections: Sequence[str]) -> str:
    """The non-empty ``sections`` wrapped as one block ("" when all are empty)."""
    body = "\n\n".join(s for s in sections if s)
    if not body:
        return ""
    return f"{CONTEXT_OPEN}\n{CONTEXT_NOTE}\n{body}\n{CONTEXT_CLOSE}"


def with_context(message: dict[str, Any], block: str) -> dict[str, Any]:
    """``message`` (a user message in request form) with ``block`` before its content."""
    content = message.get("content")
    if isinstance(content, list):
        return {**message, "content": [{"type": "text", "text": block}, *content]}
    text = content if isinstance(content, str) else ""
    return {**message, "content": f"{block}\n\n{text}" if text else block}


def time_line(now: _dt.datetime | None = None) -> str:
    moment = (now or _dt.datetime.now()).astimezone()
    return f"Local time: {moment.strftime('%Y-%m-%d %H:%M %Z')} ({moment.strftime('%A')})"


def workspace_overview(workspace: Path, limit: int) -> str:
    """The workspace's top-level entries (directories marked ``/``; hidden ones left out), at
    most ``limit``: real names to start from, so a model need not guess a file's path."""
    from ..toolkit.context import SKIP_DIRS

    try:
        with os.scandir(workspace) as entries:
            names = sorted(
                entry.name + ("/" if entry.is_dir() else "")
                for entry in entries
                if not entry.name.startswith(".") and entry.name not in SKIP_DIRS
            )
    except OSError:
        return ""
    if not names:
        return "Workspace: empty."
    shown = ", ".join(names[:limit])
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return f"Workspace top level: {shown}{more}."
