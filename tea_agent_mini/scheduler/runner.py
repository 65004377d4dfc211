"""The runner: one asyncio task that sleeps until the next due run, claims it and runs it.

Sleeps are exact (until the soonest ``next_run_at``), cut short when a task changes in this
process or, on PostgreSQL, in another instance (the store's change listener pokes an event),
and capped at ``recheck_seconds`` so that changes made by other processes on one SQLite file
are seen too. Each due run is claimed with the task's lease
first (``TaskRepository.claim_due``: on PostgreSQL with ``FOR UPDATE SKIP LOCKED``), so two
runners sharing the database (processes, or instances on one PostgreSQL) never run the same
occurrence twice, and a task never overlaps itself: occurrences that pass while it runs are
recorded as ``skipped``. A lease outlives the longest run the task may take; when its holder
died, the claim after it ran out closes the run left marked running, and the occurrence is run
once more (its grace window counted from when the lease ran out); a second interrupted run of
it gives it up, never a third.

A run found overdue (the process was down, the machine asleep) runs once if the latest
occurrence lies within the task's grace window, and is recorded as ``missed`` otherwise. After a
run ``next_run_at`` is computed from the schedule again; a schedule with no next time (``once``)
disables its task. The clock is injected: tests pass a fake one and no real minutes pass.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import threading
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import TeaAgentError
from ..store.tasks import CLAIM_BATCH
from .clock import Clock, SystemClock, moment, next_fire
from .cron import ScheduleError
from .errors import TaskBusy, TaskError, TaskNotFound
from .schedules import parse_schedule

if TYPE_CHECKING:
    from ..store import Store
    from ..store.tasks import Task, TaskRun

__all__ = [
    "Clock",
    "RunResult",
    "SchedulerRunner",
    "SystemClock",
    "TaskBusy",
    "TaskError",
    "TaskNotFound",
]

log = logging.getLogger(__name__)

RECHECK_SECONDS = 60.0  # how soon changes made by another process are noticed
HARD_LIMIT_FACTOR = 4  # a busy shell command may run this many times its timeout
HARD_LIMIT_EXTRA = 10.0  # ... and this many seconds more
LEASE_MARGIN = 60.0  # the lease outlives the longest possible run by this much
STOP_GRACE = 5.0
RESULT_STATUSES = ("ok", "failed", "timeout")


@dataclass(frozen=True)
class RunResult:
    """What executing a task produced. ``status``: ok, failed or timeout; ``topic_id``: the
    session a prompt task wrote into (saved on the task for its next runs)."""

    status: str
    output: str = ""
    exit_code: int | None = None
    error: str | None = None
    topic_id: str | None = None


Execute = Callable[["Task"], Awaitable[RunResult]]


def default_owner() -> str:
    """A lease owner id unique to this runner: host, process and a random part."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def _report_crash(main: asyncio.Task) -> None:
    if not main.cancelled() and main.exception() is not None:
        log.error("the scheduler stopped on an unexpected error", exc_info=main.exception())


def _report_failure(run: asyncio.Future) -> None:
    if not run.cancelled() and run.exception() is not None:
        log.warning("a task run started in the background failed: %s", run.exception())


def max_run_seconds(task: Task) -> float:
    """The longest a run of ``task`` may take before the runner gives up on it."""
    return task.timeout * HARD_LIMIT_FACTOR + HARD_LIMIT_EXTRA


class SchedulerRunner:
    """Runs due tasks of ``store`` through ``execute(task) -> RunResult``.

    ``start()``/``stop()`` on a running event loop; ``poke()`` is safe from any thread;
    ``run_now(task_id)`` runs one task at once (also without ``start()``).
    """

    def __init__(
        self,
        store: Store,
        execute: Execute,
        clock: Clock | None = None,
        owner_id: str | None = None,
        *,
        recheck_seconds: float = RECHECK_SECONDS,
    ) -> None:
        self.store = store
        self.execute = execute
        self.clock = clock or SystemClock()
        self.owner_id = owner_id or default_owner()
        self.recheck_seconds = recheck_seconds
        self._runs: dict[int, asyncio.Task[TaskRun | None]] = {}
        self._wake: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self._main: asyncio.Task[None] | None = None
        self._unsubscribe: Callable[[], None] | None = None

    @property
    def loop(self) -> asyncio.AbstractEventLoop | None:
        """The event loop the runner was started on (None before ``start``)."""
        return self._loop

    @property
    def is_running(self) -> bool:
        return self._main is not None and not self._main.done()

    @property
    def active(self) -> frozenset[int]:
        """Ids of the tasks this runner is running right now."""
        return frozenset(self._runs)

    async def wait_idle(self) -> None:
        """Wait until no run of this runner is in progress."""
        while self._runs:
            await asyncio.gather(*self._runs.values(), return_exceptions=True)
            await asyncio.sleep(0)  # let the runs' done callbacks forget them

    # -- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        if self._main is not None:
            return
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._wake = asyncio.Event()
        self._unsubscribe = self.store.tasks.on_change(self.poke)
        self._main = asyncio.create_task(self._serve(), name="tea-agent-scheduler")
        self._main.add_done_callback(_report_crash)
        log.info("scheduler %s started", self.owner_id)

    async def stop(self, grace: float = STOP_GRACE) -> None:
        """Stop sleeping; give running runs ``grace`` seconds, then cancel them (they are
        recorded as failed and run again at the next start if still within their grace)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        main, self._main = self._main, None
        if main is not None:
            main.cancel()
            await asyncio.gather(main, return_exceptions=True)
        runs = list(self._runs.values())
        if runs:
            _, pending = await asyncio.wait(runs, timeout=grace)
            for run in pending:
                run.cancel()
            await asyncio.gather(*runs, return_exceptions=True)
        # a claim whose run was cancelled before it began would block the task until its
        # lease ran out; the next start (or another process) may take these at once
        try:
            await asyncio.to_thread(self.store.tasks.release_all, self.owner_id)
        except TeaAgentError as exc:
            log.warning("scheduler: could not release its leases: %s", exc)
        log.info("scheduler %s stopped", self.owner_id)

    def poke(self) -> None:
        """Wake the runner to look at the tasks again (they changed)."""
        loop, wake = self._loop, self._wake
        if loop is None or wake is None or loop.is_closed():
            return
        if threading.get_ident() == self._loop_thread:
            wake.set()
            return
        try:
            loop.call_soon_threadsafe(wake.set)
        except RuntimeError:  # the loop closed meanwhile: nobody is waiting any more
            pass

    async def _serve(self) -> None:
        assert self._wake is not None
        while True:
            self._wake.clear()  # before tick: a poke during the tick is not lost
            try:
                soonest = await self.tick()
            except TeaAgentError as exc:
                log.warning("scheduler: cannot read the tasks: %s", exc)
                soonest = None
            delay = self.recheck_seconds
            if soonest is not None:
                delay = min(max(soonest - self.clock.now(), 0.0), delay)
            await self._sleep(delay)

    async def _sleep(self, delay: float) -> None:
        assert self._wake is not None
        if self._wake.is_set():
            return
        sleeper = asyncio.ensure_future(self.clock.sleep(delay))
        waiter = asyncio.ensure_future(self._wake.wait())
        try:
            await asyncio.wait({sleeper, waiter}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            sleeper.cancel()
            waiter.cancel()

    # -- one pass ----------------------------------------------------------------------------

    async def tick(self) -> float | None:
        """Claim and start every due task nobody runs; return when the next one is due."""
        now = self.clock.now()
        for task in await asyncio.to_thread(self._claim_due, now):
            self._spawn(task.id, self._run_due(task, now))
        soonest: float | None = None
        for task in await asyncio.to_thread(self.store.tasks.scheduled):
            if task.id in self._runs or task.next_run_at is None:
                continue
            # a lease held elsewhere: look again just after it runs out (claims need "<"); a
            # due task another runner was claiming just then is looked at again at once
            wake = max(task.next_run_at, task.lease_until + 0.001)
            soonest = wake if soonest is None else min(soonest, wake)
        return soonest

    def _claim_due(self, now: float) -> list[Task]:
        """Every due task nobody holds, claimed batch by batch (other runners claim theirs in
        between), each leased for its longest run and the margin."""
        claimed: list[Task] = []
        while True:
            batch = self.store.tasks.claim_due(
                self.owner_id, now, lease_factor=HARD_LIMIT_FACTOR,
                lease_extra=HARD_LIMIT_EXTRA + LEASE_MARGIN, limit=CLAIM_BATCH,
            )  # fmt: skip
            claimed += batch
            if len(batch) < CLAIM_BATCH:
                return claimed

    def _spawn(self, task_id: int, work: Awaitable[TaskRun | None]) -> asyncio.Task:
        run = asyncio.ensure_future(work)
        self._runs[task_id] = run

        def forget(done: asyncio.Future) -> None:
            if self._runs.get(task_id) is done:
                del self._runs[task_id]
            self.poke()

        run.add_done_callback(forget)
        return run

    async def run_now(self, task_id: int) -> TaskRun:
        """Run the task now, whatever its schedule or enabled flag; its schedule is unchanged.

        Raises:
            TaskNotFound: no such task.
            TaskBusy: the task is running already, here or in another process.
        """
        if task_id in self._runs:
            raise TaskBusy(f"task #{task_id} is running already; runs never overlap")
        run = await self._spawn(task_id, self._run_manual(task_id))
        assert run is not None
        return run

    async def start_now(self, task_id: int) -> TaskRun:
        """Start the task now and return its run as soon as it is recorded (status running);
        the run goes on in the background (``active`` lists it) and is recorded when it ends.

        Raises:
            TaskNotFound: no such task.
            TaskBusy: the task is running already, here or in another process.
        """
        if task_id in self._runs:
            raise TaskBusy(f"task #{task_id} is running already; runs never overlap")
        started: asyncio.Future[TaskRun] = asyncio.get_running_loop().create_future()
        work = self._spawn(task_id, self._run_manual(task_id, started))
        await asyncio.wait({started, work}, return_when=asyncio.FIRST_COMPLETED)
        if started.done():
            work.add_done_callback(_report_failure)  # nobody awaits it any more
            return started.result()
        run = work.result()  # it failed before it started: this raises why
        assert run is not None
        return run

    async def _run_manual(
        self, task_id: int, started: asyncio.Future[TaskRun] | None = None
    ) -> TaskRun:
        task = await asyncio.to_thread(self.store.tasks.get, task_id)
        if task is None:
            raise TaskNotFound(f"no task with id {task_id}")
        now = self.clock.now()
        claimed = await asyncio.to_thread(
            self.store.tasks.claim, task.id, self.owner_id, now, self._lease_until(task, now),
            due_only=False,
        )  # fmt: skip
        if claimed is None:
            raise TaskBusy(f"task #{task.id} ({task.name}) is running already; runs never overlap")
        return await self._execute_claimed(
            claimed, scheduled_for=now, reschedule=False, started=started
        )

    async def _run_due(self, claimed: Task, now: float) -> TaskRun | None:
        """Run a task this runner claimed as due (at ``now``)."""
        if claimed.next_run_at is None:  # changed meanwhile: not due after all
            await asyncio.to_thread(self.store.tasks.release, claimed.id, self.owner_id)
            return None
        try:
            schedule = parse_schedule(claimed.schedule, claimed.tz)
        except ScheduleError as exc:
            await asyncio.to_thread(self._give_up, claimed, now, f"invalid schedule: {exc}")
            return None
        due = claimed.next_run_at
        retry = claimed.interrupted
        if retry is not None and retry.firing is not None and retry.firing >= due:
            # a holder died during this occurrence's run (the claim closed that run)
            if retry.given_up:
                log.warning(
                    "task #%s (%s): the run of %s was interrupted %d times; not retried again",
                    claimed.id, claimed.name, moment(retry.firing), retry.attempts,
                )  # fmt: skip
                await asyncio.to_thread(
                    self.store.tasks.release, claimed.id, self.owner_id, reschedule=True,
                    next_run_at=next_fire(schedule, claimed.anchor_at, max(now, retry.firing)),
                )  # fmt: skip
                return None
            # the retry was due when the dead holder's lease ran out: the grace counts from then
            lease_end = (retry.started_at or now) + max_run_seconds(claimed) + LEASE_MARGIN
            if now - lease_end <= claimed.grace_seconds:
                log.info("task #%s (%s): retrying the interrupted run", claimed.id, claimed.name)
                return await self._execute_claimed(
                    claimed, scheduled_for=retry.firing, reschedule=True
                )
        if now - due > claimed.grace_seconds:
            await asyncio.to_thread(self._record_missed, claimed, now)
            # the newest occurrence may still lie within the grace window: run that one
            latest = next_fire(schedule, claimed.anchor_at, now - claimed.grace_seconds - 1e-6)
            if latest is None or latest > now:
                await asyncio.to_thread(
                    self.store.tasks.release, claimed.id, self.owner_id,
                    reschedule=True, next_run_at=next_fire(schedule, claimed.anchor_at, now),
                )  # fmt: skip
                return None
            due = latest
        return await self._execute_claimed(claimed, scheduled_for=due, reschedule=True)

    def _lease_until(self, task: Task, now: float) -> float:
        return now + max_run_seconds(task) + LEASE_MARGIN

    def _record_missed(self, task: Task, now: float) -> None:
        assert task.next_run_at is not None
        late = now - task.next_run_at
        self.store.tasks.record_run(
            task.id, "missed", task.next_run_at, ended_at=now,
            error=f"missed: no scheduler was running when it was due ({late:.0f} s ago, beyond "
            f"the grace window of {task.grace_seconds:g} s)",
        )  # fmt: skip

    def _give_up(self, task: Task, now: float, error: str) -> None:
        self.store.tasks.record_run(task.id, "failed", task.next_run_at, ended_at=now, error=error)
        self.store.tasks.release(task.id, self.owner_id, reschedule=True, next_run_at=None)

    # -- executing ---------------------------------------------------------------------------

    async def _execute_claimed(
        self,
        task: Task,
        *,
        scheduled_for: float,
        reschedule: bool,
        started: asyncio.Future[TaskRun] | None = None,
    ) -> TaskRun:
        """Record the run, execute it, record how it ended; ``started`` gets the run as soon
        as it is recorded."""
        began = self.clock.now()
        log.info("task #%s (%s) started", task.id, task.name)
        run = await asyncio.to_thread(self.store.tasks.start_run, task.id, scheduled_for, began)
        if started is not None and not started.done():
            started.set_result(run)
        try:
            result = await self._execute(task)
        except asyncio.CancelledError:
            # stopped mid-run: record it; the lease goes, next_run_at stays for the next start
            self.store.tasks.finish_run(
                run.id, status="failed", ended_at=self.clock.now(),
                error="cancelled: the scheduler stopped during the run",
            )  # fmt: skip
            self.store.tasks.release(task.id, self.owner_id)
            raise
        ended = self.clock.now()
        return await asyncio.to_thread(
            self._finish, task, run, result, scheduled_for, began, ended, reschedule
        )

    async def _execute(self, task: Task) -> RunResult:
        limit = max_run_seconds(task)
        try:
            result = await asyncio.wait_for(self.execute(task), limit)
        except asyncio.TimeoutError:
            return RunResult("timeout", error=f"timeout: still running after {limit:g} s")
        except Exception as exc:
            # The scheduler's one broad handler, like the tool executor's: whatever a task
            # raises must become a recorded failed run, never stop the runner.
            log.warning("task #%s (%s) failed", task.id, task.name, exc_info=True)
            return RunResult("failed", error=f"{type(exc).__name__}: {exc}")
        if result.status not in RESULT_STATUSES:
            return RunResult("failed", result.output, result.exit_code, result.error)
        return result

    def _finish(
        self,
        task: Task,
        run: TaskRun,
        result: RunResult,
        scheduled_for: float,
        started: float,
        ended: float,
        reschedule: bool,
    ) -> TaskRun:
        tasks = self.store.tasks
        why = f": {result.error}" if result.error and result.status != "ok" else ""
        log.log(
            logging.INFO if result.status == "ok" else logging.WARNING,
            "task #%s (%s): %s after %.1f s%s",
            task.id,
            task.name,
            result.status,
            ended - started,
            why,
        )
        finished = tasks.finish_run(
            run.id, status=result.status, ended_at=ended, exit_code=result.exit_code,
            output=result.output, error=result.error, topic_id=result.topic_id,
        )  # fmt: skip
        next_run_at: float | None = None
        current = tasks.get(task.id)  # it may have been edited or deleted during the run
        if current is None:
            return finished or run
        if reschedule:
            try:
                schedule = parse_schedule(current.schedule, current.tz)
            except ScheduleError:
                schedule = None
            if schedule is not None:
                next_run_at = next_fire(schedule, current.anchor_at, max(ended, scheduled_for))
                # an occurrence that came while the run was going on (not one that passed
                # before a late start: the catch-up run stands for those)
                skipped = next_fire(schedule, current.anchor_at, started)
                if skipped is not None and skipped <= ended:
                    tasks.record_run(
                        task.id, "skipped", skipped, ended_at=ended,
                        error="skipped: the previous run was still running",
                    )  # fmt: skip
        tasks.release(
            task.id, self.owner_id, last_run_at=started, topic_id=result.topic_id,
            reschedule=reschedule, next_run_at=next_run_at,
        )  # fmt: skip
        return finished or run
