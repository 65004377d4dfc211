"""The user's verdict on a turn (👍/👎 with an optional comment), which overrides any other.

``/good`` and ``/bad`` in the chat and ``POST /v1/sessions/{id}/feedback`` call
:func:`apply_feedback`; a turn nobody evaluated yet (no tools, or its job has not run) gets an
evaluation from the heuristics first, so the rating always has a record to override. A 👎 then
asks for a lesson: the front end queues :func:`lesson_job` on the background worker.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import StoreError
from ..store.evaluations import RATINGS
from ..store.jobs import JobSpec
from .evaluator import evaluation_of, heuristic_verdict
from .facts import turn_facts, turn_start

if TYPE_CHECKING:
    from ..store import Store
    from ..store.evaluations import Evaluation

__all__ = ["COMMENT_CHARS", "NothingToRate", "apply_feedback", "lesson_job"]

COMMENT_CHARS = 2000


class NothingToRate(StoreError, LookupError):
    """There is no turn to rate (an empty session, a message of another session)."""


def apply_feedback(
    store: Store,
    topic_id: str,
    rating: str,
    comment: str | None = None,
    message_id: int | None = None,
) -> Evaluation:
    """Rate the turn holding ``message_id`` (the session's last turn when None).

    Raises:
        ValueError: ``rating`` is not good or bad.
        NothingToRate: the session has no such turn.
    """
    if rating not in RATINGS:
        raise ValueError(f"rating must be one of {', '.join(RATINGS)}, not {rating!r}")
    if message_id is not None:
        message = store.messages.get(int(message_id))
        if message is None or message.topic_id != topic_id:
            raise NothingToRate(f"no message {message_id} in session {topic_id!r}")
    user_id = turn_start(store, topic_id, message_id)
    if user_id is None:
        raise NothingToRate(f"session {topic_id!r} has no turn to rate yet")
    evaluation = store.evaluations.for_turn(topic_id, user_id)
    if evaluation is None:
        facts = turn_facts(store, topic_id, user_id)
        if facts is None:
            raise NothingToRate(f"session {topic_id!r} has no turn to rate yet")
        evaluation = store.evaluations.add(evaluation_of(facts, heuristic_verdict(facts)))
    comment = " ".join((comment or "").split())[:COMMENT_CHARS] or None
    rated = store.evaluations.set_feedback(evaluation.id, rating, comment)
    if rated is None:  # deleted meanwhile with its topic
        raise NothingToRate(f"session {topic_id!r} has no turn to rate any more")
    return rated


def lesson_job(evaluation: Evaluation) -> list[JobSpec]:
    """The background job that draws the lesson of a 👎 (none for a 👍)."""
    if evaluation.rating != "bad":
        return []
    payload = {"evaluation_id": evaluation.id, "again": bool(evaluation.comment)}
    return [JobSpec("lesson", payload, evaluation.topic_id)]
