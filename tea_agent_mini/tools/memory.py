"""toolkit_memory: the model's own access to long-term memory (add, list, search, forget, pin).

The tool uses the runtime's MemoryManager when the context carries one (``ctx.memory``), so it
shares the configured embedder and the in-memory vector index. Otherwise it builds a manager on
``ctx.store`` with the built-in local embedder, which never replaces vectors another embedder
made (those are left for the runtime's manager).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args

from tea_agent_mini.errors import ToolError
from tea_agent_mini.memory.model import CATEGORIES, Priority
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import tool

if TYPE_CHECKING:
    from tea_agent_mini.memory.manager import MemoryManager
    from tea_agent_mini.store.memories import Memory

Action = Literal["add", "list", "search", "semantic_search", "forget", "pin", "unpin", "stats"]
ACTIONS: tuple[str, ...] = get_args(Action)
DEFAULT_LIMIT = 20
MAX_LIMIT = 200
MAX_CONTENT_CHARS = 2000


@tool(
    "toolkit_memory",
    concurrency_safe=False,
    keywords="remember recall forget memorize memorise",
)
def toolkit_memory(
    ctx: ToolContext,
    action: Action,
    content: str = "",
    priority: str | int | None = None,
    category: Annotated[str | None, {"enum": list(CATEGORIES)}] = None,
    tags: list[str] | str | None = None,
    expires_in_days: float | None = None,
    id: int | None = None,  # shadows the builtin: it is the name the model sees
    query: str = "",
    limit: Annotated[
        int, f"[list/search/semantic_search] at most this many (default {DEFAULT_LIMIT})"
    ] = DEFAULT_LIMIT,
) -> str:
    """Long-term memory that persists across conversations. Relevant memories are already
    shown to you at the start of each turn; use this tool to store something the user wants
    remembered (add), to look memories up (search, semantic_search, list), or to remove
    (forget) or protect (pin) one. Every memory shows as #id [PRIORITY category] text.

    Args:
        action: add a memory; list memories; search them (keywords and meaning);
            semantic_search (meaning only); forget one; pin/unpin one (pinned never fade);
            stats
        content: [add] what to remember, as one self-contained sentence
        priority: [add] CRITICAL (a rule always followed), HIGH, MEDIUM (default) or LOW, or
            0-3 / [list] show only this priority
        category: [add] kind of memory (default general) / [list] only this kind
        tags: [add] a few keywords / [list] a single tag to filter by
        expires_in_days: [add] forget it after this many days (reminders)
        id: [forget/pin/unpin] the memory's id
        query: [search/semantic_search] what to look for
    """
    manager = memory_manager(ctx)
    limit = max(1, min(MAX_LIMIT, int(limit)))
    if action == "add":
        return _add(ctx, manager, content, priority, category, tags, expires_in_days)
    if action == "list":
        return _list(manager, priority, category, tags, limit)
    if action in ("search", "semantic_search"):
        if not query.strip():
            raise ToolError(f"{action} needs a query: what to look for")
        if action == "search":
            return _render_hits(manager.search(query, limit), "matching")
        return _render_hits(manager.semantic_search(query, limit), "close in meaning to")
    if action in ("forget", "pin", "unpin"):
        return _by_id(manager, action, id)
    if action == "stats":
        return _stats(manager)
    raise ToolError(f"unknown action {action!r}; expected one of {', '.join(ACTIONS)}")


def memory_manager(ctx: ToolContext) -> MemoryManager:
    """The runtime's manager when the context carries one, else one on ``ctx.store``."""
    shared = ctx.memory
    if shared is not None:
        return shared
    if ctx.store is None:
        raise ToolError("long-term memory is not available here (no store)")
    from tea_agent_mini.memory.manager import MemoryManager

    return MemoryManager(ctx.store, reembed=False)


def _add(
    ctx: ToolContext,
    manager: MemoryManager,
    content: str,
    priority: str | int | None,
    category: str | None,
    tags: list[str] | str | None,
    expires_in_days: float | None,
) -> str:
    text = " ".join(content.split())
    if not text:
        raise ToolError("add needs content: the sentence to remember")
    if len(text) > MAX_CONTENT_CHARS:
        raise ToolError(
            f"content is {len(text)} characters; keep a memory under {MAX_CONTENT_CHARS} "
            "(store the gist, or several separate memories)"
        )
    if expires_in_days is not None and expires_in_days <= 0:
        raise ToolError("expires_in_days must be a positive number of days")
    try:
        outcome = manager.add(
            text,
            priority=Priority.MEDIUM if priority is None else priority,
            category=category or "general",
            tags=tags or (),
            expires_in_days=expires_in_days,
            source_topic=ctx.topic_id,
        )
    except ValueError as exc:
        raise ToolError(str(exc)) from exc
    verbs = {
        "added": "Remembered",
        "merged": "Merged into an existing memory",
        "duplicate": "Already remembered",
    }
    return f"{verbs.get(outcome.action, outcome.action)}: {describe(outcome.memory)}"


def _list(
    manager: MemoryManager,
    priority: str | int | None,
    category: str | None,
    tags: list[str] | str | None,
    limit: int,
) -> str:
    filters: dict[str, Any] = {"limit": limit}
    try:
        if priority is not None:
            filters["priority"] = Priority.parse(priority)
    except ValueError as exc:
        raise ToolError(str(exc)) from exc
    if category:
        filters["category"] = category
    tag = tags if isinstance(tags, str) else (tags[0] if tags else None)
    if tag:
        filters["tag"] = tag
    memories = manager.matching(**filters)
    if not memories:
        return "No memories" + (" match those filters." if len(filters) > 1 else " yet.")
    total = manager.stats().active
    head = f"{len(memories)} of {total} memories (strongest first):"
    return "\n".join([head, *(describe(m) for m in memories)])


def _render_hits(hits: list[tuple[Memory, float]], relation: str) -> str:
    if not hits:
        return f"No memory found {relation} the query."
    lines = [f"{len(hits)} memories {relation} the query (best first, score 0-1):"]
    lines += [f"{describe(memory)}  (score {score:.2f})" for memory, score in hits]
    return "\n".join(lines)


def _by_id(manager: MemoryManager, action: str, memory_id: int | None) -> str:
    if memory_id is None:
        raise ToolError(f"{action} needs the id of the memory (shown as #id)")
    if action == "forget":
        if not manager.forget(memory_id):
            raise ToolError(f"there is no memory #{memory_id} (list or search to find ids)")
        return f"Forgot memory #{memory_id}."
    memory = manager.pin(memory_id, action == "pin")
    if memory is None:
        raise ToolError(f"there is no memory #{memory_id} (list or search to find ids)")
    state = "Pinned (it will not fade or be dropped)" if memory.pinned else "Unpinned"
    return f"{state}: {describe(memory)}"


def _stats(manager: MemoryManager) -> str:
    stats = manager.stats()
    priorities = ", ".join(
        f"{Priority(p).name} {stats.by_priority.get(p, 0)}" for p in range(len(Priority))
    )
    categories = ", ".join(f"{k} {v}" for k, v in sorted(stats.by_category.items())) or "none"
    embedded = sum(stats.embedded.values())
    return "\n".join(
        [
            f"Active memories: {stats.active} (pinned {stats.pinned})",
            f"By priority: {priorities}",
            f"By category: {categories}",
            f"Expired: {stats.expired}, forgotten: {stats.deleted}",
            f"With vectors: {embedded} (embedder {stats.embedder}); "
            f"keyword search: {stats.keyword_backend}",
        ]
    )


def describe(memory: Memory) -> str:
    """``#12 [HIGH preference] text (tags: a, b; expires 2025-01-31; pinned)``."""
    notes = []
    if memory.tags:
        notes.append("tags: " + ", ".join(memory.tags))
    if memory.expires_at is not None:
        notes.append("expires " + time.strftime("%Y-%m-%d", time.localtime(memory.expires_at)))
    if memory.pinned:
        notes.append("pinned")
    suffix = f" ({'; '.join(notes)})" if notes else ""
    label = f"{Priority(memory.priority).name} {memory.category}"
    return f"#{memory.id} [{label}] {memory.content}{suffix}"
