"""``TaskService``: creating, changing and running tasks, with validation, for every front end.

The tool, the CLI and the REST routes all go through it, so a task is checked the same way
whoever makes it: the schedule parses and fires again after now (else :class:`ScheduleError`
with the parser's message), a shell command passes the deny-list, a prompt task has a prompt,
names are unique. Also here: :func:`start_scheduler` (the server calls it at start-up) and
:func:`run_headless` (``tea-agent-mini scheduler``).
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import StoreError, ToolError
from .clock import Clock, SystemClock, moment, next_fire
from .cron import ScheduleError
from .errors import TaskError, TaskNotFound
from .runner import SchedulerRunner
from .schedules import Schedule, parse_schedule

if TYPE_CHECKING:
    from ..config import Config
    from ..runtime import Runtime
    from ..store import Store
    from ..store.tasks import Task, TaskRun

__all__ = [
    "Preview",
    "TaskHost",
    "TaskService",
    "preview_schedule",
    "run_headless",
    "start_scheduler",
    "stop_scheduler",
]

log = logging.getLogger(__name__)

DEFAULT_GRACE = 600.0
DEFAULT_TIMEOUT = 300.0
MAX_TIMEOUT = 6 * 3600.0
MAX_GRACE = 7 * 86400.0
MAX_NAME = 80
MAX_PREVIEW = 50
KIND_ALIASES = {"command": "shell"}  # what the web UI calls a shell task
_UPDATABLE = frozenset(
    {"name", "schedule", "tz", "kind", "command", "prompt", "grace_seconds", "timeout", "notify"}
)


@dataclass(frozen=True)
class Preview:
    """A schedule tried out without saving: its description and next fire times."""

    schedule: Schedule
    times: list[datetime]


class TaskHost(Protocol):
    """What :class:`TaskService` needs of a runtime (``runtime.Runtime``, or a tool's
    ``ToolContext.runtime``): its config, to run a task on a runtime of its own, and its
    scheduler, when one was started (anything else counts as none)."""

    @property
    def config(self) -> Config: ...

    @property
    def scheduler(self) -> object: ...


class TaskService:
    """Task CRUD on ``store``; ``runtime`` is needed only to run tasks (``run_now``). When the
    runtime has a started scheduler (``runtime.scheduler``), runs go through it."""

    def __init__(
        self, store: Store, *, runtime: TaskHost | None = None, clock: Clock | None = None
    ) -> None:
        self.store = store
        self.runtime = runtime
        self.clock = clock or SystemClock()

    # -- reading -----------------------------------------------------------------------------

    def get(self, ref: int | str) -> Task:
        """The task with id ``ref`` (an int or digits) or, failing that, named ``ref``.

        Raises:
            TaskNotFound: no such task.
        """
        text = str(ref).strip().lstrip("#")
        task = self.store.tasks.get(int(text)) if text.isdecimal() else None
        if task is None:
            task = self.store.tasks.find(text)
        if task is None:
            raise TaskNotFound(f"no task with id or name {str(ref)!r} (list shows the tasks)")
        return task

    def matching(self, query: str | None = None) -> list[Task]:
        return self.store.tasks.matching(query=query)

    def history(
        self, ref: int | str, limit: int = 10, before_id: int | None = None
    ) -> list[TaskRun]:
        """The task's runs, newest first; ``before_id`` pages on to older ones."""
        task_id = self.get(ref).id
        return self.store.tasks.runs(task_id, max(1, min(int(limit), 201)), before_id)

    def preview(self, schedule: str, tz: str | None = None, count: int = 5) -> Preview:
        """See :func:`preview_schedule`."""
        return preview_schedule(schedule, tz, count, self.clock)

    # -- changing ----------------------------------------------------------------------------

    def add(
        self,
        name: str,
        schedule: str,
        *,
        kind: str | None = None,
        command: str | None = None,
        prompt: str | None = None,
        tz: str | None = None,
        enabled: bool = True,
        grace_seconds: float | None = None,
        timeout: float | None = None,
        notify: bool = False,
    ) -> Task:
        """Create a task; ``kind`` defaults from whether a command or a prompt is given.

        Raises:
            ScheduleError: the schedule is malformed or never fires after now.
            TaskError: bad name, kind, command or prompt, or a limit out of range.
        """
        name = _name(name)
        if self.store.tasks.find(name) is not None:
            raise TaskError(f"a task named {name!r} already exists (pick another name)")
        kind, command, prompt = _action(kind, command, prompt)
        parsed = parse_schedule(_required(schedule, "schedule"), tz or None)
        now = self.clock.now()
        next_run_at = _first_fire(parsed, now)
        try:
            return self.store.tasks.add(
                name=name, kind=kind, schedule=_schedule_text(parsed), tz=parsed.tz,
                command=command, prompt=prompt, enabled=enabled, next_run_at=next_run_at,
                grace_seconds=_limit(grace_seconds, DEFAULT_GRACE, 0, MAX_GRACE, "grace_seconds"),
                timeout=_limit(timeout, DEFAULT_TIMEOUT, 1, MAX_TIMEOUT, "timeout"),
                notify=notify, now=now,
            )  # fmt: skip
        except StoreError as exc:
            raise TaskError(str(exc)) from exc

    def update(self, ref: int | str, **changes: Any) -> Task:
        """Change some of: name, schedule, tz, kind, command, prompt, grace_seconds, timeout,
        notify (None values are ignored). A new schedule or zone reschedules from now.

        Raises:
            TaskNotFound, TaskError, ScheduleError: as for :meth:`add`.
        """
        task = self.get(ref)
        changes = {key: value for key, value in changes.items() if value is not None}
        unknown = set(changes) - _UPDATABLE
        if unknown:
            raise TaskError(f"cannot change {', '.join(sorted(unknown))} of a task")
        if not changes:
            raise TaskError("nothing to change: give the fields to update")
        fields: dict[str, Any] = {}
        if "name" in changes:
            fields["name"] = _name(changes["name"])
        if {"kind", "command", "prompt"} & set(changes):
            kind, command, prompt = _action(
                changes.get("kind") or _implied_kind(changes) or task.kind,
                changes.get("command", task.command),
                changes.get("prompt", task.prompt),
            )
            fields.update(kind=kind, command=command, prompt=prompt)
        now = self.clock.now()
        if "schedule" in changes or "tz" in changes:
            zone = (changes["tz"] or None) if "tz" in changes else task.tz
            # a " tz=Zone" written in the new schedule text wins over both
            parsed = parse_schedule(changes.get("schedule") or task.schedule, zone)
            fields.update(schedule=_schedule_text(parsed), tz=parsed.tz, anchor_at=now)
            fields["next_run_at"] = _first_fire(parsed, now)
        if "grace_seconds" in changes:
            fields["grace_seconds"] = _limit(
                changes["grace_seconds"], DEFAULT_GRACE, 0, MAX_GRACE, "grace_seconds"
            )
        if "timeout" in changes:
            fields["timeout"] = _limit(
                changes["timeout"], DEFAULT_TIMEOUT, 1, MAX_TIMEOUT, "timeout"
            )
        if "notify" in changes:
            fields["notify"] = bool(changes["notify"])
        return self._write(task, fields, now)

    def set_enabled(self, ref: int | str, enabled: bool) -> Task:
        """Enable (rescheduled from now, never catching up) or disable a task.

        Raises:
            ScheduleError: enabling a task whose schedule never fires again (a past ``once``).
        """
        task = self.get(ref)
        now = self.clock.now()
        fields: dict[str, Any] = {"enabled": enabled}
        if enabled:
            parsed = parse_schedule(task.schedule, task.tz)
            fields.update(anchor_at=now, next_run_at=_first_fire(parsed, now))
        return self._write(task, fields, now)

    def delete(self, ref: int | str) -> Task:
        """Delete the task and its run history; returns what was deleted."""
        task = self.get(ref)
        self.store.tasks.delete(task.id)
        return task

    def _write(self, task: Task, fields: dict[str, Any], now: float) -> Task:
        try:
            updated = self.store.tasks.update(task.id, now=now, **fields)
        except StoreError as exc:
            raise TaskError(str(exc)) from exc
        if updated is None:
            raise TaskNotFound(f"task #{task.id} was deleted meanwhile")
        return updated

    # -- running -----------------------------------------------------------------------------

    def runner(self) -> SchedulerRunner | None:
        """The runtime's started scheduler, if there is one."""
        runner = getattr(self.runtime, "scheduler", None)
        return runner if isinstance(runner, SchedulerRunner) and runner.is_running else None

    async def arun_now(self, ref: int | str) -> TaskRun:
        """Run the task now and wait for the outcome (REST routes, the scheduler tool, the CLI).

        Raises:
            TaskNotFound, TaskBusy (already running), TaskError (no runtime to run it with).
        """
        task = await asyncio.to_thread(self.get, ref)
        runner = self.runner()
        if runner is None or runner.loop is None:
            return await self._run_detached(task.id)
        if runner.loop is _current_loop():
            return await runner.run_now(task.id)
        future = asyncio.run_coroutine_threadsafe(runner.run_now(task.id), runner.loop)
        return await asyncio.wrap_future(future)

    async def astart_now(self, ref: int | str) -> TaskRun:
        """Start a run on the started scheduler and return it as soon as it is recorded
        (status ``running``); :meth:`history` shows how it goes on and ends.

        Raises:
            TaskNotFound, TaskBusy: as :meth:`arun_now`.
            TaskError: no scheduler runs in this process (``arun_now`` then).
        """
        task = await asyncio.to_thread(self.get, ref)
        runner = self.runner()
        if runner is None or runner.loop is None:
            raise TaskError("no scheduler runs here to run the task in the background")
        if runner.loop is _current_loop():
            return await runner.start_now(task.id)
        future = asyncio.run_coroutine_threadsafe(runner.start_now(task.id), runner.loop)
        return await asyncio.wrap_future(future)

    async def _run_detached(self, task_id: int) -> TaskRun:
        """Run without a started scheduler. Called on the runtime's own event loop (a tool, a
        route, the CLI), so the runtime's model clients can serve the run; a host that is not a
        full Runtime gets one of its own for the run."""
        from ..runtime import Runtime
        from .execute import TaskExecutor

        if self.runtime is None:
            raise TaskError("running a task needs the agent runtime, which is not available here")
        if isinstance(self.runtime, Runtime):
            runner = SchedulerRunner(self.store, TaskExecutor(self.runtime), self.clock)
            return await runner.run_now(task_id)
        runtime = Runtime(self.runtime.config)
        try:
            runner = SchedulerRunner(self.store, TaskExecutor(runtime), self.clock)
            return await runner.run_now(task_id)
        finally:
            await runtime.aclose()


def preview_schedule(
    schedule: str, tz: str | None = None, count: int = 5, clock: Clock | None = None
) -> Preview:
    """The next ``count`` fire times of ``schedule`` from now (nothing is saved; no store
    needed).

    Raises:
        ScheduleError: the schedule is malformed or never fires again.
    """
    parsed = parse_schedule(_required(schedule, "schedule"), tz or None)
    now = moment((clock or SystemClock()).now())
    times = parsed.next_times(now, max(1, min(int(count), MAX_PREVIEW)), anchor=now)
    if not times:
        raise ScheduleError(f"{parsed} never fires after now ({now:%Y-%m-%d %H:%M} UTC)")
    return Preview(parsed, times)


async def start_scheduler(runtime: Runtime, clock: Clock | None = None) -> SchedulerRunner:
    """Start the runtime's scheduler on the running event loop (the server calls this at
    start-up; ``await stop_scheduler(runtime)`` at shutdown). It is kept as
    ``runtime.scheduler`` so that ``run_now`` from tools runs on it."""
    from .execute import TaskExecutor

    existing = getattr(runtime, "scheduler", None)
    if isinstance(existing, SchedulerRunner) and existing.is_running:
        return existing
    store = await asyncio.to_thread(lambda: runtime.store)
    runner = SchedulerRunner(store, TaskExecutor(runtime), clock)
    await runner.start()
    runtime.scheduler = runner
    return runner


async def stop_scheduler(runtime: Runtime) -> None:
    """Stop the scheduler :func:`start_scheduler` started, if any. Safe to call twice."""
    runner = getattr(runtime, "scheduler", None)
    if isinstance(runner, SchedulerRunner):
        runtime.scheduler = None
        await runner.stop()


async def run_headless(runtime: Runtime, on_ready: Callable[[int], None] | None = None) -> None:
    """Run the scheduler until SIGINT or SIGTERM; ``on_ready(enabled_task_count)`` once it
    runs."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    handled: list[signal.Signals] = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop.set)
            handled.append(sig)
        except (NotImplementedError, RuntimeError):  # Windows: Ctrl-C still interrupts
            pass
    try:
        runner = await start_scheduler(runtime)
        if on_ready is not None:
            enabled = await asyncio.to_thread(runner.store.tasks.matching, enabled_only=True)
            on_ready(len(enabled))
        await stop.wait()
    finally:
        await stop_scheduler(runtime)
        for sig in handled:
            loop.remove_signal_handler(sig)


# -- validation helpers ----------------------------------------------------------------------


def _current_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _required(value: str | None, what: str) -> str:
    if value is None or not str(value).strip():
        raise TaskError(f"{what} is required")
    return str(value).strip()


def _name(value: str | None) -> str:
    name = " ".join(_required(value, "a task name").split())
    if len(name) > MAX_NAME:
        raise TaskError(f"the task name is {len(name)} characters long; at most {MAX_NAME}")
    if name.lstrip("#").isdecimal():
        raise TaskError(f"the task name {name!r} is a number; it would be read as an id")
    return name


def _action(
    kind: str | None, command: str | None, prompt: str | None
) -> tuple[str, str | None, str | None]:
    """(kind, command, prompt) checked: a shell task (kind ``shell`` or ``command``) has a
    command that passes the deny-list, a prompt task has a prompt."""
    from ..shell.denylist import check_command

    command = command.strip() if command and command.strip() else None
    prompt = prompt.strip() if prompt and prompt.strip() else None
    if kind is None:
        if command and prompt:
            raise TaskError(
                "give either a command (shell task) or a prompt (prompt task), not both"
            )
        kind = "shell" if command else "prompt" if prompt else None
    if kind is None:
        raise TaskError("a task needs a command (kind shell) or a prompt (kind prompt)")
    kind = kind.strip().lower()
    kind = KIND_ALIASES.get(kind, kind)
    if kind == "shell":
        if command is None:
            raise TaskError("a shell task needs a command")
        try:
            check_command(command)
        except ToolError as exc:
            raise TaskError(str(exc)) from exc
        return kind, command, None
    if kind == "prompt":
        if prompt is None:
            raise TaskError("a prompt task needs a prompt (what to ask the agent)")
        return kind, None, prompt
    raise TaskError(f"unknown task kind {kind!r} (expected shell, command or prompt)")


def _implied_kind(changes: dict[str, Any]) -> str | None:
    """The kind an update means when it gives only a command or only a prompt."""
    if "command" in changes and "prompt" not in changes:
        return "shell"
    if "prompt" in changes and "command" not in changes:
        return "prompt"
    return None


def _limit(value: float | None, default: float, low: float, high: float, what: str) -> float:
    if value is None:
        return default
    try:
        number = float(value)
    except (TypeError, ValueError) as exc:
        raise TaskError(f"{what} must be a number of seconds, not {value!r}") from exc
    if not low <= number <= high:
        raise TaskError(f"{what} must be between {low:g} and {high:g} seconds, not {number:g}")
    return number


def _schedule_text(schedule: Schedule) -> str:
    """``kind:spec`` without the zone, which is stored in its own column."""
    return f"{schedule.kind}:{schedule.spec}"


def _first_fire(schedule: Schedule, now: float) -> float:
    first = next_fire(schedule, now, now)
    if first is None:
        raise ScheduleError(
            f"{schedule} never fires after now ({moment(now):%Y-%m-%d %H:%M} UTC); "
            "a once: time must lie in the future"
        )
    return first
