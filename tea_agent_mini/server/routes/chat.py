"""``POST /v1/chat/completions``: OpenAI-compatible, over the same turns as the UI stream.

Without ``session_id`` a new session (source ``api``) is made from the request: system messages
become its system prompt, earlier user/assistant messages its history, and the last user message
is the turn. With ``session_id`` the stored session continues and only the last message is used.
``store: false`` deletes the new session when the turn ends. The response carries
``X-Session-Id`` either way. Sampling and format fields go to every model call of the turn
(``sampling.py``). ``/v1/responses`` (``responses.py``) starts and streams its turns through the
helpers here.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, NoReturn

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ...types import Done, Error, Notice, ReasoningDelta
from ..api_errors import ApiError
from ..bodies import read_json
from ..openai_format import (
    ChatRequest,
    CompletionEncoder,
    StreamEncoder,
    error_api,
    parse_chat_request,
)
from ..spec import endpoint
from ..sse import sse_comment, sse_response
from ..state import ServerState, blocking, require_topic, runtime_for, state
from ..turn_records import Entry, Queued, TurnStarted
from .models import PROFILE_PREFIX
from .session_turns import title_from

_NOT_OUTPUT = (Notice, TurnStarted, Queued)
CHAT_BODY_LIMIT = 32 * 1024 * 1024  # images arrive inline as data URLs


@dataclass(frozen=True)
class StartedTurn:
    topic_id: str
    turn: str  # the queue item's id
    since: int  # follow the log from here
    model: str  # the model that answers


def _profile(req: ChatRequest) -> str | None:
    if req.profile:
        return req.profile
    if req.model.startswith(PROFILE_PREFIX):
        return req.model[len(PROFILE_PREFIX) :]
    return None


def import_conversation(st: ServerState, req: ChatRequest, profile: str, topic_id: str) -> str:
    """Store the request's system prompt and earlier messages in the session ``topic_id``, a new
    one (source ``api``) when it is empty (blocking); returns the session's id."""
    store = st.store
    if not topic_id:
        text = req.turn if isinstance(req.turn, str) else _text(req.turn)
        topic_id = store.topics.create(title=title_from(text), profile=profile, source="api").id
    if req.system:
        store.topics.set_system_prompt(topic_id, req.system)
    for message in req.history:
        store.messages.add(topic_id, message)
    return topic_id


def _text(parts: list[dict[str, Any]]) -> str:
    return " ".join(str(p.get("text", "")) for p in parts if p.get("type") == "text")


async def start_turn(
    st: ServerState, request: Request, req: ChatRequest, *, continue_history: bool = False
) -> StartedTurn:
    """Queue the request's turn in its session, made first unless ``req.session_id`` names
    one. A continued session takes the request's earlier messages only with
    ``continue_history`` (``/v1/responses``: its input holds new items only)."""
    profile = _profile(req)
    runtime = await runtime_for(st, profile)
    topic_id = ""
    if req.session_id:
        topic_id = (await require_topic(request, req.session_id)).id
    if not topic_id or continue_history:
        topic_id = await blocking(import_conversation, st, req, runtime.config.profile, topic_id)
    # An OpenAI client has no way to answer an approval or a question: they are refused or get
    # their default at once, rather than waiting out their timeout.
    submission = await st.turns.asubmit(
        topic_id, req.turn, profile, interactive=False, options=req.options, keep=req.store
    )
    model = runtime.config.main_model.model_name
    return StartedTurn(topic_id, submission.item.id, submission.since, model)


@endpoint(
    "Chat completion (OpenAI-compatible)",
    tag="openai",
    body="ChatCompletionRequest",
    response="ChatCompletion",
    errors=(404, 429, 499, 502, 503),
    headers={"X-Session-Id": "the session the turn ran in (pass it back as session_id)"},
    description=(
        "The agent runs its own tools server-side and answers with the final message. "
        "`stream: true` sends `chat.completion.chunk` events (content and `reasoning_content` "
        "deltas, then `finish_reason`, the usage chunk with `stream_options.include_usage`, "
        "and `data: [DONE]`). A failure after streaming began is sent as "
        '`data: {"error": {...}}` before `[DONE]`. Client-supplied `tools` are refused (400). '
        "`temperature`, `top_p`, `max_tokens` (or `max_completion_tokens`), `stop`, `seed`, "
        "`presence_penalty`, `frequency_penalty` and `response_format` (json_object, "
        "json_schema) go to every model call of the turn; `logprobs` is refused (400). A "
        "request without `session_id` makes a new session (source `api`): pass its "
        "`X-Session-Id` back as `session_id` to continue it (only the last message is used "
        "then), or send `store: false` to leave no session behind. "
        "Nobody can be asked from here: under `approval: ask` a writing tool call is refused at "
        "once (the model is told why), and a question a tool asks gets its default."
    ),
)
async def chat_completions(request: Request) -> Response:
    st = state(request)
    req = parse_chat_request(await read_json(request, limit=CHAT_BODY_LIMIT))
    started = await start_turn(st, request, req)
    encoder = CompletionEncoder(started.model, req.include_usage)
    headers = {"X-Session-Id": started.topic_id}
    if req.stream:
        return await stream_turn(st, started, encoder, headers)
    return await _whole(
        st.turns.follow(started.topic_id, started.since, turn=started.turn), encoder, headers
    )


async def _whole(
    entries: AsyncIterator[Entry | None], encoder: CompletionEncoder, headers: dict[str, str]
) -> JSONResponse:
    reasoning: list[str] = []
    async for entry in entries:
        event = entry.event if entry else None
        if isinstance(event, ReasoningDelta):
            reasoning.append(event.text)
        elif isinstance(event, Done):
            return JSONResponse(encoder.completion(event, "".join(reasoning)), headers=headers)
        elif isinstance(event, Error):
            raise_with(error_api(event), headers)
    raise_with(ApiError(500, "the turn ended without an answer"), headers)


def raise_with(error: ApiError, headers: dict[str, str]) -> NoReturn:
    error.headers = {**(error.headers or {}), **headers}
    raise error


async def stream_turn(
    st: ServerState, started: StartedTurn, encoder: StreamEncoder, headers: dict[str, str]
) -> Response:
    """The turn as an SSE response of ``encoder``'s frames."""
    batches = st.turns.follow_batches(started.topic_id, started.since, turn=started.turn)
    # Wait for the first output: a failure before it is still a proper HTTP error status, which
    # the openai client turns into the matching exception class. After a heartbeat's worth of
    # quiet (tools running), start streaming anyway so keep-alive comments can flow.
    head: list[Entry] | None = None
    async for batch in batches:
        if batch is None:
            head = []
            break
        start = next((i for i, e in enumerate(batch) if not isinstance(e.event, _NOT_OUTPUT)), -1)
        if start >= 0:
            head = batch[start:]
            break
    if head is None:
        raise_with(ApiError(500, "the turn ended without an answer"), headers)
    if head and isinstance(head[0].event, Error):
        raise_with(error_api(head[0].event), headers)
    return sse_response(_chunks(head, batches, encoder), headers=headers)


async def _chunks(
    head: list[Entry], batches: AsyncIterator[list[Entry] | None], encoder: StreamEncoder
) -> AsyncIterator[bytes]:
    yield encoder.opening() + _frames(head, encoder)
    async for batch in batches:
        data = _frames(batch, encoder)
        if data:
            yield data


def _frames(batch: list[Entry] | None, encoder: StreamEncoder) -> bytes:
    """One write for everything that was ready (a keep-alive comment for a quiet spell)."""
    if batch is None:
        return sse_comment("keep-alive")
    return b"".join(frame for entry in batch for frame in encoder.encode(entry.event))


def routes() -> list[Route]:
    return [Route("/v1/chat/completions", chat_completions, methods=["POST"])]
