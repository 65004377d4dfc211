"""toolkit_todo: the agent's checklist for the current topic, kept in the store across turns."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any, Literal

from tea_agent_mini.errors import ToolError
from tea_agent_mini.store.worklist import TODO_KEY, TODO_STATUSES, TodoItem, render_todo
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import tool

MAX_ITEMS = 100


def load_items(ctx: ToolContext) -> list[TodoItem]:
    raw = ctx.state_get(TODO_KEY) or {}
    items = raw.get("items", []) if isinstance(raw, dict) else []
    return [TodoItem(int(i["id"]), str(i["text"]), str(i.get("status", "pending"))) for i in items]


def save_items(ctx: ToolContext, items: list[TodoItem]) -> None:
    ctx.state_set(TODO_KEY, {"items": [asdict(item) for item in items]})


@tool("toolkit_todo", concurrency_safe=False)
def toolkit_todo(
    ctx: ToolContext,
    action: Literal["list", "add", "update", "remove", "clear"],
    items: list[str] | None = None,
    text: str | None = None,
    id: int | None = None,  # the name the model sees, though it shadows a builtin
    status: Annotated[str | None, {"enum": list(TODO_STATUSES)}] = None,
) -> str:
    """Keep a checklist for the current multi-step task; it persists across turns of this
    topic. Add the steps at the start, mark one in_progress while working on it and done when
    finished. Statuses: pending, in_progress, done. Only one item is in_progress at a time:
    setting another item in_progress moves the previous one back to pending. Every action
    returns the whole list.

    Args:
        action: list the items, add new ones, update one (status and/or text), remove one, or
            clear the whole list
        items: [add] texts of the new items, in order
        text: [add] one new item / [update] its new text
        id: [update/remove] the item's number
        status: [update] new status
    """
    todo = load_items(ctx)
    if action == "list":
        return render_todo(todo)
    if action == "add":
        _add(todo, [*(items or []), *([text] if text else [])])
    elif action == "update":
        _update(todo, _find(todo, id), text, status)
    elif action == "remove":
        todo.remove(_find(todo, id))
    elif action == "clear":
        todo = []
    else:
        raise ToolError(f"unknown action {action!r}; use list, add, update, remove or clear")
    save_items(ctx, todo)
    return render_todo(todo)


def _add(todo: list[TodoItem], texts: list[str]) -> None:
    texts = [t.strip() for t in texts if t and t.strip()]
    if not texts:
        raise ToolError("add needs 'items' (a list of texts) or 'text'")
    if len(todo) + len(texts) > MAX_ITEMS:
        raise ToolError(f"the list can hold at most {MAX_ITEMS} items; remove some first")
    next_id = max((item.id for item in todo), default=0) + 1
    for offset, entry in enumerate(texts):
        todo.append(TodoItem(next_id + offset, entry))


def _find(todo: list[TodoItem], item_id: Any) -> TodoItem:
    if item_id is None:
        raise ToolError("this action needs 'id' (the item's number)")
    for item in todo:
        if item.id == item_id:
            return item
    known = ", ".join(str(item.id) for item in todo) or "none"
    raise ToolError(f"no todo item with id {item_id} (ids: {known})")


def _update(todo: list[TodoItem], item: TodoItem, text: str | None, status: str | None) -> None:
    if text is None and status is None:
        raise ToolError("update needs 'status' and/or 'text'")
    if text is not None:
        if not text.strip():
            raise ToolError("text must not be empty")
        item.text = text.strip()
    if status is not None:
        if status not in TODO_STATUSES:
            raise ToolError(f"status must be one of {', '.join(TODO_STATUSES)}")
        if status == "in_progress":
            for other in todo:
                if other is not item and other.status == "in_progress":
                    other.status = "pending"
        item.status = status
