"""`MemoryManager`: the one object the rest of the runtime uses for long-term memory.

    memory = MemoryManager(store, embedder, cheap_llm, clock=time.time)
    block = format_for_prompt(memory.select_for_turn(user_message))   # each turn
    await memory.extract_from_turn(user_message, answer, topic_id)    # on the background worker
    memory.decay()                                                     # now and then

Time comes from the injected ``clock`` so tests move it instead of sleeping. Without an embedder
the built-in local one is used, so semantic search works with no endpoint configured.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..errors import StoreError
from .decay import DecayReport, decay_memories
from .embedder import Embedder, LocalEmbedder
from .embedding import LOCAL_DIMENSION, build_embedder
from .extract import extract_candidates
from .index import MemoryVectors
from .ingest import IngestOutcome, ingest_candidates
from .model import Candidate, Priority, clamp_importance, clean_tags, parse_category
from .select import SelectionLimits, blend_relevance, format_for_prompt, select_memories

if TYPE_CHECKING:
    from ..config import Config
    from ..store import Store
    from ..store.memories import Memory, MemoryStats
    from ..types import ChatModel
    from .adjust import PriorityChange, Reflection

__all__ = ["MemoryManager"]

DAY = 86400.0
MIN_SEARCH_SCORE = 0.1
# Keyword and vector matches considered per turn; a selection holds at most 30 memories, so
# candidates beyond the best few dozen of either kind would not score high enough anyway.
CANDIDATE_POOL = 40
# Memories read beyond a tier's floor, for picks the character budget turns down.
FLOOR_SPARE = 3
IMPORTANCES = range(1, 6)


class MemoryManager:
    """Add, find, select, decay, extract and reflect on memories kept in ``store.memories``.

    ``reembed=False`` is for a stand-in manager (e.g. a tool without the runtime's): it gives
    vectors only to memories that have none, never replacing another embedder's.
    """

    def __init__(
        self,
        store: Store,
        embedder: Embedder | None = None,
        cheap_llm: ChatModel | None = None,
        clock: Callable[[], float] = time.time,
        *,
        limits: SelectionLimits | None = None,
        reembed: bool = True,
    ) -> None:
        self.store = store
        self.repo = store.memories
        self.embedder = embedder if embedder is not None else LocalEmbedder(LOCAL_DIMENSION)
        self.vectors = MemoryVectors(self.repo, self.embedder, reembed=reembed)
        self.cheap_llm = cheap_llm
        self.clock = clock
        self.limits = limits or SelectionLimits()
        self.candidate_pool = CANDIDATE_POOL

    @classmethod
    def from_config(
        cls,
        store: Store,
        config: Config,
        cheap_llm: ChatModel | None = None,
        clock: Callable[[], float] = time.time,
    ) -> MemoryManager:
        """A manager whose embedder follows ``config.embedding`` (see ``build_embedder``)."""
        return cls(store, build_embedder(config.embedding, config.main_model), cheap_llm, clock)

    # -- writing ---------------------------------------------------------------------------

    def add(
        self,
        content: str,
        *,
        priority: Priority | int | str = Priority.MEDIUM,
        importance: int = 3,
        category: str = "general",
        tags: Iterable[str] | str | None = (),
        expires_at: float | None = None,
        expires_in_days: float | None = None,
        pinned: bool = False,
        source_topic: str | None = None,
    ) -> IngestOutcome:
        """Store one memory, merged into an existing one when it duplicates it.

        Raises:
            ValueError: an unknown priority, or empty content.
        """
        if not content.strip():
            raise ValueError("a memory needs some content")
        if expires_in_days is not None:
            expires_at = self.clock() + float(expires_in_days) * DAY
        candidate = Candidate(
            content=content.strip(),
            priority=Priority.parse(priority),
            importance=clamp_importance(importance),
            category=parse_category(category),
            tags=clean_tags(tags),
            expires_at=expires_at,
            pinned=pinned,
        )
        (outcome,) = self.ingest([candidate], source_topic=source_topic)
        return outcome

    def ingest(
        self, candidates: Iterable[Candidate], source_topic: str | None = None
    ) -> list[IngestOutcome]:
        """Store candidates with deduplication (see ``ingest.py``)."""
        return ingest_candidates(
            self.repo,
            list(candidates),
            self.clock(),
            vectors=self.vectors,
            source_topic=source_topic,
        )

    def update(self, memory_id: int, **changes: Any) -> Memory | None:
        """Edit a memory (content, priority by name or number, importance, category, tags,
        expires_at, pinned); None when there is no such live memory."""
        if "priority" in changes:
            changes["priority"] = Priority.parse(changes["priority"])
        if "importance" in changes:
            changes["importance"] = clamp_importance(changes["importance"])
        if "category" in changes:
            changes["category"] = parse_category(changes["category"])
        if "tags" in changes:
            changes["tags"] = clean_tags(changes["tags"])
        return self.repo.update(memory_id, now=self.clock(), **changes)

    def pin(self, memory_id: int, pinned: bool = True) -> Memory | None:
        """Pinned memories never decay and are never dropped by the CRITICAL cap."""
        return self.repo.update(memory_id, pinned=pinned, bump=False)

    def forget(self, memory_id: int) -> bool:
        """Soft-delete a memory."""
        return self.repo.soft_delete(memory_id, now=self.clock()) > 0

    # -- reading ---------------------------------------------------------------------------

    def get(self, memory_id: int) -> Memory | None:
        return self.repo.get(memory_id)

    def matching(self, **filters: Any) -> list[Memory]:
        """Active memories (see ``MemoryRepository.matching`` for the filters)."""
        filters.setdefault("now", self.clock())
        return self.repo.matching(**filters)

    def search(self, query: str, limit: int = 10) -> list[tuple[Memory, float]]:
        """Hybrid search: keyword coverage and vector cosine blended, best first."""
        now = self.clock()
        self.vectors.refresh(now)
        keyword, vector = self._relevance(query, now, max(limit * 4, 50))
        by_id = self.repo.by_ids(keyword.keys() | vector.keys(), now)
        scored = [
            (blend_relevance(keyword.get(i, 0.0), vector.get(i, 0.0)), i)
            for i in keyword.keys() | vector.keys()
            if i in by_id
        ]
        scored = [item for item in scored if item[0] >= MIN_SEARCH_SCORE]
        scored.sort(key=lambda item: (item[0], by_id[item[1]].updated_at), reverse=True)
        return [(by_id[i], score) for score, i in scored[: max(0, limit)]]

    def semantic_search(
        self, query: str, limit: int = 10, min_score: float | None = None
    ) -> list[tuple[Memory, float]]:
        """Memories closest to ``query`` by vector cosine alone, best first."""
        now = self.clock()
        self.vectors.refresh(now)
        matches = self.repo.keyword_scores(query, limit=self.candidate_pool, now=now)
        hits = self.vectors.search(query, max(0, limit), min_score, now, also=matches)
        by_id = self.repo.by_ids((i for _, i in hits), now)
        return [(by_id[i], score) for score, i in hits if i in by_id]

    def select_for_turn(self, query: str) -> list[Memory]:
        """The memories to inject for a turn about ``query`` (see ``select.py``); marks them
        accessed."""
        now = self.clock()
        self.vectors.refresh(now)
        has_query = bool(query.strip())
        keyword: dict[int, float] = {}
        vector: dict[int, float] = {}
        if has_query:
            keyword, vector = self._relevance(query, now, self.candidate_pool)
        memories = self._selection_pool(keyword.keys() | vector.keys(), now, has_query)
        chosen = select_memories(memories, keyword, vector, now, self.limits, has_query=has_query)
        if chosen:
            try:
                self.repo.touch_accessed([m.id for m in chosen], now)
            except StoreError:  # a busy database must not cost the turn its memories
                pass
        return chosen

    def prompt_block(self, query: str) -> str:
        """:meth:`select_for_turn` formatted for the system prompt ("" when nothing is kept)."""
        return format_for_prompt(self.select_for_turn(query))

    def warm(self) -> None:
        """Load what the first selection after a start reads (the vectors' codes, the keyword
        backend) now, e.g. in a worker thread while the user is still typing."""
        self.repo.warm(self.vectors.model)
        _ = self.repo.uses_fts

    def stats(self) -> MemoryStats:
        stats = self.repo.stats(self.clock())
        return dataclasses.replace(stats, embedder=self.vectors.model)

    # -- upkeep ----------------------------------------------------------------------------

    def decay(self, now: float | None = None) -> DecayReport:
        """Demote aged memories and retire expired ones (see ``decay.py``)."""
        return decay_memories(self.repo, self.clock() if now is None else now)

    async def extract_from_turn(
        self, user_text: str, answer_text: str, topic_id: str | None = None
    ) -> list[IngestOutcome]:
        """Ask the cheap model what the turn taught and store it; [] without a cheap model."""
        if self.cheap_llm is None:
            return []
        now = self.clock()
        candidates = await extract_candidates(self.cheap_llm, user_text, answer_text, now)
        if not candidates:
            return []
        return await asyncio.to_thread(self.ingest, candidates, topic_id)

    async def adjust_priorities(self) -> list[PriorityChange]:
        """Let the cheap model move up to 3 memories by one priority level."""
        from .adjust import adjust_priorities

        if self.cheap_llm is None:
            return []
        return await adjust_priorities(self.cheap_llm, self.repo, self.clock())

    async def reflect(self) -> list[Reflection]:
        """Summarise large category groups into CRITICAL summaries (see ``adjust.py``)."""
        from .adjust import reflect_memories

        if self.cheap_llm is None:
            return []
        now = self.clock()
        reflections = await reflect_memories(self.cheap_llm, self.repo, now)
        if reflections:
            await asyncio.to_thread(self.vectors.refresh, now)
        return reflections

    def close(self) -> None:
        """Release the embedder's connections, if it holds any."""
        close = getattr(self.embedder, "close", None)
        if callable(close):
            close()

    # -- internals -------------------------------------------------------------------------

    def _selection_pool(self, relevant: Iterable[int], now: float, has_query: bool) -> list[Memory]:
        """Every memory selection could pick (see ``store/memory_pool.py``): the relevant ones,
        the newest CRITICAL ones and the newest of each (priority, importance) group, enough of
        them to fill the tier floors, or the whole selection when there is no query."""
        limits = self.limits
        floors = dict(limits.floors)
        groups = [(int(p), i) for p in Priority if p > Priority.CRITICAL for i in IMPORTANCES]
        per_group = max(floors.values(), default=0) + FLOOR_SPARE if has_query else limits.max_items
        return self.repo.selection_pool(
            relevant, now, critical=limits.max_critical, per_group=per_group, groups=groups
        )

    def _relevance(
        self, query: str, now: float, pool: int
    ) -> tuple[dict[int, float], dict[int, float]]:
        keyword = self.repo.keyword_scores(query, limit=pool, now=now)
        vector = {i: s for s, i in self.vectors.search(query, pool, now=now, also=keyword)}
        return keyword, vector
