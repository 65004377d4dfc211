"""How finished tasks went and what they taught: the user's feedback on a session's turn, the
evaluations (``GET /v1/evaluations``) and the lessons (``GET /v1/lessons``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ...evaluation.feedback import COMMENT_CHARS, NothingToRate, apply_feedback, lesson_job
from ...evaluation.lessons import CATEGORIES
from ...store.evaluations import OUTCOMES, RATINGS, SOURCES
from ..api_errors import ApiError, not_found
from ..bodies import path_id, query_int, read_json
from ..paging import MAX_ID, limit_of, page_json, trim
from ..schemas import INT, NUM, STR, nullable, obj, page_schema
from ..spec import endpoint
from ..state import blocking, require_topic, state

if TYPE_CHECKING:
    from ...store.evaluations import Evaluation, Lesson

MAX_LIMIT = 200
FEEDBACK_FIELDS = ("rating", "comment", "message_id")

EVALUATION_SCHEMA = obj(
    {
        "id": INT,
        "object": {"const": "evaluation"},
        "session_id": STR,
        "message_id": {**INT, "description": "the user message that opened the turn"},
        "user_text": STR,
        "tools": {"type": "array", "items": STR, "description": "tools used, in order"},
        "outcome": {"enum": list(OUTCOMES)},
        "quality": {**INT, "minimum": 1, "maximum": 5},
        "reason": STR,
        "source": {"enum": list(SOURCES)},
        "rating": nullable({"enum": list(RATINGS)}),
        "comment": nullable(STR),
        "iterations": INT,
        "tool_calls": INT,
        "errors": INT,
        "error_text": STR,
        "prompt_tokens": INT,
        "completion_tokens": INT,
        "finish_reason": nullable(STR),
        "lesson_id": nullable(INT),
        "created": NUM,
        "updated": NUM,
    },
    ("id", "session_id", "outcome", "quality", "source"),
)
LESSON_SCHEMA = obj(
    {
        "id": INT,
        "object": {"const": "lesson"},
        "category": {"enum": list(CATEGORIES)},
        "mistake": STR,
        "instead": STR,
        "source": STR,
        "evaluation_id": nullable(INT),
        "session_id": nullable(STR),
        "created": NUM,
    },
    ("id", "category", "mistake", "instead"),
)
FEEDBACK_SCHEMA = obj(
    {
        "rating": {"enum": list(RATINGS)},
        "comment": {**STR, "maxLength": COMMENT_CHARS},
        "message_id": {**INT, "description": "a message of the turn to rate (default: the last)"},
    },
    ("rating",),
)
BOUNDS = {"first_id": nullable(INT), "last_id": nullable(INT)}


def evaluation_json(evaluation: Evaluation) -> dict[str, Any]:
    return {
        "id": evaluation.id,
        "object": "evaluation",
        "session_id": evaluation.topic_id,
        "message_id": evaluation.user_message_id,
        "user_text": evaluation.user_text,
        "tools": list(evaluation.tools),
        "outcome": evaluation.outcome,
        "quality": evaluation.quality,
        "reason": evaluation.reason,
        "source": evaluation.source,
        "rating": evaluation.rating,
        "comment": evaluation.comment,
        "iterations": evaluation.iterations,
        "tool_calls": evaluation.tool_calls,
        "errors": evaluation.errors,
        "error_text": evaluation.error_text,
        "prompt_tokens": evaluation.prompt_tokens,
        "completion_tokens": evaluation.completion_tokens,
        "finish_reason": evaluation.finish_reason,
        "lesson_id": evaluation.lesson_id,
        "created": evaluation.created_at,
        "updated": evaluation.updated_at,
    }


def lesson_json(lesson: Lesson) -> dict[str, Any]:
    return {
        "id": lesson.id,
        "object": "lesson",
        "category": lesson.category,
        "mistake": lesson.mistake,
        "instead": lesson.instead,
        "source": lesson.source,
        "evaluation_id": lesson.evaluation_id,
        "session_id": lesson.topic_id,
        "created": lesson.created_at,
    }


@endpoint(
    "Rate a session's turn (👍/👎)",
    tag="evaluations",
    body=FEEDBACK_SCHEMA,
    response=EVALUATION_SCHEMA,
    errors=(400, 404),
    description=(
        "The user's verdict overrides the model's and the heuristics' (`source` becomes "
        "`user`): `good` makes the turn a success, `bad` a failure, and a `bad` rating queues a "
        "lesson (from the `comment` when given). Without `message_id` the session's last turn "
        "is rated; 404 when the session has no such turn."
    ),
)
async def give_feedback(request: Request) -> JSONResponse:
    st = state(request)
    body = await read_json(request)
    unknown = sorted(set(body.data) - set(FEEDBACK_FIELDS))
    if unknown:
        raise ApiError(
            400, f"unknown field(s) {', '.join(unknown)}; expected rating, comment, message_id"
        )
    rating = body.text("rating", required=True)
    if rating not in RATINGS:
        raise ApiError(400, f"field 'rating': expected good or bad, got {rating[:20]!r}")
    comment = body.text("comment", max_length=COMMENT_CHARS)
    message_id = body.integer("message_id", minimum=1)
    if message_id is not None and message_id > MAX_ID:
        raise not_found("message", str(message_id))
    topic = await require_topic(request)
    try:
        evaluation = await blocking(apply_feedback, st.store, topic.id, rating, comment, message_id)
    except NothingToRate as exc:
        raise ApiError(404, str(exc)) from exc
    jobs = lesson_job(evaluation)
    if jobs:
        st.runtime.background.enqueue(jobs)
    return JSONResponse(evaluation_json(evaluation))


@endpoint(
    "Evaluations of finished tasks, newest first",
    tag="evaluations",
    query={
        "session_id": "str - of one session",
        "outcome": f"str - only {', '.join(OUTCOMES)}",
        "limit": f"int - at most {MAX_LIMIT} (default 50)",
        "before": "int - older than this evaluation id (the page after last_id)",
    },
    response=page_schema(EVALUATION_SCHEMA, **BOUNDS),
    errors=(400,),
    description=(
        "One per turn that used tools (or that the user rated): outcome, quality 1-5, the "
        "tools in order, the cost, and who judged it (`heuristic`, `model` or `user`)."
    ),
)
async def list_evaluations(request: Request) -> JSONResponse:
    st = state(request)
    limit = limit_of(request, 50, MAX_LIMIT)
    before = query_int(request, "before", 0, minimum=1, maximum=MAX_ID) or None
    session = request.query_params.get("session_id") or None
    if session is not None and len(session) > 200:
        raise ApiError(400, "query parameter 'session_id' is longer than 200 characters")
    outcome = request.query_params.get("outcome") or None
    if outcome is not None and outcome not in OUTCOMES:
        raise ApiError(400, f"query parameter 'outcome': expected {', '.join(OUTCOMES)}")
    found = await blocking(st.store.evaluations.recent, limit + 1, session, outcome, before)
    page, more = trim(found, limit)
    return JSONResponse(_page([evaluation_json(e) for e in page], more))


@endpoint(
    "Lessons learned from failed or corrected tasks, newest first",
    tag="evaluations",
    query={
        "category": f"str - only {', '.join(CATEGORIES)}",
        "limit": f"int - at most {MAX_LIMIT} (default 50)",
        "before": "int - older than this lesson id (the page after last_id)",
    },
    response=page_schema(LESSON_SCHEMA, **BOUNDS),
    errors=(400,),
    description="The relevant ones join a request's context by relevance, within its budget.",
)
async def list_lessons(request: Request) -> JSONResponse:
    st = state(request)
    limit = limit_of(request, 50, MAX_LIMIT)
    before = query_int(request, "before", 0, minimum=1, maximum=MAX_ID) or None
    category = request.query_params.get("category") or None
    if category is not None and category not in CATEGORIES:
        raise ApiError(400, f"query parameter 'category': expected {', '.join(CATEGORIES)}")
    found = await blocking(st.store.lessons.recent, limit + 1, category, before)
    page, more = trim(found, limit)
    return JSONResponse(_page([lesson_json(lesson) for lesson in page], more))


@endpoint(
    "Forget a lesson",
    tag="evaluations",
    response=obj({"id": INT, "object": {"const": "lesson"}, "deleted": {"type": "boolean"}}),
    errors=(404,),
)
async def delete_lesson(request: Request) -> JSONResponse:
    ident = path_id(request, "lesson")
    if not await blocking(state(request).store.lessons.delete, ident):
        raise not_found("lesson", str(ident))
    return JSONResponse({"id": ident, "object": "lesson", "deleted": True})


def _page(data: list[dict[str, Any]], more: bool) -> dict[str, Any]:
    ids = [item["id"] for item in data]
    return page_json(data, more, first_id=ids[0] if ids else None, last_id=ids[-1] if ids else None)


def routes() -> list[Route]:
    return [
        Route("/v1/sessions/{id}/feedback", give_feedback, methods=["POST"]),
        Route("/v1/evaluations", list_evaluations, methods=["GET"]),
        Route("/v1/lessons", list_lessons, methods=["GET"]),
        Route("/v1/lessons/{id}", delete_lesson, methods=["DELETE"]),
    ]
