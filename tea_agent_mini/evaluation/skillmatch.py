"""Learned skills offered by meaning: the local embedder's cosine of the message and each learned
skill's name, description and triggers. Keyword search finds the hand-written skills; a learned
skill's words are the model's, not the user's, so it is matched by similarity instead."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from ..skills.loader import LEARNED_SOURCE, Skill
from ..vectors import cosine

if TYPE_CHECKING:
    from ..memory.embedder import Embedder

__all__ = ["MIN_SIMILARITY", "closest", "similar_learned", "skill_text"]

MIN_SIMILARITY = 0.3
MAX_CONSIDERED = 200  # a request's cost must not grow with the number of learned skills


def skill_text(skill: Skill) -> str:
    return " ".join([skill.name.replace("-", " "), skill.description, *skill.triggers])


def similar_learned(
    skills: Iterable[Skill], query: str, limit: int, embedder: Embedder | None = None
) -> list[Skill]:
    """The learned skills closest to ``query`` (at most ``limit``, each at least
    :data:`MIN_SIMILARITY` close), best first."""
    learned = [skill for skill in skills if skill.source == LEARNED_SOURCE][:MAX_CONSIDERED]
    if not learned or not query.strip() or limit <= 0:
        return []
    scored = _scores(embedder, query, learned)
    ranked = sorted(scored, key=lambda pair: pair[0], reverse=True)
    return [skill for score, skill in ranked[:limit] if score >= MIN_SIMILARITY]


def closest(
    text: str, skills: Sequence[Skill], embedder: Embedder | None = None
) -> tuple[float, Skill | None]:
    """The skill closest to ``text``, and how close (0 and None when there is none)."""
    if not skills:
        return 0.0, None
    return max(_scores(embedder, text, list(skills)), key=lambda pair: pair[0])


def _scores(embedder: Embedder | None, text: str, skills: list[Skill]) -> list[tuple[float, Skill]]:
    from ..memory.embedder import LocalEmbedder

    embedder = embedder or LocalEmbedder()
    target, *vectors = embedder.embed([text, *(skill_text(skill) for skill in skills)])
    return [(cosine(target, vector), skill) for vector, skill in zip(vectors, skills, strict=True)]
