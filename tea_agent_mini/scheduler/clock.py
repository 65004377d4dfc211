"""The scheduler's time: the clock it reads and waits on, and a schedule's next fire time.

The clock is injected (:class:`Clock`): the runner and the service use :class:`SystemClock`,
tests a fake one, so no real minutes pass in them.
"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timezone
from typing import Protocol

from .schedules import Schedule


class Clock(Protocol):
    """Where the runner reads the time (epoch seconds) and how it waits."""

    def now(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class SystemClock:
    def now(self) -> float:
        return time.time()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


def moment(stamp: float) -> datetime:
    return datetime.fromtimestamp(stamp, timezone.utc)


def next_fire(schedule: Schedule, anchor_at: float, after: float) -> float | None:
    """The schedule's next fire time strictly after ``after``, as epoch seconds; intervals
    count from ``anchor_at``."""
    when = schedule.next_after(moment(after), moment(anchor_at))
    return when.timestamp() if when is not None else None
