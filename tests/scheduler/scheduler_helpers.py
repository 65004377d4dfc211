"""Test doubles for the scheduler: a fake clock whose sleeps pass no real time, and a
recording ``execute`` that can be held mid-run."""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timezone

from tea_agent_mini.scheduler.runner import RunResult, SchedulerRunner

# Monday 2026-01-05 08:00 UTC: every test clock starts here unless it says otherwise
T0 = datetime(2026, 1, 5, 8, 0, tzinfo=timezone.utc).timestamp()
HOUR = 3600.0


def utc(text: str) -> float:
    """Epoch seconds for ``2026-01-05 09:00``-style UTC text."""
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc).timestamp()


class FakeClock:
    """``now()`` is a number the test moves; ``sleep(s)`` advances it by ``s`` at once, but never
    past ``limit``: a sleep that would cross it parks until the test raises the limit.

    Set ``runner`` and a sleep begun while it has runs in progress waits for them and returns
    without moving the clock (as a real sleep is cut short by the finishing run's wake-up), so
    runs take no fake time and the clock never races ahead of a run still starting."""

    def __init__(self, start: float = T0, limit: float | None = None) -> None:
        self.t = start
        self.limit = start if limit is None else limit
        self.sleeps: list[float] = []
        self.parked = 0
        self.runner: SchedulerRunner | None = None
        self._raised = asyncio.Event()

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        if self.runner is not None and self.runner.active:
            # a finishing run wakes the runner anyway; it then decides how long to sleep
            await self.runner.wait_idle()
            return
        target = self.t + seconds
        while target > self.limit:
            self.t = max(self.t, self.limit)
            self._raised.clear()
            self.parked += 1
            try:
                await self._raised.wait()
            finally:
                self.parked -= 1
        self.t = target
        await asyncio.sleep(0)

    def raise_limit(self, limit: float) -> None:
        self.limit = limit
        self._raised.set()


async def settle(clock: FakeClock, runner: SchedulerRunner, limit: float) -> None:
    """Let a started runner work through fake time up to ``limit`` and come to rest there:
    parked in a sleep, no run in progress."""
    clock.raise_limit(limit)
    deadline = time.monotonic() + 10
    calm = 0
    while calm < 3:
        assert time.monotonic() < deadline, "the runner did not come to rest"
        await asyncio.sleep(0.002)
        calm = calm + 1 if clock.parked and not runner.active else 0


class Recorder:
    """An ``execute`` that records each task it is given and returns ``result``. With ``hold``
    set, every run waits until the test calls ``release()``."""

    def __init__(self, result: RunResult | None = None, hold: bool = False) -> None:
        self.calls: list[tuple[int, float]] = []
        self.result = result or RunResult("ok", "done", exit_code=0)
        self.clock: FakeClock | None = None
        self.started = asyncio.Event()
        self._gate = asyncio.Event()
        if not hold:
            self._gate.set()

    def release(self) -> None:
        self._gate.set()

    async def __call__(self, task) -> RunResult:
        self.calls.append((task.id, self.clock.now() if self.clock else 0.0))
        self.started.set()
        await self._gate.wait()
        return self.result
