"""``POST /v1/chat/completions``: OpenAI-compatible, over the same turns as the UI stream.

Without ``session_id`` a new session is made from the request: system messages become its
system prompt, earlier user/assistant messages its history, and the last user message is the
turn. With ``session_id`` the stored session continues and only the last message is used. The
response carries ``X-Session-Id`` either way.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, NoReturn

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ...types import Done, Error, Notice, ReasoningDelta
from ..api_errors import ApiError
from ..bodies import read_json
from ..openai_format import ChatRequest, CompletionEncoder, error_api, parse_chat_request
from ..spec import endpoint
from ..sse import sse_comment, sse_response
from ..state import ServerState, blocking, require_topic, runtime_for, state
from ..turns import Entry, Queued, TurnStarted
from .models import PROFILE_PREFIX
from .session_turns import title_from

_NOT_OUTPUT = (Notice, TurnStarted, Queued)
CHAT_BODY_LIMIT = 32 * 1024 * 1024  # images arrive inline as data URLs


def _profile(req: ChatRequest) -> str | None:
    if req.profile:
        return req.profile
    if req.model.startswith(PROFILE_PREFIX):
        return req.model[len(PROFILE_PREFIX) :]
    return None


def import_conversation(st: ServerState, req: ChatRequest, profile: str) -> str:
    """A new session holding the request's system prompt and earlier messages (blocking)."""
    store = st.store
    text = req.turn if isinstance(req.turn, str) else ""
    topic = store.topics.create(title=title_from(text), profile=profile)
    if req.system:
        store.topics.set_system_prompt(topic.id, req.system)
    for message in req.history:
        store.messages.add(topic.id, message)
    return topic.id


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
        "Nobody can be asked from here: under `approval: ask` a writing tool call is refused at "
        "once (the model is told why), and a question a tool asks gets its default."
    ),
)
async def chat_completions(request: Request) -> Response:
    st = state(request)
    req = parse_chat_request(await read_json(request, limit=CHAT_BODY_LIMIT))
    profile = _profile(req)
    runtime = await runtime_for(st, profile)
    if req.session_id:
        topic_id = (await require_topic(request, req.session_id)).id
    else:
        topic_id = await blocking(import_conversation, st, req, runtime.config.profile)
    # An OpenAI client has no way to answer an approval or a question: they are refused or get
    # their default at once, rather than waiting out their timeout.
    submission = st.turns.submit(topic_id, req.turn, profile, interactive=False)
    since, turn = submission.since, submission.item.id
    encoder = CompletionEncoder(runtime.config.main_model.model_name, req.include_usage)
    headers = {"X-Session-Id": topic_id}
    if req.stream:
        return await _stream(st.turns.follow_batches(topic_id, since, turn=turn), encoder, headers)
    return await _whole(st.turns.follow(topic_id, since, turn=turn), encoder, headers)


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
            _raise_with(error_api(event), headers)
    _raise_with(ApiError(500, "the turn ended without an answer"), headers)


def _raise_with(error: ApiError, headers: dict[str, str]) -> NoReturn:
    error.headers = {**(error.headers or {}), **headers}
    raise error


async def _stream(
    batches: AsyncIterator[list[Entry] | None],
    encoder: CompletionEncoder,
    headers: dict[str, str],
) -> Response:
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
        _raise_with(ApiError(500, "the turn ended without an answer"), headers)
    if head and isinstance(head[0].event, Error):
        _raise_with(error_api(head[0].event), headers)
    return sse_response(_chunks(head, batches, encoder), headers=headers)


async def _chunks(
    head: list[Entry], batches: AsyncIterator[list[Entry] | None], encoder: CompletionEncoder
) -> AsyncIterator[bytes]:
    yield encoder.role_chunk() + _frames(head, encoder)
    async for batch in batches:
        data = _frames(batch, encoder)
        if data:
            yield data


def _frames(batch: list[Entry] | None, encoder: CompletionEncoder) -> bytes:
    """One write for everything that was ready (a keep-alive comment for a quiet spell)."""
    if batch is None:
        return sse_comment("keep-alive")
    return b"".join(frame for entry in batch for frame in _encode(entry.event, encoder))


def _encode(event: Any, encoder: CompletionEncoder) -> list[bytes]:
    if isinstance(event, Done):
        return encoder.finish(event)
    if isinstance(event, Error):
        return encoder.error(event)
    chunk = encoder.delta(event)
    return [chunk] if chunk is not None else []


def routes() -> list[Route]:
    return [Route("/v1/chat/completions", chat_completions, methods=["POST"])]
