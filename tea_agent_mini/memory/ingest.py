"""Storing candidates without piling up duplicates.

No merge may lose a fact: two texts are never merged when the one whose content would be dropped
has a number, name, host or version the kept one lacks (see ``terms.lost_facts``), so "staging
IP is 10.0.0.5" and "production IP is 10.0.0.9" stay two memories.

For each candidate: an active memory with the same content hash absorbs it; otherwise the most
similar active memory by keyword Jaccard (words + CJK bigrams, ×1.1 within the same category)
absorbs it when the similarity reaches 0.3; otherwise it is added. Candidates of one batch are
first merged among themselves when their vectors' cosine reaches 0.92. Merging keeps the longer
content, the stronger priority, the higher importance, the union of tags and the earlier
expiry. At most 15 CRITICAL memories stay active: the oldest unpinned ones are soft-deleted.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..store.memories import Memory, MemoryRepository
from ..terms import content_hash, jaccard, keyword_terms, lost_facts
from ..vectors import dot
from .index import MemoryVectors
from .model import Candidate, Priority

__all__ = [
    "IngestOutcome",
    "enforce_critical_cap",
    "ingest_candidates",
    "may_merge",
    "merge_candidates",
    "similarity",
]

log = logging.getLogger(__name__)

MERGE_THRESHOLD = 0.3
SAME_CATEGORY_WEIGHT = 1.1
BATCH_COSINE = 0.92
CRITICAL_CAP = 15
_SIMILAR_POOL = 50


@dataclass(frozen=True)
class IngestOutcome:
    """What happened to one candidate: ``added``, ``merged`` (into a similar memory) or
    ``duplicate`` (same content as an existing memory, whose fields were merged)."""

    memory: Memory
    action: str


def similarity(a: set[str], b: set[str], same_category: bool) -> float:
    """Keyword Jaccard of two term sets, weighted ×1.1 when the categories match."""
    score = jaccard(a, b)
    return score * SAME_CATEGORY_WEIGHT if same_category else score


def _earlier(a: float | None, b: float | None) -> float | None:
    if a is None:
        return b
    return a if b is None else min(a, b)


def _union(a: Sequence[str], b: Sequence[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*a, *b]))


def may_merge(a: str, b: str) -> bool:
    """Whether merging the texts keeps every fact: the one whose content the merge drops (the
    shorter) names no number, name, host or version that the other lacks."""
    if len(a.strip()) == len(b.strip()):
        return not lost_facts(a, b) and not lost_facts(b, a)
    shorter, longer = sorted((a, b), key=lambda text: len(text.strip()))
    return not lost_facts(shorter, longer)


def merge_candidates(kept: Candidate, other: Candidate) -> Candidate:
    """Two candidates as one, by the merge rules."""
    longer = other if len(other.content.strip()) > len(kept.content.strip()) else kept
    return Candidate(
        content=longer.content,
        priority=Priority(min(kept.priority, other.priority)),
        importance=max(kept.importance, other.importance),
        category=longer.category,
        tags=_union(kept.tags, other.tags),
        expires_at=_earlier(kept.expires_at, other.expires_at),
        pinned=kept.pinned or other.pinned,
    )


def _merge_changes(memory: Memory, candidate: Candidate) -> dict[str, Any]:
    """The fields of ``memory`` that absorbing ``candidate`` changes."""
    merged = merge_candidates(_as_candidate(memory), candidate)
    changes: dict[str, Any] = {}
    if merged.content.strip() != memory.content.strip():
        changes.update(content=merged.content, category=merged.category)
    for name in ("priority", "importance", "tags", "expires_at", "pinned"):
        if getattr(merged, name) != getattr(memory, name):
            changes[name] = getattr(merged, name)
    return changes


def _as_candidate(memory: Memory) -> Candidate:
    return Candidate(
        content=memory.content,
        priority=Priority(memory.priority),
        importance=memory.importance,
        category=memory.category,
        tags=tuple(memory.tags),
        expires_at=memory.expires_at,
        pinned=memory.pinned,
    )


def ingest_candidates(
    repo: MemoryRepository,
    candidates: Sequence[Candidate],
    now: float,
    *,
    vectors: MemoryVectors | None = None,
    source_topic: str | None = None,
) -> list[IngestOutcome]:
    """Store ``candidates`` with deduplication; one outcome per candidate left after the batch
    merge, in order. Vectors (when ``vectors`` is given) are stored with new content."""
    batch = [c for c in candidates if c.content.strip()]
    if not batch:
        return []
    embedded = vectors.embed([c.content for c in batch]) if vectors is not None else None
    model, vecs = embedded if embedded is not None else ("", [None] * len(batch))
    outcomes = []
    for candidate, vector in _merge_batch(batch, vecs):
        outcome = _ingest_one(repo, candidate, vector, model, now, source_topic)
        outcomes.append(outcome)
    enforce_critical_cap(repo, now)
    return outcomes


def _merge_batch(
    batch: list[Candidate], vecs: Sequence[list[float] | None]
) -> list[tuple[Candidate, list[float] | None]]:
    kept: list[tuple[Candidate, list[float] | None]] = []
    for candidate, vector in zip(batch, vecs, strict=True):
        for n, (other, other_vector) in enumerate(kept):
            if vector is None or other_vector is None or len(vector) != len(other_vector):
                continue
            if dot(vector, other_vector) >= BATCH_COSINE and may_merge(
                other.content, candidate.content
            ):
                merged = merge_candidates(other, candidate)
                chosen = vector if merged.content == candidate.content else other_vector
                kept[n] = (merged, chosen)
                break
        else:
            kept.append((candidate, vector))
    return kept


def _ingest_one(
    repo: MemoryRepository,
    candidate: Candidate,
    vector: list[float] | None,
    model: str,
    now: float,
    source_topic: str | None,
) -> IngestOutcome:
    same = repo.find_by_hash(content_hash(candidate.content), now)
    if same is not None:
        return IngestOutcome(_absorb(repo, same, candidate, vector, model, now), "duplicate")
    similar = _most_similar(repo, candidate, now)
    if similar is not None:
        return IngestOutcome(_absorb(repo, similar, candidate, vector, model, now), "merged")
    memory = repo.add(
        candidate.content,
        priority=candidate.priority,
        importance=candidate.importance,
        category=candidate.category,
        tags=candidate.tags,
        expires_at=candidate.expires_at,
        pinned=candidate.pinned,
        source_topic=source_topic,
        embedding=vector,
        embedding_model=model,
        now=now,
    )
    return IngestOutcome(memory, "added")


def _most_similar(repo: MemoryRepository, candidate: Candidate, now: float) -> Memory | None:
    terms = keyword_terms(candidate.content)
    best, best_score = None, 0.0
    for memory, _ in repo.search_keyword(candidate.content, limit=_SIMILAR_POOL, now=now):
        if not may_merge(memory.content, candidate.content):
            continue
        score = similarity(
            terms, keyword_terms(memory.content), memory.category == candidate.category
        )
        if score > best_score:
            best, best_score = memory, score
    return best if best_score >= MERGE_THRESHOLD else None


def _absorb(
    repo: MemoryRepository,
    memory: Memory,
    candidate: Candidate,
    vector: list[float] | None,
    model: str,
    now: float,
) -> Memory:
    """Merge ``candidate`` into ``memory``; restating a memory refreshes its ``updated_at``."""
    changes = _merge_changes(memory, candidate)
    updated = repo.update(memory.id, now=now, **changes) or memory
    if "content" in changes and vector is not None and model:
        repo.set_embedding(memory.id, vector, model)
        updated = repo.get(memory.id) or updated
    return updated


def enforce_critical_cap(repo: MemoryRepository, now: float, cap: int = CRITICAL_CAP) -> list[int]:
    """Soft-delete the oldest unpinned CRITICAL memories beyond ``cap``; return their ids."""
    critical = repo.matching(priority=Priority.CRITICAL, limit=None, now=now)
    excess = len(critical) - cap
    if excess <= 0:
        return []
    oldest = sorted((m for m in critical if not m.pinned), key=lambda m: (m.created_at, m.id))
    doomed = [m.id for m in oldest[:excess]]
    repo.soft_delete(doomed, now=now)
    log.info("CRITICAL memories over the cap of %d: soft-deleted %s", cap, doomed)
    return doomed
