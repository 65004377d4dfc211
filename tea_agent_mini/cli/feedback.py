"""``/good [comment]`` and ``/bad [comment]`` in the terminal chat: the user's verdict on the
topic's last turn, which overrides the model's (``evaluation/feedback.py``). A ``/bad`` queues
the lesson of the turn on the runtime's background worker."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from ..evaluation.feedback import NothingToRate, apply_feedback, lesson_job

if TYPE_CHECKING:
    from ..runtime import Runtime

__all__ = ["rate_last_turn"]


async def rate_last_turn(runtime: Runtime, topic_id: str, rating: str, comment: str = "") -> str:
    """Rate the topic's last turn; the line to show the user."""
    try:
        evaluation = await asyncio.to_thread(
            apply_feedback, runtime.store, topic_id, rating, comment.strip() or None
        )
    except NothingToRate as exc:
        return f"error: {exc}"
    jobs = lesson_job(evaluation)
    if jobs:
        runtime.background.enqueue(jobs)
    noted = "noted: a good result" if rating == "good" else "noted: a bad result"
    lesson = "; its lesson is drawn in the background" if jobs else ""
    return f"{noted} (evaluation #{evaluation.id}, quality {evaluation.quality}/5){lesson}"
