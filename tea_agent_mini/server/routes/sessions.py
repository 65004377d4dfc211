"""Sessions (stored topics): list, create, read, rename, delete, and their stored messages."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ...types import Message
from ..api_errors import ApiError
from ..bodies import Fields, query_int, read_json
from ..spec import endpoint
from ..state import ServerState, blocking, require_topic, state

TITLE_LIMIT = 200
PROMPT_LIMIT = 100_000
SESSION_FIELDS = ("title", "system_prompt")


def session_json(topic: Any, st: ServerState) -> dict[str, Any]:
    running = st.turns.running(topic.id)
    return {
        "id": topic.id,
        "object": "session",
        "title": topic.title,
        "created": topic.created_at,
        "updated": topic.updated_at,
        "profile": topic.profile,
        "prompt_tokens": topic.prompt_tokens,
        "completion_tokens": topic.completion_tokens,
        "total_tokens": topic.prompt_tokens + topic.completion_tokens,
        "message_count": topic.message_count,
        "system_prompt": topic.system_prompt,
        "busy": st.turns.busy(topic.id),
        "running": running.id if running else None,
        "queued": len(st.turns.queued(topic.id)),
    }


def message_json(message: Message) -> dict[str, Any]:
    return {
        "id": message.id,
        "session_id": message.topic_id,
        "role": message.role,
        "content": message.content,
        "reasoning": message.reasoning,
        "tool_calls": [
            {"id": c.id, "name": c.name, "arguments": c.arguments} for c in message.tool_calls
        ],
        "tool_call_id": message.tool_call_id,
        "name": message.name,
        "tokens": message.tokens,
        "created": message.created_at,
    }


def _check_known(body: Fields, allowed: tuple[str, ...]) -> None:
    unknown = sorted(set(body.data) - set(allowed))
    if unknown:
        raise ApiError(400, f"unknown field(s) {', '.join(unknown)}; expected {', '.join(allowed)}")


@endpoint(
    "List sessions",
    tag="sessions",
    query={"limit": "int - at most 200 (default 50)", "offset": "int", "q": "str - title filter"},
    response="SessionList",
)
async def list_sessions(request: Request) -> JSONResponse:
    st = state(request)
    limit = query_int(request, "limit", 50, minimum=1, maximum=200)
    offset = query_int(request, "offset", 0, maximum=10**9)
    query = request.query_params.get("q") or None
    topics = await blocking(st.store.topics.list, limit=limit, offset=offset, query=query)
    return JSONResponse({"object": "list", "data": [session_json(t, st) for t in topics]})


@endpoint("Create a session", tag="sessions", body="SessionCreate", response="Session", status=201)
async def create_session(request: Request) -> JSONResponse:
    st = state(request)
    body = await read_json(request)
    _check_known(body, SESSION_FIELDS)
    title = body.str("title", "", max_length=TITLE_LIMIT)
    prompt = body.str("system_prompt", max_length=PROMPT_LIMIT)
    topic = await blocking(_create, st, title, prompt)
    return JSONResponse(session_json(topic, st), status_code=201)


def _create(st: ServerState, title: str, prompt: str | None) -> Any:
    store = st.store
    topic = store.topics.create(title=title, profile=st.runtime.config.profile)
    if prompt:
        store.topics.set_system_prompt(topic.id, prompt)
    return store.topics.get(topic.id)


@endpoint("Get a session", tag="sessions", response="Session", errors=(404,))
async def get_session(request: Request) -> JSONResponse:
    topic = await require_topic(request)
    return JSONResponse(session_json(topic, state(request)))


@endpoint(
    "Rename a session or set its system prompt",
    tag="sessions",
    body="SessionUpdate",
    response="Session",
    errors=(404,),
    description="`system_prompt: null` returns the session to the profile's prompt.",
)
async def update_session(request: Request) -> JSONResponse:
    st = state(request)
    body = await read_json(request)
    _check_known(body, SESSION_FIELDS)
    if not body.data:
        raise ApiError(400, "nothing to change: send 'title' and/or 'system_prompt'")
    title = body.str("title", max_length=TITLE_LIMIT)
    prompt = body.str("system_prompt", max_length=PROMPT_LIMIT)
    topic = await require_topic(request)
    store = st.store
    if title is not None:
        await blocking(store.topics.rename, topic.id, title)
    if "system_prompt" in body:
        await blocking(store.topics.set_system_prompt, topic.id, prompt or None)
    return JSONResponse(session_json(await require_topic(request), st))


@endpoint(
    "Delete a session",
    tag="sessions",
    response="Deleted",
    errors=(404,),
    description="A running turn is stopped and queued messages are dropped first.",
)
async def delete_session(request: Request) -> JSONResponse:
    st = state(request)
    topic = await require_topic(request)
    await st.turns.forget(topic.id)
    await blocking(st.store.topics.delete, topic.id)
    return JSONResponse({"id": topic.id, "object": "session", "deleted": True})


@endpoint(
    "Stored messages of a session",
    tag="sessions",
    query={"limit": "int - the last n messages", "before": "int - only messages with a lower id"},
    response="MessageList",
    errors=(404,),
    description="Includes assistant tool calls, tool results and reasoning.",
)
async def list_messages(request: Request) -> JSONResponse:
    st = state(request)
    topic = await require_topic(request)
    limit = query_int(request, "limit", 0, maximum=100_000) or None
    before = query_int(request, "before", 0, maximum=2**62) or None
    messages = await blocking(st.store.messages.list, topic.id, limit=limit, before_id=before)
    return JSONResponse({"object": "list", "data": [message_json(m) for m in messages]})


def routes() -> list[Route]:
    return [
        Route("/v1/sessions", list_sessions, methods=["GET"]),
        Route("/v1/sessions", create_session, methods=["POST"]),
        Route("/v1/sessions/{id}", get_session, methods=["GET"]),
        Route("/v1/sessions/{id}", update_session, methods=["PATCH"]),
        Route("/v1/sessions/{id}", delete_session, methods=["DELETE"]),
        Route("/v1/sessions/{id}/messages", list_messages, methods=["GET"]),
    ]
