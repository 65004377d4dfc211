"""Lessons: what went wrong in a failed, partial or corrected task, and what to do instead.

The cheap model writes one from the task's evaluation (strict JSON, repaired leniently); without
a model, or when its answer is unusable, heuristics write it from the errors and the user's
comment. Each lesson is stored with its keyword terms and a vector from the runtime's embedder.

A request receives the lessons relevant to it (:meth:`LessonBook.section`): keyword overlap and
vector cosine blended, as for memories, over the newest ``CANDIDATES`` lessons only, so the cost
of a request does not grow with the number of lessons.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import LLMError
from ..llm.repair import JSONRepairError, repair_json
from ..memory.select import blend_relevance
from ..store.evaluations import Lesson
from ..terms import keyword_terms
from ..vectors import dot, pack, unpack

if TYPE_CHECKING:
    from ..memory.embedder import Embedder
    from ..store import Store
    from ..store.evaluations import Evaluation
    from ..types import ChatModel

__all__ = [
    "CATEGORIES",
    "LESSON_PROMPT",
    "LessonBook",
    "LessonDraft",
    "draft_lesson",
    "guess_category",
    "heuristic_lesson",
    "parse_lesson",
]

log = logging.getLogger(__name__)

CATEGORIES = (
    "dependency",
    "architecture",
    "ui",
    "performance",
    "testing",
    "deployment",
    "tools",
    "workflow",
    "general",
)
CANDIDATES = 200  # the newest lessons scored per request; older ones are not looked at
MIN_SCORE = 0.25
MIN_SHARED_TERMS = 2  # or a close vector: one shared word ("file") is not relevance
CLOSE_VECTOR = 0.45
MAX_TERMS = 80
FIELD_CHARS = 400
SECTION_HEADING = "Lessons from earlier tasks (do not repeat these mistakes):"

LESSON_PROMPT = """\
An AI assistant's task went wrong or the user corrected it. Write the lesson to remember for \
similar tasks. Answer with JSON only:
{"category": "dependency", "mistake": "what went wrong, one sentence", \
"instead": "what to do instead next time, one concrete sentence"}
category is one of: dependency, architecture, ui, performance, testing, deployment, tools, \
workflow, general. Be specific to this task (name the tool, command, file or library); no \
generic advice."""

_THINK = re.compile(r"<think(?:ing)?>.*?(?:</think(?:ing)?>|\Z)", re.S | re.I)
# first match wins; the words a task's text uses for each category
_CATEGORY_WORDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("dependency", ("module", "import", "pip", "install", "package", "dependency", "version")),
    ("testing", ("test", "pytest", "assert", "unittest", "coverage")),
    ("performance", ("timeout", "slow", "memory", "performance", "latency", "ran over")),
    ("deployment", ("deploy", "docker", "server", "release", "production", "ci")),
    ("ui", ("css", "html", "button", "layout", "ui", "page", "frontend")),
    ("architecture", ("architecture", "design", "refactor", "interface", "module layout")),
    ("tools", ("toolkit_", "tool", "command", "permission", "denied", "not found")),
)


@dataclass(frozen=True)
class LessonDraft:
    mistake: str
    instead: str
    category: str
    source: str  # model, heuristic or user


def guess_category(text: str) -> str:
    lowered = text.lower()
    words = set(re.findall(r"[a-z_]+", lowered))
    for category, cues in _CATEGORY_WORDS:
        if any((cue in words) if cue.isalpha() else (cue in lowered) for cue in cues):
            return category
    return "general"


def heuristic_lesson(evaluation: Evaluation) -> LessonDraft:
    """The lesson the evaluation's own facts give: the user's correction, else the errors."""
    text = f"{evaluation.user_text}\n{evaluation.error_text}\n{evaluation.comment or ''}"
    category = guess_category(text)
    first_error = evaluation.error_text.splitlines()[0] if evaluation.error_text else ""
    if evaluation.rating == "bad" and evaluation.comment:
        mistake = f"The user said the result was wrong: {evaluation.comment}"
        return LessonDraft(_field(mistake), _field(evaluation.comment), category, "user")
    if evaluation.finish_reason in ("loop", "max_iterations"):
        return LessonDraft(
            f"The task went round in circles ({evaluation.iterations} steps) without an answer.",
            "When two attempts fail the same way, change the approach or ask the user.",
            "workflow",
            "heuristic",
        )
    if first_error:
        worked = [t for t in evaluation.tools[-2:] if t not in first_error]
        instead = "Read the error and fix its cause before calling the tool again"
        if evaluation.outcome == "partial" and worked:
            instead += f"; here {', '.join(worked)} then worked"
        return LessonDraft(_field(f"{first_error}"), instead + ".", category, "heuristic")
    mistake = evaluation.reason or "The result did not satisfy the request."
    return LessonDraft(
        _field(mistake),
        "Check the result against the request before answering.",
        category,
        "heuristic",
    )


def lesson_messages(evaluation: Evaluation) -> list[dict[str, Any]]:
    tools = ", ".join(evaluation.tools) or "none"
    parts = [
        f"Request:\n{evaluation.user_text[:1500]}",
        f"Tools used in order: {tools}",
        f"Outcome: {evaluation.outcome} (quality {evaluation.quality}/5). {evaluation.reason}",
    ]
    if evaluation.error_text:
        parts.append(f"Errors:\n{evaluation.error_text}")
    if evaluation.comment:
        parts.append(f"The user's correction: {evaluation.comment}")
    return [
        {"role": "system", "content": LESSON_PROMPT},
        {"role": "user", "content": "\n\n".join(parts)},
    ]


async def draft_lesson(llm: ChatModel | None, evaluation: Evaluation) -> LessonDraft:
    """The model's lesson, or the heuristic one when there is no model or its answer fails."""
    if llm is not None:
        try:
            completion = await llm.complete(lesson_messages(evaluation))
        except LLMError as exc:
            log.info("lesson from the model failed (%s); using heuristics", exc)
        else:
            draft = parse_lesson(completion.content)
            if draft is not None:
                return draft
    return heuristic_lesson(evaluation)


def parse_lesson(text: str) -> LessonDraft | None:
    """A lesson from the model's answer; None without both a mistake and what to do instead."""
    cleaned = _THINK.sub("", text or "").strip()
    try:
        value = repair_json(cleaned) if cleaned else None
    except (JSONRepairError, RecursionError):
        return None
    if isinstance(value, dict) and isinstance(value.get("lesson"), dict):
        value = value["lesson"]
    if not isinstance(value, dict):
        return None
    mistake = _field(value.get("mistake") or value.get("what_went_wrong"))
    instead = _field(value.get("instead") or value.get("do_instead"))
    if not mistake or not instead:
        return None
    category = str(value.get("category") or "").strip().lower()
    if category not in CATEGORIES:
        category = guess_category(f"{mistake} {instead}")
    return LessonDraft(mistake, instead, category, "model")


class LessonBook:
    """Lessons stored with their terms and vectors, and found again by relevance."""

    def __init__(self, store: Store, embedder: Embedder | None = None) -> None:
        self.store = store
        self.embedder = embedder

    def add(self, evaluation: Evaluation, draft: LessonDraft) -> Lesson:
        """Store the lesson of ``evaluation`` and link it to it."""
        text = f"{evaluation.user_text[:1000]} {draft.mistake} {draft.instead} {draft.category}"
        terms = " ".join(sorted(keyword_terms(text))[:MAX_TERMS])
        blob, model = None, ""
        if self.embedder is not None:
            try:
                (vector,) = self.embedder.embed(
                    [f"{draft.mistake} {draft.instead} {evaluation.user_text[:500]}"]
                )
                blob, model = pack(vector), self.embedder.model_name
            except (LLMError, ValueError) as exc:  # found by keywords alone meanwhile
                log.info("lesson not embedded: %s", exc)
        lesson = Lesson(
            mistake=draft.mistake,
            instead=draft.instead,
            category=draft.category,
            evaluation_id=evaluation.id,
            topic_id=evaluation.topic_id,
            terms=terms,
            embedding=blob,
            embedding_model=model,
            source=draft.source,
        )
        with self.store.transaction():
            lesson = self.store.lessons.add(lesson)
            self.store.evaluations.set_lesson(evaluation.id, lesson.id)
        return lesson

    def relevant(self, query: str, limit: int = 3) -> list[tuple[Lesson, float]]:
        """The lessons relevant to ``query``, best first, among the newest ``CANDIDATES``."""
        query_terms = keyword_terms(query)
        if not query_terms or limit <= 0:
            return []
        candidates = self.store.lessons.recent(CANDIDATES)
        if not candidates:
            return []
        query_vector = self._embed(query, candidates)
        scored: list[tuple[float, Lesson]] = []
        for lesson in candidates:
            terms = set(lesson.terms.split())
            shared = len(terms & query_terms)
            keyword = shared / min(len(terms), len(query_terms)) if terms else 0.0
            vector = 0.0
            if (
                query_vector is not None
                and lesson.embedding
                and lesson.embedding_model
                == (self.embedder.model_name if self.embedder is not None else "")
            ):
                stored = unpack(lesson.embedding)
                if len(stored) == len(query_vector):
                    vector = dot(query_vector, stored)
            score = blend_relevance(keyword, vector)
            if score >= MIN_SCORE and (shared >= MIN_SHARED_TERMS or vector >= CLOSE_VECTOR):
                scored.append((score, lesson))
        scored.sort(key=lambda item: (item[0], item[1].id), reverse=True)
        return [(lesson, score) for score, lesson in scored[:limit]]

    def section(self, query: str, limit: int, chars: int) -> str:
        """The relevant lessons as a section of the context block ("" when none fits)."""
        lines = [SECTION_HEADING]
        used = len(SECTION_HEADING)
        for lesson, _score in self.relevant(query, limit):
            line = f"- [{lesson.category}] {lesson.mistake} Instead: {lesson.instead}"
            if used + len(line) + 1 > chars:
                break
            lines.append(line)
            used += len(line) + 1
        return "\n".join(lines) if len(lines) > 1 else ""

    def _embed(self, query: str, candidates: list[Lesson]) -> list[float] | None:
        embedder = self.embedder
        if embedder is None or not any(
            c.embedding and c.embedding_model == embedder.model_name for c in candidates
        ):
            return None
        try:
            return embedder.embed([query])[0]
        except (LLMError, ValueError) as exc:
            log.info("lesson search without vectors: %s", exc)
            return None


def _field(value: Any) -> str:
    return " ".join(str(value or "").split())[:FIELD_CHARS]
