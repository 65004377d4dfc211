"""The background jobs' work: judge a finished task, then draw its lesson when it went wrong, or
keep it as a learned skill when it went well.

    review = TaskReview(store, cheap_llm, embedder)
    await review.evaluate_turn({"topic_id": ..., "user_message_id": ..., "iterations": ...})
    await review.lesson_for(evaluation_id)        # after the user's 👎

Both are idempotent: a job the worker runs again after a crash finds the evaluation (or the
lesson) already made and goes on from there, and never replaces the user's verdict.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..store.jobs import JobSpec
from .evaluator import evaluation_of, judge
from .facts import turn_facts
from .lessons import LessonBook, draft_lesson

if TYPE_CHECKING:
    from ..memory.embedder import Embedder
    from ..store import Store
    from ..store.evaluations import Evaluation, Lesson
    from ..types import ChatModel, Done
    from .crystallise import Crystal

log = logging.getLogger(__name__)

__all__ = ["TIME_CAPS", "TaskReview", "evaluate_job", "needs_lesson"]


EVALUATE_TIMEOUT = 150.0  # a verdict, a lesson or a learned skill: calls of the cheap model
LEARNING_SCOPE = "learning"
LESSON_TIMEOUT = 60.0
TIME_CAPS: dict[str, float] = {"evaluate": EVALUATE_TIMEOUT, "lesson": LESSON_TIMEOUT}


def needs_lesson(evaluation: Evaluation) -> bool:
    """Failed, partial or corrected tasks teach something."""
    return evaluation.outcome != "success" or evaluation.rating == "bad"


def evaluate_job(topic_id: str, user_message_id: int | None, done: Done) -> list[JobSpec]:
    """The job judging a finished turn, when it was a task: it called the model more than once
    (tools ran) or was stopped by the loop guard or the iteration limit. The job itself checks
    that tools ran."""
    tasked = done.iterations > 1 or done.finish_reason in ("loop", "max_iterations")
    if user_message_id is None or not tasked:
        return []
    payload = {
        "topic_id": topic_id,
        "user_message_id": user_message_id,
        "iterations": done.iterations,
        "finish_reason": done.finish_reason,
        "prompt_tokens": done.usage.prompt_tokens,
        "completion_tokens": done.usage.completion_tokens,
    }
    return [JobSpec("evaluate", payload, topic_id)]


@dataclass
class TaskReview:
    """Evaluations and lessons of one store; ``llm`` None means heuristics only."""

    store: Store
    llm: ChatModel | None = None
    embedder: Embedder | None = None
    home: Path | None = None  # where learned skills go; None: no crystallisation
    workspace: Path | None = None

    async def run(self, kind: str, payload: dict[str, Any]) -> Any:
        """Run the job ``kind`` (a key of ``TIME_CAPS``) on its payload.

        Raises:
            KeyError: an unknown kind, or a payload without what the kind needs.
        """
        if kind == "evaluate":
            return await self.evaluate_turn(payload)
        if kind == "lesson":
            again = bool(payload.get("again"))
            return await self.lesson_for(int(payload["evaluation_id"]), again=again)
        raise KeyError(f"no evaluation job {kind!r}")

    async def evaluate_turn(self, payload: dict[str, Any]) -> Evaluation | None:
        """Judge the turn the payload names (``topic_id``, ``user_message_id``; ``iterations``,
        ``finish_reason`` and tokens from its end) when it used tools, and draw its lesson.
        None for a turn without tools or one that no longer exists."""
        topic_id, user_id = str(payload["topic_id"]), int(payload["user_message_id"])
        evaluation = await asyncio.to_thread(self.store.evaluations.for_turn, topic_id, user_id)
        if evaluation is None:
            facts = await asyncio.to_thread(turn_facts, self.store, topic_id, user_id, payload)
            if facts is None or not facts.runs:
                return None
            verdict = await judge(self.llm, facts)
            evaluation = await asyncio.to_thread(
                self.store.evaluations.add, evaluation_of(facts, verdict)
            )
            await asyncio.to_thread(self._skill_outcomes, evaluation)
        if needs_lesson(evaluation) and evaluation.lesson_id is None:
            await self.lesson_for(evaluation.id)
        await self.crystallise(evaluation)
        return evaluation

    def _skill_outcomes(self, evaluation: Evaluation) -> None:
        """Count the outcome for each skill the turn loaded (once: with its new evaluation)."""
        from .crystallise import loaded_skills, read_turn

        turn = read_turn(self.store, evaluation)
        for name in loaded_skills(turn) if turn is not None else []:
            self.store.skill_stats.outcome(name, evaluation.outcome == "success")

    async def crystallise(self, evaluation: Evaluation) -> Crystal | None:
        """Keep a task that went well as a learned skill, once per evaluation (a job run again
        after a crash finds it done)."""
        from .crystallise import crystallise, worth_crystallising

        if self.home is None or not worth_crystallising(evaluation):
            return None
        key = f"crystallised:{evaluation.id}"
        if await asyncio.to_thread(self.store.state.get, LEARNING_SCOPE, key):
            return None
        crystal = await crystallise(
            self.store, self.home, evaluation, self.llm, workspace=self.workspace
        )
        await asyncio.to_thread(
            self.store.state.put, LEARNING_SCOPE, key, crystal.name or crystal.action
        )
        log.info(
            "crystallisation of evaluation %s: %s %s", evaluation.id, crystal.action, crystal.name
        )
        return crystal

    async def lesson_for(self, evaluation_id: int, *, again: bool = False) -> Lesson | None:
        """The lesson of a task that needs one: the one it has, or a new one (``again``: a new
        one unless it has one drawn since its verdict last changed, e.g. for the user's
        correction)."""
        evaluation = await asyncio.to_thread(self.store.evaluations.get, evaluation_id)
        if evaluation is None or not needs_lesson(evaluation):
            return None
        if evaluation.lesson_id is not None:
            current = await asyncio.to_thread(self.store.lessons.get, evaluation.lesson_id)
            if current is not None and (not again or current.created_at >= evaluation.updated_at):
                return current
        draft = await draft_lesson(self.llm, evaluation)
        book = LessonBook(self.store, self.embedder)
        return await asyncio.to_thread(book.add, evaluation, draft)
