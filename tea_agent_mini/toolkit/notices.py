"""Notices for the user: a desktop notification when the machine can show one, else a notice
saved in the topic's state for the web UI.

``toolkit_notify`` (``tools/notify.py``) and scheduled tasks that notify when they finish
(``scheduler/execute.py``) both go through :func:`notify`; ``GET /v1/notices`` reads the saved
ones back with :func:`recent_notices`.
"""

from __future__ import annotations

import datetime as dt
import shutil
import subprocess
import sys
from typing import TYPE_CHECKING, Any

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext

if TYPE_CHECKING:
    from tea_agent_mini.store import Store

URGENCIES = ("low", "normal", "critical")
NOTICES_KEY = "notices"
MAX_NOTICES = 50
TIMEOUT = 10.0
APP_NAME = "tea_agent_mini"
# osascript gets the texts as arguments rather than spliced into the script, so quotes in a
# message cannot break out of the AppleScript string.
APPLESCRIPT = (
    "on run argv",
    "display notification (item 2 of argv) with title (item 1 of argv)",
    "end run",
)


def notify(ctx: ToolContext, title: str, message: str, urgency: str = "normal") -> str:
    """Show the notice on the desktop, or save it (and pass it to ``ctx.on_notice``); the
    result says which happened.

    Raises:
        ToolError: an unknown urgency, or nothing to say.
    """
    if urgency not in URGENCIES:
        raise ToolError(f"urgency must be one of {', '.join(URGENCIES)}, not {urgency!r}")
    if not title.strip() and not message.strip():
        raise ToolError("title and message are both empty")
    reason = desktop_notify(title, message, urgency)
    if reason is None:
        return f"Desktop notification shown: {title}"
    store_notice(ctx, title, message, urgency)
    if ctx.on_notice is not None:
        ctx.on_notice(title, message, urgency)
    return (
        f"No desktop notification ({reason}). The notice was saved instead and will show in "
        f"the web UI: {title}"
    )


def desktop_notify(title: str, message: str, urgency: str) -> str | None:
    """Show the notification; None when shown, else why not."""
    command = _command(title, message, urgency)
    if command is None:
        return "neither notify-send nor osascript is available on this machine"
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL
        )
    except subprocess.TimeoutExpired:
        return f"{command[0]} did not finish within {TIMEOUT:g} s"
    except OSError as exc:
        return f"{command[0]} could not be run: {exc}"
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip().splitlines()
        return f"{command[0]} failed: {detail[0] if detail else f'exit {done.returncode}'}"
    return None


def _command(title: str, message: str, urgency: str) -> list[str] | None:
    if sys.platform == "darwin":
        osascript = shutil.which("osascript")
        if osascript:
            script = [part for line in APPLESCRIPT for part in ("-e", line)]
            return [osascript, *script, title, message]
    notify_send = shutil.which("notify-send")
    if notify_send:
        return [notify_send, f"--urgency={urgency}", f"--app-name={APP_NAME}", "--", title, message]
    return None


def store_notice(ctx: ToolContext, title: str, message: str, urgency: str) -> None:
    """Append a notice to the topic's state (the newest MAX_NOTICES are kept)."""
    notices: list[dict[str, Any]] = list(ctx.state_get(NOTICES_KEY, None) or [])
    notices.append(
        {
            "title": title,
            "message": message,
            "urgency": urgency,
            "time": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        }
    )
    ctx.state_set(NOTICES_KEY, notices[-MAX_NOTICES:])


def recent_notices(store: Store, limit: int = MAX_NOTICES) -> list[dict[str, Any]]:
    """The newest stored notices of every topic, newest first; each carries ``topic_id``
    (None for notices stored outside any topic, e.g. by a task that has no session yet)."""
    from tea_agent_mini.store.state import TOPIC_PREFIX

    notices: list[dict[str, Any]] = []
    for scope, stored in store.state.by_key(NOTICES_KEY).items():
        topic = scope.removeprefix(TOPIC_PREFIX) if scope.startswith(TOPIC_PREFIX) else None
        for notice in stored if isinstance(stored, list) else []:
            if isinstance(notice, dict):
                notices.append({**notice, "topic_id": None if topic == "default" else topic})
    notices.sort(key=lambda n: str(n.get("time", "")), reverse=True)
    return notices[:limit]
