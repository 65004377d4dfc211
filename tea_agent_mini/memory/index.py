"""Memory vectors: search over every active memory that stays cheap, and lazy re-embedding.

Search runs in two passes: the sign codes of every memory's vector (one bit a component, kept
in memory by ``store.memory_codes`` and loaded from an index at start) rank the whole store in a
few milliseconds, then the ``rerank`` closest, and the keyword matches, are scored exactly from
their stored vectors. Up to ``rerank`` memories every one is scored exactly; beyond, a memory
the codes rank outside the ``rerank`` best and that shares no keyword with the query can be
missed. Sign codes suit dense vectors (remote embedders) well and the sparse ones of the local
embedder (hashed words) poorly, which is why the keyword matches join.

Vectors record the model that made them. When the configured embedder changes, old vectors are
not thrown away at once: each search re-embeds a bounded batch (``refresh``), so the first turn
after a model change stays quick and the rest follows over the next calls. Only vectors of the
current model are compared; a memory waiting for its new vector is still found by keywords.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence
from operator import itemgetter, mul

from ..errors import LLMError
from ..store.memories import MemoryRepository
from ..vectors import dot, normalize, unpack
from .embedder import Embedder
from .embedding import embed_texts

__all__ = ["MemoryVectors"]

log = logging.getLogger(__name__)

REEMBED_BATCH = 64
RERANK = 256


class MemoryVectors:
    """Embeds texts, re-embeds stale memories, and answers cosine top-k over active memories.

    Holds no index of its own: the codes live in the repository (shared by every manager on the
    store) and the exact vectors are read for the candidates only. Thread-safe.
    """

    def __init__(
        self,
        repo: MemoryRepository,
        embedder: Embedder,
        *,
        reembed_batch: int = REEMBED_BATCH,
        reembed: bool = True,
        rerank: int = RERANK,
    ) -> None:
        self._repo = repo
        self.embedder = embedder
        self._batch = max(1, reembed_batch)
        # False: only memories without any vector get one; vectors of other models stay (for a
        # stand-in embedder that must not undo what the configured one made)
        self._reembed = reembed
        self._rerank = max(1, rerank)
        # (model, store version) when no memory needed a vector: nothing to look for until then
        self._clean: tuple[str, tuple[int, int]] | None = None

    @property
    def model(self) -> str:
        """The model whose vectors count: the embedder's preferred one."""
        return self.embedder.model_name

    def embed(self, texts: list[str]) -> tuple[str, list[list[float]]] | None:
        """``(model, vectors)``, or None when embedding failed (logged; keywords still work)."""
        try:
            return embed_texts(self.embedder, texts)
        except (LLMError, ValueError) as exc:
            log.warning("embedding %d text(s) failed: %s", len(texts), exc)
            return None

    def refresh(self, now: float | None = None) -> int:
        """Give up to one batch of active memories a vector of the current model.

        Memories with no vector at all are done first. When the embedder answers from its
        fallback (remote endpoint down), only memories without any vector take those vectors;
        the others keep theirs until the endpoint is back. Returns how many were stored. Once
        nothing needs a vector, later calls cost one query until the store changes.
        """
        model = self.model
        version = self._repo.version()
        if self._clean == (model, version):
            return 0
        stale = self._repo.needing_embedding(model, self._batch, now)
        if not self._reembed:
            stale = [memory for memory in stale if memory.embedding is None]
        if not stale:
            self._clean = (model, version)
            return 0
        result = self.embed([memory.content for memory in stale])
        if result is None:
            return 0
        used, vectors = result
        stored = 0
        for memory, vector in zip(stale, vectors, strict=True):
            if used != model and memory.embedding is not None:
                continue
            if self._repo.set_embedding(memory.id, vector, used):
                stored += 1
        return stored

    def search(
        self,
        query: str,
        k: int,
        min_score: float | None = None,
        now: float | None = None,
        also: Iterable[int] = (),
    ) -> list[tuple[float, int]]:
        """The ``k`` active memories closest to ``query``: ``(cosine, memory id)``, best first
        (ties: lower id first). Empty when the query cannot be embedded with the current model.

        ``also`` are memories to score exactly whatever their codes say, e.g. the keyword
        matches: with the local embedder (hashed words) they hold most of the best matches.
        """
        if k <= 0 or not query.strip():
            return []
        result = self.embed([query])
        if result is None or not result[1]:
            return []
        used, (vector,) = result
        if used != self.model:
            log.debug("query embedded by %s, memories by %s: no vector scores", used, self.model)
            return []
        return self.nearest(vector, k, min_score, now, also)

    def nearest(
        self,
        vector: Sequence[float],
        k: int,
        min_score: float | None = None,
        now: float | None = None,
        also: Iterable[int] = (),
    ) -> list[tuple[float, int]]:
        """Like :meth:`search`, for a vector of the current model."""
        query = normalize(vector)
        stamp = _now(now)
        candidates = set(self._repo.first_pass(query, self.model, max(self._rerank, k), stamp))
        candidates.update(also)
        floor = -float("inf") if min_score is None else min_score
        score = _scorer(query)
        scored = []
        for memory_id, blob in self._repo.codes.vectors(candidates, self.model, stamp):
            if len(blob) == 4 * len(query):
                value = score(unpack(blob))
                if value >= floor:
                    scored.append((value, memory_id))
        scored.sort(key=lambda pair: (-pair[0], pair[1]))
        return scored[:k]

    def reset(self) -> None:
        """Forget the codes held in memory (they are read from the store again when needed)."""
        self._repo.codes.reset()
        self._clean = None


def _scorer(query: list[float]) -> Callable[[Sequence[float]], float]:
    """The dot product with ``query``, over its non-zero components only: the local embedder's
    vectors are mostly zeros, and skipping them makes exact scores several times cheaper."""
    support = [i for i, x in enumerate(query) if x != 0.0]
    if len(support) > len(query) // 2 or len(support) < 2:
        return lambda vector: dot(query, vector)
    weights = [query[i] for i in support]
    pick = itemgetter(*support)
    return lambda vector: float(sum(map(mul, weights, pick(vector))))


def _now(now: float | None) -> float:
    return time.time() if now is None else now
