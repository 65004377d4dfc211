"""Which memories go into a turn's prompt, and how they are written there.

    score = relevance × importance/5 × recency × (4 − priority)/4

Relevance blends keyword coverage and vector cosine. CRITICAL memories come first (at most 10,
newest first); then each weaker tier gets a floor (HIGH 3, MEDIUM 2, LOW 1, when it has that
many); the rest are taken by score while they are relevant at all. Every pick must fit both the
item limit (30) and the character budget (~4000, counted on the lines as injected).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter

from ..store.memories import Memory
from .model import Priority

__all__ = [
    "SelectionLimits",
    "blend_relevance",
    "format_for_prompt",
    "prompt_line",
    "recency_factor",
    "select_memories",
]

DAY = 86400.0
KEYWORD_WEIGHT = 0.5
VECTOR_WEIGHT = 0.5
# (age in days at most, factor); older than the last step gets OLD_RECENCY
RECENCY_STEPS = ((1.0, 1.0), (7.0, 0.9), (30.0, 0.7), (90.0, 0.5))
OLD_RECENCY = 0.3
PROMPT_HEADING = (
    "Long-term memory (what you know from earlier conversations; "
    'always follow the "must follow" items):'
)


@dataclass(frozen=True)
class SelectionLimits:
    max_items: int = 30
    max_chars: int = 4000
    max_critical: int = 10
    floors: tuple[tuple[Priority, int], ...] = (
        (Priority.HIGH, 3),
        (Priority.MEDIUM, 2),
        (Priority.LOW, 1),
    )
    # Below this blended relevance a memory enters only through a tier floor.
    min_relevance: float = 0.1


def recency_factor(age_seconds: float) -> float:
    """1.0 / 0.9 / 0.7 / 0.5 / 0.3 for ages up to 1 / 7 / 30 / 90 / beyond 90 days."""
    days = max(0.0, age_seconds) / DAY
    for limit, factor in RECENCY_STEPS:
        if days <= limit:
            return factor
    return OLD_RECENCY


def blend_relevance(keyword: float, vector: float) -> float:
    """Keyword coverage (0..1) and cosine (negative counts as 0) blended into 0..1."""
    keyword = min(1.0, max(0.0, keyword))
    vector = min(1.0, max(0.0, vector))
    return KEYWORD_WEIGHT * keyword + VECTOR_WEIGHT * vector


def base_score(memory: Memory, now: float) -> float:
    """Everything in the score except relevance."""
    priority_weight = (4 - min(3, max(0, memory.priority))) / 4
    age = now - (memory.updated_at or memory.created_at)
    return memory.importance / 5 * recency_factor(age) * priority_weight


class _Picker:
    """The selection so far, holding the item and character limits."""

    def __init__(self, limits: SelectionLimits) -> None:
        self.limits = limits
        self.picked: dict[int, Memory] = {}
        self.chars = 0

    @property
    def full(self) -> bool:
        return len(self.picked) >= self.limits.max_items

    def take(self, memory: Memory) -> bool:
        if memory.id in self.picked or self.full:
            return False
        cost = len(prompt_line(memory)) + 1
        if self.chars + cost > self.limits.max_chars:
            return False
        self.picked[memory.id] = memory
        self.chars += cost
        return True


def select_memories(
    memories: Iterable[Memory],
    keyword: Mapping[int, float],
    vector: Mapping[int, float],
    now: float,
    limits: SelectionLimits = SelectionLimits(),
    *,
    has_query: bool = True,
) -> list[Memory]:
    """The memories for one turn: CRITICAL first (newest first), then the rest by score.

    ``keyword`` and ``vector`` map memory ids to their keyword coverage and cosine for the
    turn's query; ids missing from both have relevance 0. Without a query (``has_query=False``)
    every memory counts as fully relevant, so importance, recency and priority decide alone.
    """
    pool = list(memories)
    picker = _Picker(limits)
    critical = [m for m in pool if m.priority <= Priority.CRITICAL]
    critical.sort(key=lambda m: (m.updated_at, m.id), reverse=True)
    for memory in critical[: limits.max_critical]:
        picker.take(memory)
    scored = _scored(pool, keyword, vector, now, has_query)
    for tier, floor in limits.floors:
        taken = 0
        for _, _, _, _, _, memory in scored:
            if taken >= floor or picker.full:
                break
            if memory.priority == tier and picker.take(memory):
                taken += 1
    for score, _, _, _, relevance, memory in scored:
        if picker.full:
            break
        if relevance >= limits.min_relevance and score > 0:
            picker.take(memory)
    rank = {item[-1].id: n for n, item in enumerate(scored)}
    chosen = list(picker.picked.values())
    head = [m for m in chosen if m.priority <= Priority.CRITICAL]
    tail = sorted((m for m in chosen if m.priority > Priority.CRITICAL), key=lambda m: rank[m.id])
    return head + tail


_Scored = tuple[float, float, float, int, float, Memory]  # score, base, updated, id, relevance


def _scored(
    pool: list[Memory],
    keyword: Mapping[int, float],
    vector: Mapping[int, float],
    now: float,
    has_query: bool,
) -> list[_Scored]:
    """Non-CRITICAL memories with their scores, best first (ties: base score, newer, higher id).

    The score is ``blend_relevance`` × ``base_score``, called rather than copied: the pool is
    bounded (a few hundred memories at most, see ``MemoryManager._selection_pool``), so the
    calls cost well under a millisecond, and the formula the tests check is the one that runs.
    """
    scored: list[_Scored] = []
    for memory in pool:
        if memory.priority <= Priority.CRITICAL:
            continue
        mid = memory.id
        if has_query:
            relevance = blend_relevance(keyword.get(mid, 0.0), vector.get(mid, 0.0))
        else:
            relevance = 1.0
        base = base_score(memory, now)
        updated = memory.updated_at or memory.created_at
        scored.append((relevance * base, base, updated, mid, relevance, memory))
    scored.sort(key=itemgetter(0, 1, 2, 3), reverse=True)
    return scored


# -- injection ------------------------------------------------------------------------------

_KIND_ORDER = ("must follow", "reminder", "preference", "fact", "note")


def memory_kind(memory: Memory) -> str:
    """How a memory is labelled in the prompt."""
    if memory.priority <= Priority.CRITICAL or memory.category == "instruction":
        return "must follow"
    if memory.category in ("reminder", "preference", "fact"):
        return memory.category
    return "note"


def prompt_line(memory: Memory) -> str:
    """``- [kind] content`` on one line; reminders show the day they expire."""
    label = memory_kind(memory)
    if label == "reminder" and memory.expires_at is not None:
        day = time.strftime("%Y-%m-%d", time.localtime(memory.expires_at))
        label = f"reminder, until {day}"
    return f"- [{label}] {' '.join(memory.content.split())}"


def format_for_prompt(memories: Sequence[Memory]) -> str:
    """The memories as a block for the system prompt, grouped by kind; "" when there are none."""
    if not memories:
        return ""
    groups: dict[str, list[str]] = {kind: [] for kind in _KIND_ORDER}
    for memory in memories:
        groups[memory_kind(memory)].append(prompt_line(memory))
    lines = [line for kind in _KIND_ORDER for line in groups[kind]]
    return "\n".join([PROMPT_HEADING, *lines])
