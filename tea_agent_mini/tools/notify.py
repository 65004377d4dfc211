"""toolkit_notify: a desktop notification when the machine can show one, else a UI notice
(the work is done by ``toolkit/notices.py``, which scheduled tasks use as well)."""

from __future__ import annotations

from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.notices import URGENCIES, notify
from tea_agent_mini.toolkit.registry import tool

PARAMETERS = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "description": "short headline"},
        "message": {"type": "string", "description": "the notification text"},
        "urgency": {
            "type": "string",
            "enum": list(URGENCIES),
            "description": "low, normal (default) or critical",
        },
    },
    "required": ["title", "message"],
}


@tool(
    "toolkit_notify",
    "Notify the user, e.g. when a long task finishes or needs attention. Shows a desktop "
    "notification (notify-send on Linux, osascript on macOS) when the machine has one; "
    "otherwise the notice is saved and shown in the web UI, and the result says which "
    "happened.",
    PARAMETERS,
)
def toolkit_notify(ctx: ToolContext, title: str, message: str, urgency: str = "normal") -> str:
    return notify(ctx, title, message, urgency)
