"""The one background worker: follow-up jobs of finished turns, run one at a time, never in a turn.

    runtime.background.enqueue([JobSpec("title", {...}, topic_id)])   # durable; returns at once
    runtime.background.submit("warm", lambda: warm_caches())          # in memory only
    await runtime.background.resume()                                 # at start
    await runtime.background.drain()                                  # tests, and at shutdown

A durable job is a row in the store (``store/jobs.py``) written, in a worker thread, as soon as
it is queued; the worker rebuilds what to run from the row's kind and payload through
``kinds`` (a registry of :class:`JobKind`, never a stored callable), marks it running, then done.
A job that fails or overruns is logged, never raised into a turn, and its row waits for the
next start; after ``max_attempts`` it is marked failed with its error. At start, :meth:`resume`
takes over the rows that processes which are gone left pending or running (a crash, a kill -9,
a stop before the queue drained), so no title, summary, memory or evaluation is lost.

The worker runs jobs in order, each under a time cap. Its task and queue are created lazily on
the running event loop, and again on a new loop (a runtime used by successive ``asyncio.run``
calls): in-memory jobs left on a loop that has gone are lost and logged; durable ones stay in
the store for the next start.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import StoreError

if TYPE_CHECKING:
    from ..store.jobs import JobRepository, JobSpec

__all__ = ["BackgroundWorker", "JobKind", "JobStats", "process_gone", "process_mark"]

log = logging.getLogger(__name__)

Job = Callable[[], Awaitable[Any]]

DEFAULT_TIME_CAP = 120.0
MAX_QUEUED = 200
MAX_ATTEMPTS = 3
# Where a process cannot be told alive (no /proc), its rows are taken over once untouched this long.
STALE_SECONDS = 900.0


@dataclass(frozen=True)
class JobKind:
    """How to run a durable job of one kind: ``run(payload)`` and its time cap."""

    run: Callable[[dict[str, Any]], Awaitable[Any]]
    time_cap: float = DEFAULT_TIME_CAP


@dataclass
class JobStats:
    """Counts since the worker was made (for tests, logs and the doctor)."""

    submitted: int = 0
    done: int = 0
    failed: int = 0
    timed_out: int = 0
    dropped: int = 0
    resumed: int = 0


@dataclass(frozen=True)
class _Run:
    name: str
    job: Job
    time_cap: float
    row: int | None = None  # the job's row in the store, for durable jobs


class _Item:
    """A queue entry: runs ready now, or runs a worker thread is still writing to the store."""

    def __init__(
        self, runs: list[_Run] | None = None, later: asyncio.Future[list[_Run]] | None = None
    ) -> None:
        self._runs = runs or []
        self._later = later

    async def runs(self) -> list[_Run]:
        return self._runs if self._later is None else await self._later


class BackgroundWorker:
    """One asyncio task draining one queue of jobs.

    ``time_cap`` bounds every job (a job may ask for less, never more). ``jobs`` (the store's
    job rows) and ``kinds`` make :meth:`enqueue` durable; without ``jobs`` enqueued jobs live in
    memory only. Submit from the event loop's thread (a turn, a route handler); use :meth:`drain`
    to wait for the queue to empty.
    """

    def __init__(
        self,
        time_cap: float = DEFAULT_TIME_CAP,
        max_queued: int = MAX_QUEUED,
        *,
        jobs: JobRepository | None = None,
        kinds: Mapping[str, JobKind] | None = None,
        max_attempts: int = MAX_ATTEMPTS,
    ) -> None:
        self.time_cap = time_cap
        self.max_queued = max_queued
        self.jobs = jobs
        self.kinds = dict(kinds or {})
        self.max_attempts = max_attempts
        self.owner = process_mark()
        self.stats = JobStats()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[_Item] | None = None
        self._task: asyncio.Task[None] | None = None
        self._resumed = False
        self.running: str | None = None  # the name of the job in progress

    def submit(self, name: str, job: Job, *, time_cap: float | None = None) -> bool:
        """Queue ``job`` in memory only; False (and a log line) when the queue is full.

        Raises:
            RuntimeError: called without a running event loop.
        """
        queue = self._ensure_started()
        if queue.qsize() >= self.max_queued:
            self.stats.dropped += 1
            log.warning("background queue full; dropping job %s", name)
            return False
        queue.put_nowait(_Item([_Run(name, job, self._cap(time_cap))]))
        self.stats.submitted += 1
        return True

    def enqueue(self, specs: Sequence[JobSpec]) -> bool:
        """Queue durable jobs, in order; their rows are written in a worker thread at once, so a
        crash after this call loses none of them. The first call also resumes what earlier
        processes left (see :meth:`resume`). False when the queue is full: the rows are still
        written and run at the next start.

        Raises:
            RuntimeError: called without a running event loop.
        """
        queue = self._ensure_started()
        self._resume_once(queue)
        loop = asyncio.get_running_loop()
        later = loop.run_in_executor(None, self._persist, list(specs))
        self.stats.submitted += len(specs)
        if queue.qsize() >= self.max_queued:
            self.stats.dropped += len(specs)
            log.warning("background queue full; %d job(s) wait for the next start", len(specs))
            return False
        queue.put_nowait(_Item(later=later))
        return True

    async def resume(self) -> int:
        """Take over and queue the jobs that processes which are gone left unfinished (once per
        worker; later calls return 0). Returns how many were queued."""
        if self._resumed or self.jobs is None:
            return 0
        later = self._resume_once(self._ensure_started())
        return len(await asyncio.shield(later)) if later is not None else 0

    @property
    def pending(self) -> int:
        """Jobs (or batches of a turn's jobs) queued or running."""
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
        """Drain (up to ``timeout``), then stop the worker task; jobs still queued are dropped
        (durable ones run at the next start)."""
        drained = await self.drain(timeout)
        if not drained:
            later = " (durable ones will run at the next start)" if self.jobs is not None else ""
            log.warning("background jobs still pending at shutdown were dropped%s", later)
        task, loop = self._task, self._loop
        self._task = self._queue = self._loop = None
        # a task of a loop that has gone was cancelled when that loop shut down
        if task is None or task.done() or loop is not asyncio.get_running_loop():
            return
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    # -- internals -----------------------------------------------------------------------------

    def _cap(self, time_cap: float | None) -> float:
        return self.time_cap if time_cap is None else min(time_cap, self.time_cap)

    def _ensure_started(self) -> asyncio.Queue[_Item]:
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._task is None or self._task.done():
            if self._queue is not None and self._queue.qsize() and self._loop is not loop:
                log.warning("%d background job(s) were lost with their event loop", self.pending)
            self._loop = loop
            self._queue = asyncio.Queue()
            self._task = loop.create_task(self._run(self._queue), name="tea-agent-background")
        assert self._queue is not None
        return self._queue

    def _resume_once(self, queue: asyncio.Queue[_Item]) -> asyncio.Future[list[_Run]] | None:
        if self._resumed or self.jobs is None:
            return None
        self._resumed = True
        later = asyncio.get_running_loop().run_in_executor(None, self._take_over)
        queue.put_nowait(_Item(later=later))
        return later

    def _run_of(self, kind_name: str, payload: dict[str, Any], row: int | None) -> _Run | None:
        kind = self.kinds.get(kind_name)
        if kind is None:
            return None
        return _Run(kind_name, lambda: kind.run(payload), self._cap(kind.time_cap), row)

    def _persist(self, specs: list[JobSpec]) -> list[_Run]:
        """In a worker thread: the rows of ``specs``, then what to run for each."""
        rows: list[int | None] = [None] * len(specs)
        if self.jobs is not None:
            try:
                rows = list(self.jobs.add_many(specs, self.owner))
            except StoreError as exc:  # run them anyway; only their durability is lost
                log.warning("background jobs not stored (%s); running them in memory", exc)
        runs: list[_Run] = []
        for spec, row in zip(specs, rows, strict=True):
            run = self._run_of(spec.kind, spec.payload, row)
            if run is not None:
                runs.append(run)
                continue
            log.warning("no background job kind %r; skipped", spec.kind)
            if row is not None and self.jobs is not None:
                self._record(self.jobs.fail, row, f"unknown job kind {spec.kind!r}", 0)
        return runs

    def _take_over(self) -> list[_Run]:
        """In a worker thread: the rows of processes that are gone, as runs of this worker."""
        assert self.jobs is not None
        try:
            rows = self.jobs.take_over(self.owner, process_gone, self.max_attempts)
        except StoreError as exc:
            log.warning("could not resume background jobs: %s", exc)
            return []
        runs: list[_Run] = []
        for row in rows:
            run = self._run_of(row.kind, row.payload, row.id)
            if run is None:
                self._record(self.jobs.fail, row.id, f"unknown job kind {row.kind!r}", 0)
            else:
                runs.append(run)
        if runs:
            log.info("resuming %d background job(s) left by an earlier process", len(runs))
        self.stats.resumed += len(runs)
        return runs

    async def _run(self, queue: asyncio.Queue[_Item]) -> None:
        while True:
            item = await queue.get()
            try:
                for run in await item.runs():
                    await self._execute(run)
            except asyncio.CancelledError:
                raise
            except Exception:  # writing the rows failed unexpectedly: the jobs are lost
                log.warning("background jobs could not be queued", exc_info=True)
            finally:
                queue.task_done()

    async def _execute(self, run: _Run) -> None:
        self.running = run.name
        try:
            await self._write(run, "start")
            try:
                await asyncio.wait_for(run.job(), run.time_cap)
            except asyncio.TimeoutError:
                self.stats.timed_out += 1
                log.warning("background job %s ran over %.0fs; stopped", run.name, run.time_cap)
                await self._write(run, "fail", f"ran over its time cap of {run.time_cap:.0f}s")
            except asyncio.CancelledError:
                raise  # its row stays running: the next start takes it over
            except Exception as exc:  # the one place a job's failure is caught
                self.stats.failed += 1
                log.warning("background job %s failed", run.name, exc_info=True)
                await self._write(run, "fail", f"{type(exc).__name__}: {exc}")
            else:
                self.stats.done += 1
                await self._write(run, "finish")
        finally:
            self.running = None

    async def _write(self, run: _Run, step: str, error: str | None = None) -> None:
        """Record a durable job's progress: ``start``, ``finish`` or ``fail``."""
        if run.row is None or self.jobs is None:
            return
        write = getattr(self.jobs, step)
        args = (run.row,) if error is None else (run.row, error, self.max_attempts)
        await asyncio.to_thread(self._record, write, *args)

    @staticmethod
    def _record(write: Callable[..., Any], *args: Any) -> None:
        """A bookkeeping write; a store error is logged (the job itself is not affected)."""
        try:
            write(*args)
        except StoreError as exc:
            log.warning("background job bookkeeping failed: %s", exc)


def process_mark() -> str:
    """Who this process is, in a form that outlives it: ``pid:start:boot`` where /proc tells
    a process's start time, else ``pid``."""
    from ..shell import proctree

    pid = os.getpid()
    stat = proctree.read_stat(pid)
    if stat is None:
        return str(pid)
    return f"{pid}:{stat.start}:{proctree.boot_id()[:8]}"


def process_gone(mark: str, updated_at: float, now: float | None = None) -> bool:
    """Whether the process ``mark`` names has ended. Where that cannot be told (no /proc, an
    older row), a row untouched for ``STALE_SECONDS`` counts as left behind."""
    from ..shell import proctree

    parts = mark.split(":")
    if len(parts) == 3 and all(part.isdigit() for part in parts[:2]) and proctree.has_proc():
        if parts[2] != proctree.boot_id()[:8]:
            return True
        stat = proctree.read_stat(int(parts[0]))
        return stat is None or stat.start != int(parts[1]) or stat.state == "Z"
    return (now if now is not None else time.time()) - updated_at > STALE_SECONDS
