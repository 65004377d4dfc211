"""``GET /v1/search?q=``: sessions by title, messages by text, memories by keywords and meaning,
scheduled tasks by name, command or prompt."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ...types import Message
from ..api_errors import ApiError
from ..bodies import query_int
from ..schemas import INT, NUM, STR, obj, ref
from ..spec import endpoint
from ..state import ServerState, blocking, state
from .memory_views import MEMORY_SCHEMA, memory_json
from .sessions import sessions_json
from .task_views import TASK_SCHEMA
from .tasks import search_tasks

SNIPPET_CHARS = 160
HIT_SCHEMA = obj(
    {
        "id": INT,
        "session_id": STR,
        "session_title": {**STR, "description": "the title of the message's session"},
        "role": STR,
        "snippet": STR,
        "created": NUM,
    }
)
SEARCH_RESULT = obj(
    {
        "query": STR,
        "sessions": {"type": "array", "items": ref("Session")},
        "messages": {"type": "array", "items": HIT_SCHEMA},
        "memories": {"type": "array", "items": MEMORY_SCHEMA},
        "tasks": {"type": "array", "items": TASK_SCHEMA},
    },
    ("query", "sessions", "messages", "memories", "tasks"),
)


def snippet(text: str, query: str, width: int = SNIPPET_CHARS) -> str:
    at = text.lower().find(query.lower())
    start = max(0, at - width // 3) if at >= 0 else 0
    piece = " ".join(text[start : start + width].split())
    return ("…" if start else "") + piece + ("…" if start + width < len(text) else "")


def hit_json(message: Message, query: str, session_title: str = "") -> dict[str, Any]:
    return {
        "id": message.id,
        "session_id": message.topic_id,
        "session_title": session_title,
        "role": message.role,
        "snippet": snippet(message.text, query),
        "created": message.created_at,
    }


def _find(
    st: ServerState, query: str, limit: int
) -> tuple[list[Any], list[dict[str, Any]], list[Any], list[Any]]:
    store = st.store
    memory = st.runtime.memory
    messages = store.messages.search(query, limit=limit)
    titles: dict[str | None, str] = {}
    for topic_id in {m.topic_id for m in messages}:
        topic = store.topics.get(topic_id) if topic_id else None
        titles[topic_id] = topic.title if topic is not None else ""
    return (
        store.topics.recent(limit=limit, query=query),
        [hit_json(m, query, titles.get(m.topic_id, "")) for m in messages],
        [memory_json(m, memory.clock(), score) for m, score in memory.search(query, limit)],
        search_tasks(st, query, limit),
    )


@endpoint(
    "Search sessions, messages, memories and tasks",
    tag="search",
    query={"q": "str - the text to find (required)", "limit": "int - per kind, at most 100"},
    response=SEARCH_RESULT,
)
async def search(request: Request) -> JSONResponse:
    query = (request.query_params.get("q") or "").strip()
    if not query:
        raise ApiError(400, "query parameter 'q' is required")
    if len(query) > 500:
        raise ApiError(400, "query parameter 'q' is longer than 500 characters")
    limit = query_int(request, "limit", 20, minimum=1, maximum=100)
    st = state(request)
    topics, messages, memories, tasks = await blocking(_find, st, query, limit)
    return JSONResponse(
        {
            "query": query,
            "sessions": await sessions_json(topics, st),
            "messages": messages,
            "memories": memories,
            "tasks": tasks,
        }
    )


def routes() -> list[Route]:
    return [Route("/v1/search", search, methods=["GET"])]
