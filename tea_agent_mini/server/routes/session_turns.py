"""Turns of a session over the UI event stream: send, re-attach, queue, abort.

``POST /v1/sessions/{id}/messages`` answers with the SSE stream of its own turn (after a
``queued`` event when the session is busy). ``GET /v1/sessions/{id}/events`` re-attaches: it
replays the log after ``since`` / ``Last-Event-ID`` and follows until the session is idle. The
turns run in the background either way, so a dropped connection loses nothing. A tool that asks
the user (``question`` event) gets its answer from ``POST /v1/sessions/{id}/questions/{qid}``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from ..api_errors import ApiError
from ..bodies import natural, read_json
from ..spec import endpoint
from ..sse import sse_response
from ..state import ServerState, blocking, require_topic, runtime_for, state
from ..turn_records import Entry, QueueItem
from ..ui_events import encode_entry
from ..uploads import UploadRejected

CONTENT_LIMIT = 1_000_000
ANSWER_LIMIT = 10_000
TITLE_CHARS = 60


async def ui_frames(batches: AsyncIterator[list[Entry] | None]) -> AsyncIterator[bytes]:
    async for batch in batches:
        frames = [encode_entry(entry) for entry in batch] if batch else [encode_entry(None)]
        data = b"".join(frame for frame in frames if frame is not None)
        if data:
            yield data


def item_json(item: QueueItem, position: int) -> dict[str, Any]:
    return {
        "id": item.id,
        "position": position,
        "text": item.text[:500],
        "attachments": item.attachments,
        "created": item.created,
    }


def title_from(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1].rstrip() + "…"


@endpoint(
    "Send a message; stream its turn",
    tag="turns",
    body="MessageCreate",
    media_type="text/event-stream",
    response="UIEvent",
    errors=(404, 503),
    description=(
        "Answers with the UI event stream of this message's turn (SSE, `id:` on every event). "
        "When the session is busy the message is queued: the stream starts with a `queued` "
        "event giving its position, then carries the turn when it runs. Attach uploads by id."
    ),
)
async def send_message(request: Request) -> StreamingResponse:
    st = state(request)
    body = await read_json(request)
    text = body.text("content", "", max_length=CONTENT_LIMIT)
    attachments = body.str_list("attachments", max_items=20)
    profile = body.text("profile", max_length=64)
    if not text.strip() and not attachments:
        raise ApiError(400, "field 'content' is required (the message text)")
    topic = await require_topic(request)
    await runtime_for(st, profile)
    content = await _content(st, text, attachments)
    if not topic.title and text.strip():
        await blocking(st.store.topics.rename, topic.id, title_from(text))
    submission = await st.turns.asubmit(topic.id, content, profile)
    batches = st.turns.follow_batches(topic.id, submission.since, turn=submission.item.id)
    return sse_response(ui_frames(batches), headers={"X-Turn-Id": submission.item.id})


async def _content(st: ServerState, text: str, ids: list[str]) -> str | list[dict[str, Any]]:
    if not ids:
        return text
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    for upload_id in ids:
        upload = await blocking(st.uploads.get, upload_id)
        if upload is None:
            raise ApiError(404, f"no upload with id {upload_id!r}")
        try:
            parts.append(await blocking(st.uploads.content_part, upload))
        except (UploadRejected, OSError) as exc:
            raise ApiError(400, str(exc)) from exc
    return parts


def _since(request: Request, default: int) -> int:
    values = []
    for raw in (request.query_params.get("since"), request.headers.get("last-event-id")):
        if raw is None or raw.strip() == "":
            continue
        value = natural(raw)
        if value is None:
            raise ApiError(400, f"'since' / Last-Event-ID must be an event id, got {raw!r}")
        values.append(value)
    return max(values) if values else default


@endpoint(
    "Re-attach to a session's event stream",
    tag="turns",
    query={"since": "int - replay events after this id (Last-Event-ID also works)"},
    media_type="text/event-stream",
    response="UIEvent",
    errors=(404,),
    description=(
        "Replays the logged events after `since` (default: from the start of the running or "
        "last turn) and follows until the session is idle. The last few turns are kept."
    ),
)
async def session_events(request: Request) -> StreamingResponse:
    st = state(request)
    topic = await require_topic(request)
    since = _since(request, await st.turns.start_id(topic.id))
    return sse_response(ui_frames(st.turns.follow_batches(topic.id, since)))


@endpoint("The running turn and the queued messages", tag="turns", response="Queue", errors=(404,))
async def get_queue(request: Request) -> JSONResponse:
    st = state(request)
    topic = await require_topic(request)
    running, items = await st.turns.queue_state(topic.id)
    return JSONResponse(
        {
            "running": item_json(running, 0) if running else None,
            "data": [item_json(item, i) for i, item in enumerate(items, 1)],
        }
    )


@endpoint("Drop every queued message", tag="turns", response="Cancelled", errors=(404,))
async def clear_queue(request: Request) -> JSONResponse:
    st = state(request)
    topic = await require_topic(request)
    return JSONResponse({"cancelled": await st.turns.aclear_queue(topic.id)})


@endpoint("Drop one queued message", tag="turns", response="Cancelled", errors=(404,))
async def cancel_queued(request: Request) -> JSONResponse:
    st = state(request)
    topic = await require_topic(request)
    item = request.path_params["item"]
    if not await st.turns.acancel_queued(topic.id, item):
        raise ApiError(404, f"no queued message with id {item!r}")
    return JSONResponse({"cancelled": 1, "id": item})


@endpoint(
    "Stop the running turn",
    tag="turns",
    response="Aborted",
    errors=(404,),
    description="The turn ends with an `error` event of kind `cancelled`; the queue goes on.",
)
async def abort_turn(request: Request) -> JSONResponse:
    st = state(request)
    topic = await require_topic(request)
    return JSONResponse({"aborted": await st.turns.aabort(topic.id)})


@endpoint(
    "Answer a question the running turn asks",
    tag="turns",
    body="QuestionAnswer",
    response="QuestionAnswered",
    errors=(400, 404, 409),
    description=(
        "A tool (toolkit_question) waits for this answer; the stream carries a `question` "
        "event with the id, then `question_closed`. 404: no such question in this session; "
        "409: it was answered already or nobody answered in time (the tool went on with its "
        "default)."
    ),
)
async def answer_question(request: Request) -> JSONResponse:
    st = state(request)
    body = await read_json(request)
    answer = body.text("answer", required=True, max_length=ANSWER_LIMIT)
    if not answer.strip():
        raise ApiError(400, "field 'answer' must not be empty")
    topic = await require_topic(request)
    question_id = request.path_params["question"]
    outcome = await st.turns.aanswer(topic.id, question_id, answer.strip())
    if outcome == "unknown":
        raise ApiError(404, f"no question with id {question_id!r} in this session")
    if outcome == "closed":
        raise ApiError(409, f"question {question_id!r} was answered already or timed out")
    return JSONResponse({"id": question_id, "status": outcome, "answer": answer.strip()})


def routes() -> list[Route]:
    base = "/v1/sessions/{id}"
    return [
        Route(f"{base}/messages", send_message, methods=["POST"]),
        Route(f"{base}/events", session_events, methods=["GET"]),
        Route(f"{base}/queue", get_queue, methods=["GET"]),
        Route(f"{base}/queue", clear_queue, methods=["DELETE"]),
        Route(f"{base}/queue/{{item}}", cancel_queued, methods=["DELETE"]),
        Route(f"{base}/abort", abort_turn, methods=["POST"]),
        Route(f"{base}/questions/{{question}}", answer_question, methods=["POST"]),
    ]
