"""How finished tasks went (evaluations) and what they taught (lessons).

An evaluation belongs to one turn (its topic and the id of the user message that opened it) and
carries what a later step needs without reading the conversation again: the user's words, the
tools used in order, the outcome (success, partial, failed), a quality from 1 to 5, the cost
(iterations, tool calls, errors, tokens) and who judged it (``heuristic``, ``model`` or
``user``). The user's rating overrides the others and is never overwritten by them.

A lesson says what went wrong and what to do instead, with a category; its terms and vector
(``terms.keyword_terms``, the runtime's embedder) let ``evaluation/lessons.py`` find the ones
relevant to a new request among a bounded number of the newest.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import StoreError
from .database import Database, Row

__all__ = [
    "OUTCOMES",
    "RATINGS",
    "SOURCES",
    "Evaluation",
    "EvaluationRepository",
    "EvaluationStats",
    "Lesson",
    "LessonRepository",
]

OUTCOMES = ("success", "partial", "failed")
SOURCES = ("heuristic", "model", "user")
RATINGS = ("good", "bad")
TEXT_CHARS = 4000


@dataclass(frozen=True)
class Evaluation:
    topic_id: str
    user_message_id: int
    outcome: str
    quality: int
    source: str
    user_text: str = ""
    tools: tuple[str, ...] = ()
    reason: str = ""
    iterations: int = 0
    tool_calls: int = 0
    errors: int = 0
    error_text: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str | None = None
    rating: str | None = None
    comment: str | None = None
    lesson_id: int | None = None
    id: int = 0
    created_at: float = 0.0
    updated_at: float = 0.0

    @property
    def score(self) -> float:
        """Quality on 0..1 (1 is 0, 5 is 1), for sorting and for crystallising skills."""
        return (self.quality - 1) / 4


@dataclass(frozen=True)
class EvaluationStats:
    total: int = 0
    outcomes: dict[str, int] = field(default_factory=dict)
    sources: dict[str, int] = field(default_factory=dict)
    average_quality: float = 0.0
    rated: int = 0
    lessons: int = 0


@dataclass(frozen=True)
class Lesson:
    mistake: str
    instead: str
    category: str = "general"
    evaluation_id: int | None = None
    topic_id: str | None = None
    terms: str = ""
    embedding: bytes | None = None
    embedding_model: str = ""
    source: str = "heuristic"
    id: int = 0
    created_at: float = 0.0

    @property
    def text(self) -> str:
        return f"{self.mistake} Instead: {self.instead}"


class EvaluationRepository:
    """One evaluation per turn; the user's feedback overrides it."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def add(self, evaluation: Evaluation) -> Evaluation:
        """Store ``evaluation`` unless its turn has one already; the turn's evaluation either
        way (a judgement made first, the user's above all, stands).

        Raises:
            StoreError: unknown outcome or source, a quality outside 1..5, no such topic.
        """
        _check(evaluation)
        now = self._db.now()
        with self._db.transaction():
            existing = self.for_turn(evaluation.topic_id, evaluation.user_message_id)
            if existing is not None:
                return existing
            cursor = self._db.execute(
                "INSERT INTO evaluations (topic_id, user_message_id, user_text, tools, outcome, "
                "quality, reason, iterations, tool_calls, errors, error_text, prompt_tokens, "
                "completion_tokens, finish_reason, source, rating, comment, created_at, "
                "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    evaluation.topic_id,
                    evaluation.user_message_id,
                    evaluation.user_text[:TEXT_CHARS],
                    json.dumps(list(evaluation.tools)),
                    evaluation.outcome,
                    evaluation.quality,
                    evaluation.reason[:TEXT_CHARS],
                    evaluation.iterations,
                    evaluation.tool_calls,
                    evaluation.errors,
                    evaluation.error_text[:TEXT_CHARS],
                    evaluation.prompt_tokens,
                    evaluation.completion_tokens,
                    evaluation.finish_reason,
                    evaluation.source,
                    evaluation.rating,
                    evaluation.comment,
                    now,
                    now,
                ),
            )
        return replace(evaluation, id=int(cursor.lastrowid or 0), created_at=now, updated_at=now)

    def get(self, evaluation_id: int) -> Evaluation | None:
        row = self._db.query_one("SELECT * FROM evaluations WHERE id = ?", (evaluation_id,))
        return _evaluation(row) if row else None

    def for_turn(self, topic_id: str, user_message_id: int) -> Evaluation | None:
        row = self._db.query_one(
            "SELECT * FROM evaluations WHERE topic_id = ? AND user_message_id = ?",
            (topic_id, int(user_message_id)),
        )
        return _evaluation(row) if row else None

    def recent(
        self,
        limit: int = 50,
        topic_id: str | None = None,
        outcome: str | None = None,
        before_id: int | None = None,
    ) -> list[Evaluation]:
        """Newest first; of one topic and/or one outcome, older than ``before_id``, when given."""
        where: list[str] = []
        params: list[Any] = []
        for column, value in (("topic_id =", topic_id), ("outcome =", outcome)):
            if value is not None:
                where.append(f"{column} ?")
                params.append(value)
        if before_id is not None:
            where.append("id < ?")
            params.append(int(before_id))
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        rows = self._db.query(
            f"SELECT * FROM evaluations {clause} ORDER BY id DESC LIMIT ?",
            (*params, max(0, int(limit))),
        )
        return [_evaluation(row) for row in rows]

    def set_feedback(
        self, evaluation_id: int, rating: str, comment: str | None = None
    ) -> Evaluation | None:
        """The user's verdict: ``good`` makes it a success of quality 4 or more, ``bad`` a
        failure of quality 2 or less; the source becomes ``user``. None when there is no such
        evaluation.

        Raises:
            StoreError: a rating other than good or bad.
        """
        if rating not in RATINGS:
            raise StoreError(f"unknown rating {rating!r}; expected one of {RATINGS}")
        if rating == "good":
            outcome, quality = "success", "MAX(quality, 4)"
        else:
            outcome, quality = "failed", "MIN(quality, 2)"
        cursor = self._db.execute(
            f"UPDATE evaluations SET rating = ?, comment = ?, outcome = ?, quality = {quality}, "
            "source = 'user', updated_at = ? WHERE id = ?",
            (rating, comment, outcome, self._db.now(), evaluation_id),
        )
        return self.get(evaluation_id) if cursor.rowcount else None

    def set_lesson(self, evaluation_id: int, lesson_id: int) -> None:
        """Link the lesson; ``updated_at`` stays when the verdict last changed, so a lesson
        drawn after it is known to be current."""
        self._db.execute(
            "UPDATE evaluations SET lesson_id = ? WHERE id = ?", (lesson_id, evaluation_id)
        )

    def stats(self, topic_id: str | None = None) -> EvaluationStats:
        where, params = ("WHERE topic_id = ?", (topic_id,)) if topic_id else ("", ())
        rows = self._db.query(
            f"SELECT outcome, source, COUNT(*), SUM(quality), COUNT(rating), COUNT(lesson_id) "
            f"FROM evaluations {where} GROUP BY outcome, source",
            params,
        )
        outcomes = dict.fromkeys(OUTCOMES, 0)
        sources = dict.fromkeys(SOURCES, 0)
        total = quality = rated = lessons = 0
        for outcome, source, count, quality_sum, rated_sum, lesson_sum in rows:
            outcomes[outcome] += int(count)
            sources[source] += int(count)
            total += int(count)
            quality += int(quality_sum or 0)
            rated += int(rated_sum or 0)
            lessons += int(lesson_sum or 0)
        average = round(quality / total, 2) if total else 0.0
        return EvaluationStats(total, outcomes, sources, average, rated, lessons)


class LessonRepository:
    """Lessons, read for relevance among the newest ``limit`` (a bounded scan)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def add(self, lesson: Lesson) -> Lesson:
        now = self._db.now()
        cursor = self._db.execute(
            "INSERT INTO lessons (evaluation_id, topic_id, category, mistake, instead, terms, "
            "embedding, embedding_model, source, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                lesson.evaluation_id,
                lesson.topic_id,
                lesson.category,
                lesson.mistake[:TEXT_CHARS],
                lesson.instead[:TEXT_CHARS],
                lesson.terms,
                lesson.embedding,
                lesson.embedding_model,
                lesson.source,
                now,
            ),
        )
        return replace(lesson, id=int(cursor.lastrowid or 0), created_at=now)

    def get(self, lesson_id: int) -> Lesson | None:
        row = self._db.query_one("SELECT * FROM lessons WHERE id = ?", (lesson_id,))
        return _lesson(row) if row else None

    def recent(
        self, limit: int = 50, category: str | None = None, before_id: int | None = None
    ) -> list[Lesson]:
        """Newest first (the candidates of a relevance search are the newest ``limit``); of one
        category, older than ``before_id``, when given."""
        where: list[str] = []
        params: list[Any] = []
        if category:
            where.append("category = ?")
            params.append(category)
        if before_id is not None:
            where.append("id < ?")
            params.append(int(before_id))
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        rows = self._db.query(
            f"SELECT * FROM lessons {clause} ORDER BY id DESC LIMIT ?",
            (*params, max(0, int(limit))),
        )
        return [_lesson(row) for row in rows]

    def count(self) -> int:
        row = self._db.query_one("SELECT COUNT(*) FROM lessons")
        return int(row[0]) if row else 0

    def delete(self, lesson_id: int) -> bool:
        with self._db.transaction():
            self._db.execute(
                "UPDATE evaluations SET lesson_id = NULL WHERE lesson_id = ?", (lesson_id,)
            )
            cursor = self._db.execute("DELETE FROM lessons WHERE id = ?", (lesson_id,))
        return cursor.rowcount > 0


def _check(evaluation: Evaluation) -> None:
    if evaluation.outcome not in OUTCOMES:
        raise StoreError(f"unknown outcome {evaluation.outcome!r}; expected one of {OUTCOMES}")
    if evaluation.source not in SOURCES:
        raise StoreError(f"unknown source {evaluation.source!r}; expected one of {SOURCES}")
    if not 1 <= evaluation.quality <= 5:
        raise StoreError(f"quality must be 1 to 5, not {evaluation.quality}")
    if evaluation.rating is not None and evaluation.rating not in RATINGS:
        raise StoreError(f"unknown rating {evaluation.rating!r}; expected one of {RATINGS}")


def _evaluation(row: Row) -> Evaluation:
    try:
        tools = json.loads(row["tools"] or "[]")
    except ValueError:
        tools = []
    return Evaluation(
        id=row["id"],
        topic_id=row["topic_id"],
        user_message_id=row["user_message_id"],
        user_text=row["user_text"],
        tools=tuple(str(t) for t in tools) if isinstance(tools, list) else (),
        outcome=row["outcome"],
        quality=int(row["quality"]),
        reason=row["reason"],
        iterations=int(row["iterations"]),
        tool_calls=int(row["tool_calls"]),
        errors=int(row["errors"]),
        error_text=row["error_text"],
        prompt_tokens=int(row["prompt_tokens"]),
        completion_tokens=int(row["completion_tokens"]),
        finish_reason=row["finish_reason"],
        source=row["source"],
        rating=row["rating"],
        comment=row["comment"],
        lesson_id=row["lesson_id"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


def _lesson(row: Row) -> Lesson:
    blob = row["embedding"]
    return Lesson(
        id=row["id"],
        evaluation_id=row["evaluation_id"],
        topic_id=row["topic_id"],
        category=row["category"],
        mistake=row["mistake"],
        instead=row["instead"],
        terms=row["terms"],
        embedding=bytes(blob) if blob is not None else None,
        embedding_model=row["embedding_model"],
        source=row["source"],
        created_at=row["created_at"],
    )
