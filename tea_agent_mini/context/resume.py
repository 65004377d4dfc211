"""L0's "unfinished work" section: the topic's open plan and todo list, so a turn can resume them.

The records and their checklists are ``store/worklist.py``'s, the ones ``toolkit_plan`` and
``toolkit_todo`` show, so the section reads like the tools' output the model already knows.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from ..errors import StoreError
from ..store.state import topic_scope
from ..store.worklist import PLAN_KEY, TODO_KEY, Plan, TodoItem, render_plan, render_todo

if TYPE_CHECKING:
    from ..store import Store

__all__ = ["unfinished_work_section"]

log = logging.getLogger(__name__)

MAX_CHARS = 3000
HEADER = (
    "Unfinished work in this conversation (continue it when the user asks to go on; keep the "
    "plan and todo list up to date with their tools):"
)


def unfinished_work_section(store: Store, topic_id: str, max_chars: int = MAX_CHARS) -> str:
    """The open plan and todo list of the topic as a prompt section, or "" when all is done."""
    try:
        state = store.state.items(topic_scope(topic_id))
    except StoreError as exc:  # a damaged value must not cost the turn its prompt
        log.warning("cannot read the plan and todo list of %s: %s", topic_id, exc)
        return ""
    parts = [
        part for part in (_plan_text(state.get(PLAN_KEY)), _todo_text(state.get(TODO_KEY))) if part
    ]
    if not parts:
        return ""
    text = HEADER + "\n" + "\n\n".join(parts)
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"


def _plan_text(raw: Any) -> str:
    plan = Plan.from_state(raw)
    return render_plan(plan) if plan is not None and plan.unfinished else ""


def _todo_text(raw: Any) -> str:
    entries = raw.get("items", []) if isinstance(raw, dict) else []
    items = [
        TodoItem(int(e.get("id", 0)), str(e.get("text", "")), str(e.get("status", "pending")))
        for e in entries
        if isinstance(e, dict)
    ]
    return render_todo(items) if any(item.status != "done" for item in items) else ""
