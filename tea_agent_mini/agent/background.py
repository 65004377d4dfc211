"""The one background worker: follow-up jobs of finished turns, run one at a time, never in a turn.

    runtime.background.submit("title", lambda: make_title(...))   # returns at once
    await runtime.background.drain()                             # tests, and at shutdown

A job is an async callable. The worker runs jobs in submission order, each under a time cap; a
job that fails or overruns is logged and dropped, never raised into a turn. The worker task and
its queue are created lazily on the running event loop, and again on a new loop (a runtime used
by successive ``asyncio.run`` calls): jobs left on a loop that has gone are lost and logged.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["BackgroundWorker", "JobStats"]

log = logging.getLogger(__name__)

Job = Callable[[], Awaitable[Any]]

DEFAULT_TIME_CAP = 120.0
MAX_QUEUED = 200


@dataclass
class JobStats:
    """Counts since the worker was made (for tests, logs and the doctor)."""

    submitted: int = 0
    done: int = 0
    failed: int = 0
    timed_out: int = 0
    dropped: int = 0


@dataclass(frozen=True)
class _Entry:
    name: str
    job: Job
    time_cap: float


class BackgroundWorker:
    """One asyncio task draining one queue of jobs.

    ``time_cap`` bounds every job (a job may ask for less, never more). Submit from the event
    loop's thread (a turn, a route handler); use :meth:`drain` to wait for the queue to empty.
    """

    def __init__(self, time_cap: float = DEFAULT_TIME_CAP, max_queued: int = MAX_QUEUED) -> None:
        self.time_cap = time_cap
        self.max_queued = max_queued
        self.stats = JobStats()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[_Entry] | None = None
        self._task: asyncio.Task[None] | None = None
        self.running: str | None = None  # the name of the job in progress

    def submit(self, name: str, job: Job, *, time_cap: float | None = None) -> bool:
        """Queue ``job``; False (and a log line) when the queue is full.

        Raises:
            RuntimeError: called without a running event loop.
        """
        queue = self._ensure_started()
        cap = self.time_cap if time_cap is None else min(time_cap, self.time_cap)
        if queue.qsize() >= self.max_queued:
            self.stats.dropped += 1
            log.warning("background queue full; dropping job %s", name)
            return False
        queue.put_nowait(_Entry(name, job, cap))
        self.stats.submitted += 1
        return True

    @property
    def pending(self) -> int:
        """Jobs queued or running."""
        if self._queue is None:
            return 0
        return self._queue.qsize() + (1 if self.running else 0)

    async def drain(self, timeout: float | None = None) -> bool:
        """Wait until every queued job has finished; False if ``timeout`` passed first.

        Jobs submitted on another (still running) event loop are not waited for.
        """
        if self._queue is None or self._loop is not asyncio.get_running_loop():
            return True
        try:
            await asyncio.wait_for(self._queue.join(), timeout)
        except asyncio.TimeoutError:
            return False
        return True

    async def aclose(self, timeout: float | None = None) -> None:
        """Drain (up to ``timeout``), then stop the worker task; jobs still queued are dropped."""
        drained = await self.drain(timeout)
        if not drained:
            log.warning("background jobs still pending at shutdown were dropped")
        task, loop = self._task, self._loop
        self._task = self._queue = self._loop = None
        # a task of a loop that has gone was cancelled when that loop shut down
        if task is None or task.done() or loop is not asyncio.get_running_loop():
            return
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    # -- internals -----------------------------------------------------------------------------

    def _ensure_started(self) -> asyncio.Queue[_Entry]:
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._task is None or self._task.done():
            if self._queue is not None and self._queue.qsize() and self._loop is not loop:
                log.warning("%d background job(s) were lost with their event loop", self.pending)
            self._loop = loop
            self._queue = asyncio.Queue()
            self._task = loop.create_task(self._run(self._queue), name="tea-agent-background")
        assert self._queue is not None
        return self._queue

    async def _run(self, queue: asyncio.Queue[_Entry]) -> None:
        while True:
            entry = await queue.get()
            self.running = entry.name
            try:
                await asyncio.wait_for(entry.job(), entry.time_cap)
                self.stats.done += 1
            except asyncio.TimeoutError:
                self.stats.timed_out += 1
                log.warning("background job %s ran over %.0fs; stopped", entry.name, entry.time_cap)
            except asyncio.CancelledError:
                raise
            except Exception:  # the one place a job's failure is caught: it must not spread
                self.stats.failed += 1
                log.warning("background job %s failed", entry.name, exc_info=True)
            finally:
                self.running = None
                queue.task_done()
