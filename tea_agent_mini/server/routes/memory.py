"""Long-term memory over REST: list (with ``?q=`` hybrid search), add, read, edit, forget, stats.

Every call goes to the runtime's ``MemoryManager`` (``runtime.memory``) in a worker thread, so the
REST API, the ``toolkit_memory`` tool and turn-time selection share one embedder and vector index.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ...memory.model import CATEGORIES, Priority, parse_category
from ..api_errors import ApiError, not_found
from ..bodies import Fields, path_id, query_bool, query_int, read_json
from ..paging import MAX_OFFSET, limit_of, page_json, trim
from ..spec import endpoint
from ..state import ServerState, blocking, state
from .memory_views import (
    MEMORY_ADD,
    MEMORY_ADDED,
    MEMORY_DELETED,
    MEMORY_LIST,
    MEMORY_PATCH,
    MEMORY_SCHEMA,
    MEMORY_STATS,
    memory_json,
    stats_json,
)

if TYPE_CHECKING:
    from ...memory.manager import MemoryManager
    from ...store.memories import Memory

CONTENT_LIMIT = 4000
SEARCH_POOL = 1000
ADD_FIELDS = ("content", "priority", "importance", "category", "tags", "expires_in_days", "pinned")
PATCH_FIELDS = ("content", "priority", "importance", "category", "tags", "expires_at", "pinned")
PRIORITY_TEXT = "CRITICAL, HIGH, MEDIUM, LOW or 0-3"

# -- input checks -----------------------------------------------------------------------------


def parse_priority(value: object, where: str) -> Priority:
    try:
        return Priority.parse(value)
    except ValueError as exc:
        raise ApiError(400, f"{where}: expected {PRIORITY_TEXT}, got {value!r}") from exc


def parse_known_category(value: object, where: str) -> str:
    category = parse_category(value, default="") if isinstance(value, str) else ""
    if not category:
        raise ApiError(400, f"{where}: expected one of {', '.join(CATEGORIES)}, got {value!r}")
    return category


def _check_known(body: Fields, allowed: tuple[str, ...]) -> None:
    unknown = sorted(set(body.data) - set(allowed))
    if unknown:
        raise ApiError(400, f"unknown field(s) {', '.join(unknown)}; expected {', '.join(allowed)}")


def _content(body: Fields, required: bool) -> str | None:
    text = body.text("content", required=required, max_length=CONTENT_LIMIT)
    if text is not None and not text.strip():
        raise ApiError(400, "field 'content' must not be empty")
    return text


def _importance(body: Fields) -> int | None:
    value = body.integer("importance")
    if value is not None and not 1 <= value <= 5:
        raise ApiError(400, f"field 'importance' must be 1-5, got {value}")
    return value


def _tags(body: Fields) -> list[str] | str | None:
    raw = body.raw("tags")
    if raw is None or isinstance(raw, str):
        return raw
    return body.str_list("tags", max_items=32)


def _number(body: Fields, name: str) -> float | None:
    value = body.raw(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ApiError(400, f"field '{name}': expected a number, got {value!r}")
    return float(value)


def add_arguments(body: Fields) -> dict[str, Any]:
    """The keyword arguments of ``MemoryManager.add`` from a checked POST body."""
    _check_known(body, ADD_FIELDS)
    arguments: dict[str, Any] = {"content": _content(body, required=True)}
    if body.raw("priority") is not None:
        arguments["priority"] = parse_priority(body.raw("priority"), "field 'priority'")
    importance = _importance(body)
    if importance is not None:
        arguments["importance"] = importance
    if body.raw("category") is not None:
        arguments["category"] = parse_known_category(body.raw("category"), "field 'category'")
    arguments["tags"] = _tags(body) or ()
    days = _number(body, "expires_in_days")
    if days is not None and days <= 0:
        raise ApiError(400, "field 'expires_in_days' must be a positive number of days")
    arguments["expires_in_days"] = days
    arguments["pinned"] = body.flag("pinned")
    return arguments


def patch_changes(body: Fields) -> dict[str, Any]:
    """The changes of ``MemoryManager.update`` from a checked PATCH body."""
    _check_known(body, PATCH_FIELDS)
    if not body.data:
        raise ApiError(400, f"nothing to change: send one of {', '.join(PATCH_FIELDS)}")
    changes: dict[str, Any] = {}
    content = _content(body, required=False)
    if content is not None:
        changes["content"] = content.strip()
    if body.raw("priority") is not None:
        changes["priority"] = parse_priority(body.raw("priority"), "field 'priority'")
    importance = _importance(body)
    if importance is not None:
        changes["importance"] = importance
    if body.raw("category") is not None:
        changes["category"] = parse_known_category(body.raw("category"), "field 'category'")
    if "tags" in body:
        changes["tags"] = _tags(body) or ()
    if "expires_at" in body:
        changes["expires_at"] = _number(body, "expires_at")
    if body.raw("pinned") is not None:
        changes["pinned"] = body.flag("pinned")
    if not changes:
        raise ApiError(400, "nothing to change: every field sent was null")
    return changes


# -- routes -----------------------------------------------------------------------------------


def _manager(st: ServerState) -> MemoryManager:
    return st.runtime.memory


def _list(
    st: ServerState, filters: dict[str, Any], expired: bool, query: str, limit: int, offset: int
) -> tuple[float, list[tuple[Memory, float | None]]]:
    """(now, [(memory, search score or None)]) for GET /v1/memory, in a worker thread; ``limit``
    items at most (the route asks for one more than it returns, to know if more follow)."""
    manager = _manager(st)
    now = manager.clock()
    if query:
        # filters apply to the hits, so search the whole pool when there are any
        pool = SEARCH_POOL if filters else offset + limit
        hits = [(m, s) for m, s in manager.search(query, limit=pool) if _matches(m, filters)]
        return now, list(hits[offset : offset + limit])
    found = manager.matching(limit=limit, offset=offset, include_expired=expired, **filters)
    return now, [(m, None) for m in found]


def _matches(memory: Memory, filters: dict[str, Any]) -> bool:
    return all(getattr(memory, name) == value for name, value in filters.items())


@endpoint(
    "List or search memories",
    tag="memory",
    query={
        "q": "str - hybrid search (keywords and meaning), best first",
        "priority": "str - CRITICAL, HIGH, MEDIUM, LOW or 0-3",
        "category": "str - instruction, preference, fact, reminder or general",
        "pinned": "bool",
        "include_expired": "bool - also memories past their expiry (not with q)",
        "limit": "int - at most 500 (default 100)",
        "offset": f"int - memories to skip (with q: offset + limit at most {SEARCH_POOL})",
    },
    response=MEMORY_LIST,
    errors=(400,),
    description=(
        "Without `q`: strongest priority first, then most recently updated. `has_more` says "
        "more follow at offset + limit."
    ),
)
async def list_memories(request: Request) -> JSONResponse:
    params = request.query_params
    filters: dict[str, Any] = {}
    if params.get("priority"):
        filters["priority"] = int(parse_priority(params["priority"], "query parameter 'priority'"))
    if params.get("category"):
        where = "query parameter 'category'"
        filters["category"] = parse_known_category(params["category"], where)
    pinned = query_bool(request, "pinned")
    if pinned is not None:
        filters["pinned"] = pinned
    expired = bool(query_bool(request, "include_expired"))
    query = (params.get("q") or "").strip()
    if len(query) > 500:
        raise ApiError(400, "query parameter 'q' is longer than 500 characters")
    limit = limit_of(request, 100, 500)
    offset = query_int(request, "offset", 0, maximum=MAX_OFFSET)
    if query and offset + limit > SEARCH_POOL:
        raise ApiError(400, f"with 'q', offset + limit can be at most {SEARCH_POOL}")
    st = state(request)
    now, found = await blocking(_list, st, filters, expired, query, limit + 1, offset)
    page, more = trim(found, limit)
    if query and offset + limit >= SEARCH_POOL:
        more = False  # a search answers from its best SEARCH_POOL hits only
    return JSONResponse(page_json([memory_json(m, now, score) for m, score in page], more))


def _add(st: ServerState, arguments: dict[str, Any]) -> tuple[Any, float]:
    manager = _manager(st)
    content = arguments.pop("content")
    return manager.add(content, **arguments), manager.clock()


@endpoint(
    "Add a memory",
    tag="memory",
    body=MEMORY_ADD,
    response=MEMORY_ADDED,
    status=201,
    description=(
        "A memory that repeats or closely matches an active one is merged into it: the answer "
        "is then 200 with `action` `merged` or `duplicate` and the memory it joined."
    ),
)
async def add_memory(request: Request) -> JSONResponse:
    arguments = add_arguments(await read_json(request))
    outcome, now = await blocking(_add, state(request), arguments)
    return JSONResponse(
        {"action": outcome.action, "memory": memory_json(outcome.memory, now)},
        status_code=201 if outcome.action == "added" else 200,
    )


def _get(st: ServerState, ident: int) -> tuple[Memory | None, float]:
    manager = _manager(st)
    return manager.get(ident), manager.clock()


@endpoint("Get a memory", tag="memory", response=MEMORY_SCHEMA, errors=(404,))
async def get_memory(request: Request) -> JSONResponse:
    ident = path_id(request, "memory")
    memory, now = await blocking(_get, state(request), ident)
    if memory is None:
        raise not_found("memory", str(ident))
    return JSONResponse(memory_json(memory, now))


def _update(st: ServerState, ident: int, changes: dict[str, Any]) -> tuple[Memory | None, float]:
    manager = _manager(st)
    if set(changes) == {"pinned"}:  # pinning is not restating: keep updated_at (and decay)
        return manager.pin(ident, changes["pinned"]), manager.clock()
    return manager.update(ident, **changes), manager.clock()


@endpoint(
    "Change a memory",
    tag="memory",
    body=MEMORY_PATCH,
    response=MEMORY_SCHEMA,
    errors=(404,),
    description="New content is re-embedded on next use; `expires_at: null` removes the expiry.",
)
async def update_memory(request: Request) -> JSONResponse:
    ident = path_id(request, "memory")
    changes = patch_changes(await read_json(request))
    memory, now = await blocking(_update, state(request), ident, changes)
    if memory is None:
        raise not_found("memory", str(ident))
    return JSONResponse(memory_json(memory, now))


@endpoint(
    "Forget a memory",
    tag="memory",
    response=MEMORY_DELETED,
    errors=(404,),
    description="A soft delete: the memory leaves every list, search and prompt.",
)
async def delete_memory(request: Request) -> JSONResponse:
    ident = path_id(request, "memory")
    st = state(request)
    if not await blocking(lambda: _manager(st).forget(ident)):
        raise not_found("memory", str(ident))
    return JSONResponse({"id": ident, "object": "memory", "deleted": True})


@endpoint("Memory counts by priority and category", tag="memory", response=MEMORY_STATS)
async def memory_stats(request: Request) -> JSONResponse:
    st = state(request)
    stats = await blocking(lambda: _manager(st).stats())
    return JSONResponse(stats_json(stats))


def routes() -> list[Route]:
    return [
        Route("/v1/memory", list_memories, methods=["GET"]),
        Route("/v1/memory", add_memory, methods=["POST"]),
        # before /{id}, which would otherwise take "stats" for an id
        Route("/v1/memory/stats", memory_stats, methods=["GET"]),
        Route("/v1/memory/{id}", get_memory, methods=["GET"]),
        Route("/v1/memory/{id}", update_memory, methods=["PATCH"]),
        Route("/v1/memory/{id}", delete_memory, methods=["DELETE"]),
    ]
