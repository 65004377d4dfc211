"""Priority decay and expiry: memories nobody restates slowly lose their pull on the prompt.

Ages count from ``updated_at`` (creation, or the last time the memory was restated or edited):
CRITICAL becomes HIGH after 30 days, HIGH becomes MEDIUM after 60, MEDIUM becomes LOW after 90.
Decay does not touch ``updated_at``, so a CRITICAL memory left alone for 100 days ends up LOW in
one run as surely as in three. Pinned memories never decay. Expired memories are soft-deleted.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from ..store.memories import MemoryRepository
from .model import Priority

__all__ = ["DECAY_AFTER_DAYS", "DecayReport", "decay_memories", "decayed_priority"]

log = logging.getLogger(__name__)

DAY = 86400.0
DECAY_AFTER_DAYS: dict[Priority, float] = {
    Priority.CRITICAL: 30.0,
    Priority.HIGH: 60.0,
    Priority.MEDIUM: 90.0,
}


@dataclass
class DecayReport:
    demoted: list[tuple[int, Priority, Priority]] = field(default_factory=list)  # id, old, new
    expired: list[int] = field(default_factory=list)


def decayed_priority(priority: int, age_seconds: float) -> Priority:
    """The priority a memory of this age should have (never stronger than it has)."""
    current = Priority(priority)
    days = age_seconds / DAY
    while current in DECAY_AFTER_DAYS and days > DECAY_AFTER_DAYS[current]:
        current = current.weaker()
    return current


def decay_memories(repo: MemoryRepository, now: float) -> DecayReport:
    """Demote aged memories and soft-delete expired ones; idempotent for a given ``now``."""
    report = DecayReport()
    for memory in repo.matching(limit=None, include_inactive=True, now=now):
        if memory.deleted_at is not None:
            continue
        if memory.expires_at is not None and memory.expires_at <= now:
            report.expired.append(memory.id)
            continue
        if memory.pinned:
            continue
        new = decayed_priority(memory.priority, now - (memory.updated_at or memory.created_at))
        if new != memory.priority:
            repo.update(memory.id, priority=new, bump=False)
            report.demoted.append((memory.id, Priority(memory.priority), new))
    if report.expired:
        repo.soft_delete(report.expired, now=now)
    if report.demoted or report.expired:
        log.info("memory decay: %d demoted, %d expired", len(report.demoted), len(report.expired))
    return report
