"""Memory vectors: an in-memory index kept in step with the store, and lazy re-embedding.

Vectors record the model that made them. When the configured embedder changes, old vectors are
not thrown away at once: each search re-embeds a bounded batch (``refresh``), so the first turn
after a model change stays quick and the rest follows over the next calls. Only vectors of the
current model are compared; a memory waiting for its new vector is still found by keywords.
"""

from __future__ import annotations

import logging
import threading

from ..errors import LLMError
from ..store.memories import Memory, MemoryRepository
from ..vectors import VectorIndex, unpack
from .embedder import Embedder
from .embedding import embed_texts

__all__ = ["MemoryVectors"]

log = logging.getLogger(__name__)

REEMBED_BATCH = 64


class MemoryVectors:
    """Embeds texts, re-embeds stale memories, and answers cosine top-k over active memories.

    The index survives between calls and is updated incrementally (a memory's vector is re-read
    only when its content hash changed), which keeps per-turn selection cheap. Thread-safe.
    """

    def __init__(
        self,
        repo: MemoryRepository,
        embedder: Embedder,
        *,
        reembed_batch: int = REEMBED_BATCH,
        reembed: bool = True,
    ) -> None:
        self._repo = repo
        self.embedder = embedder
        self._batch = max(1, reembed_batch)
        # False: only memories without any vector get one; vectors of other models stay (for a
        # stand-in embedder that must not undo what the configured one made)
        self._reembed = reembed
        self._lock = threading.Lock()
        self._index: VectorIndex | None = None
        self._index_model = ""
        self._known: dict[int, str] = {}  # memory id -> content hash of the indexed vector
        self._synced: list[Memory] | None = None  # the list the index was last synced with

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

    def refresh(self, now: float | None = None, memories: list[Memory] | None = None) -> int:
        """Give up to one batch of active memories a vector of the current model.

        ``memories``, when given, must be every active memory (``MemoryRepository.active``);
        the stale ones are then found without a query. Memories with no vector at all are done
        first. When the embedder answers from its fallback (remote endpoint down), only
        memories without any vector take those vectors; the others keep theirs until the
        endpoint is back. Returns how many were stored.
        """
        model = self.model
        if memories is None:
            stale = self._repo.needing_embedding(model, self._batch, now)
        else:
            stale = [m for m in memories if m.embedding is None or m.embedding_model != model]
            stale.sort(key=lambda m: (m.embedding is not None, m.id))
            del stale[self._batch :]
        if not self._reembed:
            stale = [memory for memory in stale if memory.embedding is None]
        if not stale:
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
        self, query: str, memories: list[Memory], k: int, min_score: float | None = None
    ) -> list[tuple[float, int]]:
        """The ``k`` memories closest to ``query``: ``(cosine, memory id)``, best first.

        ``memories`` must be every active memory (the index drops those not in it); passing
        the very list of the previous call (``MemoryRepository.active`` returns the same
        list while nothing changed) skips the sync. Empty when the query cannot be embedded
        with the current model.
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
        with self._lock:
            index = self._sync(memories, used)
            if index is None or index.dim != len(vector):
                return []
            return [(score, int(key)) for score, key in index.search(vector, k, min_score)]

    def reset(self) -> None:
        """Drop the in-memory index (it is rebuilt from the store on the next search)."""
        with self._lock:
            self._index, self._index_model, self._known = None, "", {}
            self._synced = None

    def _sync(self, memories: list[Memory], model: str) -> VectorIndex | None:
        if self._index_model != model:
            self._index, self._index_model, self._known = None, model, {}
            self._synced = None
        if memories is self._synced:
            return self._index
        present: set[int] = set()
        for memory in memories:
            if memory.embedding is None or memory.embedding_model != model:
                continue
            if self._index is None:
                self._index = VectorIndex(memory.embedding_dim or len(memory.embedding) // 4)
            if memory.embedding_dim != self._index.dim:
                continue
            present.add(memory.id)
            if self._known.get(memory.id) != memory.content_hash:
                self._index.add(memory.id, unpack(memory.embedding))
                self._known[memory.id] = memory.content_hash
        for gone in set(self._known) - present:
            del self._known[gone]
            if self._index is not None:
                self._index.remove(gone)
        self._synced = memories
        return self._index
