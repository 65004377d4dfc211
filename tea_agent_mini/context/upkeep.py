"""What happens after a turn, on the background worker: title, L2 record, L2→L3 summary, memory.

    upkeep = TurnUpkeep(store, cheap_llm, memory)
    worker.enqueue(upkeep.follow_ups(topic_id, user_text, done))   # rows in store/jobs.py
    await upkeep.run("title", payload)                              # what the worker runs

Each job reads and writes the store in worker threads and calls the cheap model with a time cap
of its own (``TIME_CAPS``); none of them can fail a turn (the worker logs what they raise). A
job is its kind and a JSON payload, so the worker can run it again after a restart.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..store.jobs import JobSpec
from .pairs import record_pairs
from .records import ContextRecords
from .summary import SUMMARY_TIMEOUT, summarise_if_due
from .title import generate_title

if TYPE_CHECKING:
    from ..memory.manager import MemoryManager
    from ..store import Store
    from ..types import ChatModel, Done

__all__ = ["TIME_CAPS", "TurnUpkeep"]

log = logging.getLogger(__name__)

TITLE_TIMEOUT = 30.0
EXTRACT_TIMEOUT = 60.0
MAINTAIN_TIMEOUT = 120.0
# the time cap of each kind of job, in the order a turn queues them
TIME_CAPS: dict[str, float] = {
    "title": TITLE_TIMEOUT,
    "history": SUMMARY_TIMEOUT + 10,
    "memory": EXTRACT_TIMEOUT,
    "memory upkeep": MAINTAIN_TIMEOUT,
}
DECAY_EVERY = 3600.0  # demote aged memories at most once an hour
REFLECT_EVERY = 86400.0  # model-driven priority adjustment and reflection once a day
UPKEEP_SCOPE = "runtime"
PAYLOAD_CHARS = 20_000  # of the user's text and the answer kept in a job's row
# Turns that ended without a real answer teach nothing worth remembering.
_NO_ANSWER = frozenset({"loop", "max_iterations"})


@dataclass
class TurnUpkeep:
    """The follow-up jobs of finished turns; ``cheap_llm`` None means first-words titles and no
    summaries (raw pairs are still recorded), ``memory`` None means no extraction."""

    store: Store
    cheap_llm: ChatModel | None = None
    memory: MemoryManager | None = None
    clock: Callable[[], float] = time.time
    summary_timeout: float = SUMMARY_TIMEOUT
    records: ContextRecords = field(init=False)

    def __post_init__(self) -> None:
        self.records = ContextRecords(self.store.db)

    def follow_ups(self, topic_id: str, user_text: str, done: Done) -> list[JobSpec]:
        """The jobs of a finished turn, in the order they should run."""
        turn = {
            "topic_id": topic_id,
            "user_text": user_text[:PAYLOAD_CHARS],
            "answer_text": done.text[:PAYLOAD_CHARS],
        }
        specs = [
            JobSpec("title", turn, topic_id),
            JobSpec("history", {"topic_id": topic_id}, topic_id),
        ]
        if self.memory is not None and done.finish_reason not in _NO_ANSWER:
            specs.append(JobSpec("memory", turn, topic_id))
        if self.memory is not None:
            specs.append(JobSpec("memory upkeep"))
        return specs

    async def run(self, kind: str, payload: dict[str, Any]) -> Any:
        """Run the job ``kind`` (a key of ``TIME_CAPS``) on its payload.

        Raises:
            KeyError: an unknown kind, or a payload without what the kind needs.
        """
        if kind == "title":
            return await self.title(
                payload["topic_id"], payload["user_text"], payload["answer_text"]
            )
        if kind == "history":
            return await self.history(payload["topic_id"])
        if kind == "memory":
            return await self.extract(
                payload["topic_id"], payload["user_text"], payload["answer_text"]
            )
        if kind == "memory upkeep":
            return await self.maintain_memory()
        raise KeyError(f"no upkeep job {kind!r}")

    async def title(self, topic_id: str, user_text: str, answer_text: str) -> str | None:
        """Give an untitled topic a title; None when it already had one."""
        topic = await asyncio.to_thread(self.store.topics.get, topic_id)
        if topic is None or topic.title:
            return None
        title = await generate_title(self.cheap_llm, user_text, answer_text)
        # the user may have named the topic while the model was thinking
        topic = await asyncio.to_thread(self.store.topics.get, topic_id)
        if topic is None or topic.title:
            return None
        await asyncio.to_thread(self.store.topics.rename, topic_id, title)
        return title

    async def history(self, topic_id: str) -> bool:
        """Record the new L2 pairs, then summarise the ring into L3 when it is full."""
        await asyncio.to_thread(record_pairs, self.store, self.records, topic_id, self.clock())
        if self.cheap_llm is None:
            return False
        return await summarise_if_due(
            self.records, self.cheap_llm, topic_id, self.clock, timeout=self.summary_timeout
        )

    async def extract(self, topic_id: str, user_text: str, answer_text: str) -> int:
        """Long-term memories from the turn (see ``MemoryManager.extract_from_turn``)."""
        if self.memory is None or not user_text.strip():
            return 0
        outcomes = await self.memory.extract_from_turn(user_text, answer_text, topic_id)
        return len(outcomes)

    async def maintain_memory(self) -> list[str]:
        """Decay memories when an hour has passed since the last time, and let the cheap model
        adjust priorities and reflect once a day. Returns what ran."""
        if self.memory is None:
            return []
        ran: list[str] = []
        if await self._due("memory_decay_at", DECAY_EVERY):
            await asyncio.to_thread(self.memory.decay, self.clock())
            ran.append("decay")
        if self.cheap_llm is not None and await self._due("memory_reflect_at", REFLECT_EVERY):
            await self.memory.adjust_priorities()
            await self.memory.reflect()
            ran.append("reflect")
        return ran

    async def _due(self, key: str, every: float) -> bool:
        """True (and the time recorded first, so a failing job is not retried every turn) when
        ``every`` seconds have passed since ``key`` was last recorded."""
        now = self.clock()
        last = await asyncio.to_thread(self.store.state.get, UPKEEP_SCOPE, key, 0.0)
        if now - float(last or 0.0) < every:
            return False
        await asyncio.to_thread(self.store.state.put, UPKEEP_SCOPE, key, now)
        return True
