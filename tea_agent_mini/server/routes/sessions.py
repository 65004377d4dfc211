"""Sessions (stored topics): list (by source), create, read, rename, delete (one or many), and
their stored messages."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ...store.topics import SOURCES
from ...types import Message
from ..api_errors import ApiError
from ..bodies import Fields, query_int, read_json
from ..paging import MAX_ID, MAX_OFFSET, limit_of, page_json, trim
from ..spec import endpoint
from ..state import ServerState, blocking, require_topic, state
from ..turn_records import SessionState

TITLE_LIMIT = 200
PROMPT_LIMIT = 100_000
SESSION_FIELDS = ("title", "system_prompt")
MESSAGES_DEFAULT = 100
MESSAGES_MAX = 1000
BULK_MAX = 1000


async def sessions_json(topics: list[Any], st: ServerState) -> list[dict[str, Any]]:
    """The sessions as the API shows them, their turns' state read at once for all of them."""
    states = await st.turns.session_states([topic.id for topic in topics])
    return [session_json(topic, states[topic.id]) for topic in topics]


async def one_session_json(topic: Any, st: ServerState) -> dict[str, Any]:
    return (await sessions_json([topic], st))[0]


def session_json(topic: Any, turns: SessionState) -> dict[str, Any]:
    return {
        "id": topic.id,
        "object": "session",
        "title": topic.title,
        "created": topic.created_at,
        "updated": topic.updated_at,
        "profile": topic.profile,
        "source": topic.source,
        "parent_id": topic.parent_id,
        "agent": topic.agent,
        "prompt_tokens": topic.prompt_tokens,
        "completion_tokens": topic.completion_tokens,
        "total_tokens": topic.prompt_tokens + topic.completion_tokens,
        "message_count": topic.message_count,
        "system_prompt": topic.system_prompt,
        "busy": turns.busy,
        "running": turns.running,
        "queued": turns.queued,
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
        "status": message.status,
        "error": message.error,
        "duration": message.duration,
    }


def _check_known(body: Fields, allowed: tuple[str, ...]) -> None:
    unknown = sorted(set(body.data) - set(allowed))
    if unknown:
        raise ApiError(400, f"unknown field(s) {', '.join(unknown)}; expected {', '.join(allowed)}")


@endpoint(
    "List sessions",
    tag="sessions",
    query={
        "limit": "int - at most 200 (default 50)",
        "offset": f"int - sessions to skip, at most {MAX_OFFSET}",
        "q": "str - title filter",
        "source": f"str - only sessions made by these front ends, comma-separated: "
        f"{', '.join(SOURCES)}",
        "parent": "str - only the sessions this session's subagents ran in, oldest first (q and "
        "source do not apply)",
    },
    response="SessionList",
    errors=(400,),
    description=(
        "Most recently updated first; `has_more` says more follow at offset + limit. Every "
        "session names its `source`: the web UI, the OpenAI-compatible API (`api`), the "
        "terminal (`cli`), a scheduled `task` or a `subagent` (with its `parent_id` and "
        "`agent`)."
    ),
)
async def list_sessions(request: Request) -> JSONResponse:
    st = state(request)
    limit = limit_of(request, 50, 200)
    offset = query_int(request, "offset", 0, maximum=MAX_OFFSET)
    query = request.query_params.get("q") or None
    if query is not None and len(query) > 500:
        raise ApiError(400, "query parameter 'q' is longer than 500 characters")
    sources = _sources(request.query_params.get("source") or "")
    parent = request.query_params.get("parent")
    if parent is not None:
        children = await blocking(st.store.topics.children, parent[:100])
        found = children[offset : offset + limit + 1]
    else:
        found = await blocking(
            st.store.topics.recent, limit=limit + 1, offset=offset, query=query, sources=sources
        )
    topics, more = trim(found, limit)
    return JSONResponse(page_json(await sessions_json(topics, st), more))


def _sources(raw: str) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(name.strip() for name in raw.split(",") if name.strip()))
    unknown = [name for name in names if name not in SOURCES]
    if unknown:
        raise ApiError(
            400,
            f"query parameter 'source': unknown source {unknown[0][:40]!r}; "
            f"expected {', '.join(SOURCES)}",
        )
    return names


@endpoint("Create a session", tag="sessions", body="SessionCreate", response="Session", status=201)
async def create_session(request: Request) -> JSONResponse:
    st = state(request)
    body = await read_json(request)
    _check_known(body, SESSION_FIELDS)
    title = body.text("title", "", max_length=TITLE_LIMIT)
    prompt = body.text("system_prompt", max_length=PROMPT_LIMIT)
    topic = await blocking(_create, st, title, prompt)
    return JSONResponse(await one_session_json(topic, st), status_code=201)


def _create(st: ServerState, title: str, prompt: str | None) -> Any:
    store = st.store
    topic = store.topics.create(title=title, profile=st.runtime.config.profile, source="ui")
    if prompt:
        store.topics.set_system_prompt(topic.id, prompt)
    return store.topics.get(topic.id)


@endpoint("Get a session", tag="sessions", response="Session", errors=(404,))
async def get_session(request: Request) -> JSONResponse:
    topic = await require_topic(request)
    return JSONResponse(await one_session_json(topic, state(request)))


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
    title = body.text("title", max_length=TITLE_LIMIT)
    prompt = body.text("system_prompt", max_length=PROMPT_LIMIT)
    topic = await require_topic(request)
    store = st.store
    if title is not None:
        await blocking(store.topics.rename, topic.id, title)
    if "system_prompt" in body:
        await blocking(store.topics.set_system_prompt, topic.id, prompt or None)
    return JSONResponse(await one_session_json(await require_topic(request), st))


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


BULK_DELETE = (
    f"`ids`: up to {BULK_MAX} session ids. Their running turns are stopped and queued "
    "messages dropped first; ids that name no session come back in `not_found`."
)


@endpoint(
    "Delete several sessions",
    tag="sessions",
    body="SessionsDelete",
    response="SessionsDeleted",
    errors=(400,),
    description=BULK_DELETE,
)
async def delete_sessions(request: Request) -> JSONResponse:
    return await _delete_many(request)


@endpoint(
    "Delete several sessions (POST, for clients that send no body with DELETE)",
    tag="sessions",
    body="SessionsDelete",
    response="SessionsDeleted",
    errors=(400,),
    description=BULK_DELETE,
)
async def delete_sessions_by_post(request: Request) -> JSONResponse:
    return await _delete_many(request)


async def _delete_many(request: Request) -> JSONResponse:
    st = state(request)
    body = await read_json(request)
    _check_known(body, ("ids",))
    ids = body.str_list("ids", max_items=BULK_MAX)
    if not ids:
        raise ApiError(400, "field 'ids' is required (a non-empty array of session ids)")
    for topic_id in ids:
        await st.turns.forget(topic_id)
    deleted = await blocking(st.store.topics.delete_many, ids)
    gone = set(deleted)
    missing = [topic_id for topic_id in dict.fromkeys(ids) if topic_id not in gone]
    return JSONResponse({"object": "list", "deleted": deleted, "not_found": missing})


@endpoint(
    "Stored messages of a session",
    tag="sessions",
    query={
        "limit": f"int - at most {MESSAGES_MAX} (default {MESSAGES_DEFAULT})",
        "before": "int - the newest messages with a lower id (the page before first_id)",
        "after": "int - the oldest messages with a higher id (the page after last_id)",
    },
    response="MessageList",
    errors=(400, 404),
    description=(
        "One page of messages in order, with assistant tool calls, tool results and "
        "reasoning. Without `after`, the newest; `has_more` says older ones exist (ask "
        "again with `before=first_id`). With only `after`, the oldest after it; `has_more` "
        "says newer ones exist (`after=last_id`)."
    ),
)
async def list_messages(request: Request) -> JSONResponse:
    st = state(request)
    limit = limit_of(request, MESSAGES_DEFAULT, MESSAGES_MAX)
    before = query_int(request, "before", 0, minimum=1, maximum=MAX_ID) or None
    after = query_int(request, "after", 0, minimum=1, maximum=MAX_ID) or None
    topic = await require_topic(request)
    found = await blocking(
        st.store.messages.of_topic, topic.id, limit=limit + 1, before_id=before, after_id=after
    )
    forwards = after is not None and before is None
    messages, more = trim(found, limit, keep_last=not forwards)
    ids = [m.id for m in messages]
    return JSONResponse(
        page_json(
            [message_json(m) for m in messages],
            more,
            first_id=ids[0] if ids else None,
            last_id=ids[-1] if ids else None,
        )
    )


def routes() -> list[Route]:
    return [
        Route("/v1/sessions", list_sessions, methods=["GET"]),
        Route("/v1/sessions", create_session, methods=["POST"]),
        Route("/v1/sessions", delete_sessions, methods=["DELETE"]),
        Route("/v1/sessions/delete", delete_sessions_by_post, methods=["POST"]),
        Route("/v1/sessions/{id}", get_session, methods=["GET"]),
        Route("/v1/sessions/{id}", update_session, methods=["PATCH"]),
        Route("/v1/sessions/{id}", delete_session, methods=["DELETE"]),
        Route("/v1/sessions/{id}/messages", list_messages, methods=["GET"]),
    ]
