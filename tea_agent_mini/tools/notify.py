"""toolkit_notify: a desktop notification when the machine can show one, else a UI notice
(the work is done by ``toolkit/notices.py``, which scheduled tasks use as well)."""

from __future__ import annotations

from typing import Literal

from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.notices import notify
from tea_agent_mini.toolkit.registry import tool

# the values of notices.URGENCIES (a test checks they agree)
Urgency = Literal["low", "normal", "critical"]


@tool("toolkit_notify")
def toolkit_notify(ctx: ToolContext, title: str, message: str, urgency: Urgency = "normal") -> str:
    """Notify the user, e.g. when a long task finishes or needs attention. Shows a desktop
    notification (notify-send on Linux, osascript on macOS) when the machine has one;
    otherwise the notice is saved and shown in the web UI, and the result says which happened.

    Args:
        title: short headline
        message: the notification text
        urgency: low, normal (default) or critical
    """
    return notify(ctx, title, message, urgency)
