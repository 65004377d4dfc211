"""Scheduled tasks and their runs.

A task is a shell command or an agent prompt with a schedule. ``next_run_at`` is when it fires
next. Who may run it now is decided by its lease (``task_leases.py``, inherited by
:class:`TaskRepository`: ``claim``, ``claim_due``, ``release``). Times are epoch seconds; the
caller passes ``now`` wherever the scheduler's (injectable) clock matters.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import StoreError
from .database import Database, like_pattern
from .pg_listen import CHANGES
from .task_leases import (
    CLAIM_BATCH,
    FIRING_ATTEMPTS,
    INTERRUPTED,
    Interrupted,
    TaskLeases,
    interrupted_error,
)

if TYPE_CHECKING:
    from .database import Row

__all__ = [
    "CLAIM_BATCH",
    "FIRING_ATTEMPTS",
    "INTERRUPTED",
    "interrupted_error",
    "RUN_STATUSES",
    "TASK_KINDS",
    "Interrupted",
    "Task",
    "TaskRepository",
    "TaskRun",
]

log = logging.getLogger(__name__)

TASK_KINDS = ("shell", "prompt")
RUN_STATUSES = ("running", "ok", "failed", "missed", "timeout", "skipped")
OUTPUT_LIMIT = 16 * 1024  # characters of a run's output kept: the head and the tail
MAX_RUNS_PER_TASK = 200  # older runs are pruned so a frequent task cannot grow without bound
_EDITABLE = frozenset(
    {"name", "kind", "schedule", "tz", "command", "prompt", "enabled", "anchor_at"}
    | {"next_run_at", "grace_seconds", "timeout", "notify", "topic_id"}
)


@dataclass
class Task:
    """A scheduled task. ``command`` is set for shell tasks, ``prompt`` for prompt tasks;
    ``topic_id`` is a prompt task's own session (created on its first run)."""

    id: int
    name: str
    kind: str
    schedule: str
    tz: str | None
    command: str | None
    prompt: str | None
    enabled: bool
    created_at: float
    updated_at: float
    anchor_at: float  # where ``interval`` schedules count from (creation / schedule change)
    next_run_at: float | None
    last_run_at: float | None
    grace_seconds: float
    timeout: float
    notify: bool
    topic_id: str | None = None
    lease_owner: str | None = None
    lease_until: float = 0.0
    last_status: str | None = None  # status of the newest run, read with the task
    # set only on a task a claim returns, when that claim closed a dead holder's run
    interrupted: Interrupted | None = field(default=None, compare=False)

    @property
    def text(self) -> str:
        """What the task does: the command or the prompt."""
        return (self.command if self.kind == "shell" else self.prompt) or ""


@dataclass
class TaskRun:
    """One run (or a recorded missed / skipped occurrence) of a task."""

    id: int
    task_id: int
    status: str
    scheduled_for: float | None
    started_at: float | None
    ended_at: float | None = None
    exit_code: int | None = None
    output: str = ""
    error: str | None = None
    topic_id: str | None = None

    @property
    def duration(self) -> float | None:
        if self.started_at is None or self.ended_at is None:
            return None
        return max(0.0, self.ended_at - self.started_at)


_SELECT_TASKS = """
    SELECT t.*, (SELECT r.status FROM task_runs r WHERE r.task_id = t.id
                 ORDER BY r.id DESC LIMIT 1) AS last_status
    FROM tasks t
"""


def cap_output(text: str, limit: int = OUTPUT_LIMIT) -> str:
    """``text`` cut to about ``limit`` characters, keeping its beginning and its end."""
    if len(text) <= limit:
        return text
    half = limit // 2
    omitted = len(text) - 2 * half
    return f"{text[:half]}\n... [{omitted:,} characters omitted] ...\n{text[-half:]}"


class TaskRepository(TaskLeases):
    """Tasks and runs. Writes that change what is scheduled tell the listeners registered with
    :meth:`on_change` (a runner in this process wakes up early instead of sleeping on)."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self._listeners: list[Callable[[], None]] = []
        self._listeners_lock = threading.Lock()

    # -- change listeners --------------------------------------------------------------------

    def on_change(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call ``callback()`` (from the writing thread) after each scheduling change, and on
        PostgreSQL also when another instance changed the tasks (from the store's listening
        thread); returns a function that unsubscribes it."""
        with self._listeners_lock:
            self._listeners.append(callback)

        def heard(payload: str | None) -> None:
            table, _, origin = (payload or "").partition(" ")
            if payload is None or (table == "tasks" and origin != self._db.origin):
                callback()  # our own writes called it already

        stop_listening = self._db.listen(CHANGES, heard)

        def unsubscribe() -> None:
            stop_listening()
            with self._listeners_lock:
                if callback in self._listeners:
                    self._listeners.remove(callback)

        return unsubscribe

    def _changed(self) -> None:
        with self._listeners_lock:
            listeners = list(self._listeners)
        for callback in listeners:
            callback()

    # -- tasks -------------------------------------------------------------------------------

    def add(
        self,
        *,
        name: str,
        kind: str,
        schedule: str,
        next_run_at: float | None,
        tz: str | None = None,
        command: str | None = None,
        prompt: str | None = None,
        enabled: bool = True,
        grace_seconds: float = 600.0,
        timeout: float = 300.0,
        notify: bool = False,
        now: float | None = None,
    ) -> Task:
        """Insert a task (validation is the caller's: see ``scheduler.service.TaskService``).

        Raises:
            StoreError: the name is taken, or ``kind`` is not shell/prompt.
        """
        stamp = self._db.now() if now is None else now
        if self.find(name) is not None:
            raise StoreError(f"a task named {name!r} already exists")
        cursor = self._db.execute(
            "INSERT INTO tasks (name, kind, schedule, tz, command, prompt, enabled, created_at, "
            "updated_at, anchor_at, next_run_at, grace_seconds, timeout, notify) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (name, kind, schedule, tz, command, prompt, int(enabled), stamp, stamp, stamp)
            + (next_run_at, float(grace_seconds), float(timeout), int(notify)),
        )
        task = self.get(int(cursor.lastrowid or 0))
        assert task is not None
        self._changed()
        return task

    def get(self, task_id: int) -> Task | None:
        row = self._db.query_one(_SELECT_TASKS + " WHERE t.id = ?", (int(task_id),))
        return _task(row) if row else None

    def find(self, name: str) -> Task | None:
        """The task with this name, compared case-insensitively."""
        row = self._db.query_one(_SELECT_TASKS + " WHERE t.name = ? COLLATE NOCASE", (name,))
        return _task(row) if row else None

    def matching(self, *, enabled_only: bool = False, query: str | None = None) -> list[Task]:
        """Tasks in id order; ``query`` matches name, command and prompt (case-insensitive)."""
        where: list[str] = []
        params: list[Any] = []
        if enabled_only:
            where.append("t.enabled = 1")
        if query:
            where.append(
                "(t.name LIKE ? ESCAPE '\\' OR t.command LIKE ? ESCAPE '\\' "
                "OR t.prompt LIKE ? ESCAPE '\\')"
            )
            params += [like_pattern(query)] * 3
        sql = _SELECT_TASKS + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY t.id"
        return [_task(row) for row in self._db.query(sql, params)]

    def update(self, task_id: int, *, now: float | None = None, **fields: Any) -> Task | None:
        """Change the given fields (see ``_EDITABLE``); None when there is no such task.

        Raises:
            StoreError: an unknown field, or the new name is taken by another task.
        """
        unknown = set(fields) - _EDITABLE
        if unknown:
            raise StoreError(f"cannot update task field(s): {', '.join(sorted(unknown))}")
        if "name" in fields:
            other = self.find(fields["name"])
            if other is not None and other.id != int(task_id):
                raise StoreError(f"a task named {fields['name']!r} already exists")
        values = {k: int(v) if isinstance(v, bool) else v for k, v in fields.items()}
        values["updated_at"] = self._db.now() if now is None else now
        assignments = ", ".join(f"{key} = ?" for key in values)
        cursor = self._db.execute(
            f"UPDATE tasks SET {assignments} WHERE id = ?", (*values.values(), int(task_id))
        )
        if cursor.rowcount == 0:
            return None
        self._changed()
        return self.get(task_id)

    def delete(self, task_id: int) -> bool:
        """Delete the task and its runs (cascade)."""
        deleted = self._db.execute("DELETE FROM tasks WHERE id = ?", (int(task_id),)).rowcount > 0
        if deleted:
            self._changed()
        return deleted

    def scheduled(self) -> list[Task]:
        """Enabled tasks that have a next fire time, soonest first (what a runner watches)."""
        rows = self._db.query(
            _SELECT_TASKS + " WHERE t.enabled = 1 AND t.next_run_at IS NOT NULL "
            "ORDER BY t.next_run_at, t.id"
        )
        return [_task(row) for row in rows]

    # -- runs --------------------------------------------------------------------------------

    def start_run(self, task_id: int, scheduled_for: float | None, started_at: float) -> TaskRun:
        """Record a run as started (status ``running``)."""
        return self.record_run(task_id, "running", scheduled_for, started_at=started_at)

    def record_run(
        self,
        task_id: int,
        status: str,
        scheduled_for: float | None,
        *,
        started_at: float | None = None,
        ended_at: float | None = None,
        error: str | None = None,
    ) -> TaskRun:
        """Insert a run row; ``missed`` and ``skipped`` occurrences are recorded this way."""
        if status not in RUN_STATUSES:
            raise StoreError(f"unknown run status {status!r}")
        with self._db.transaction() as tx:
            cursor = tx.execute(
                "INSERT INTO task_runs (task_id, status, scheduled_for, started_at, ended_at, "
                "error) VALUES (?, ?, ?, ?, ?, ?)",
                (int(task_id), status, scheduled_for, started_at, ended_at, error),
            )
            run_id = int(cursor.lastrowid or 0)
            tx.execute(
                "DELETE FROM task_runs WHERE task_id = ? AND id <= ?",
                (int(task_id), run_id - MAX_RUNS_PER_TASK),
            )
        run = self.get_run(run_id)
        assert run is not None
        return run

    def finish_run(
        self,
        run_id: int,
        *,
        status: str,
        ended_at: float,
        exit_code: int | None = None,
        output: str = "",
        error: str | None = None,
        topic_id: str | None = None,
    ) -> TaskRun | None:
        """Close a run with its outcome (output capped at OUTPUT_LIMIT characters); None when
        the run is gone (its task was deleted meanwhile)."""
        if status not in RUN_STATUSES or status == "running":
            raise StoreError(f"a run cannot finish with status {status!r}")
        self._db.execute(
            "UPDATE task_runs SET status = ?, ended_at = ?, exit_code = ?, output = ?, "
            "error = ?, topic_id = ? WHERE id = ?",
            (status, ended_at, exit_code, cap_output(output), error, topic_id, int(run_id)),
        )
        return self.get_run(run_id)

    def get_run(self, run_id: int) -> TaskRun | None:
        row = self._db.query_one("SELECT * FROM task_runs WHERE id = ?", (int(run_id),))
        return _run(row) if row else None

    def runs(self, task_id: int, limit: int = 20, before_id: int | None = None) -> list[TaskRun]:
        """The task's runs, newest first (older than the run ``before_id`` when given)."""
        rows = self._db.query(
            "SELECT * FROM task_runs WHERE task_id = ? AND id < ? ORDER BY id DESC LIMIT ?",
            (int(task_id), 2**62 if before_id is None else int(before_id), max(0, int(limit))),
        )
        return [_run(row) for row in rows]


def _task(row: Row) -> Task:
    return Task(
        id=row["id"],
        name=row["name"],
        kind=row["kind"],
        schedule=row["schedule"],
        tz=row["tz"],
        command=row["command"],
        prompt=row["prompt"],
        enabled=bool(row["enabled"]),
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        anchor_at=row["anchor_at"],
        next_run_at=row["next_run_at"],
        last_run_at=row["last_run_at"],
        grace_seconds=row["grace_seconds"],
        timeout=row["timeout"],
        notify=bool(row["notify"]),
        topic_id=row["topic_id"],
        lease_owner=row["lease_owner"],
        lease_until=row["lease_until"],
        last_status=row["last_status"],
    )


def _run(row: Row) -> TaskRun:
    return TaskRun(
        id=row["id"],
        task_id=row["task_id"],
        status=row["status"],
        scheduled_for=row["scheduled_for"],
        started_at=row["started_at"],
        ended_at=row["ended_at"],
        exit_code=row["exit_code"],
        output=row["output"],
        error=row["error"],
        topic_id=row["topic_id"],
    )
