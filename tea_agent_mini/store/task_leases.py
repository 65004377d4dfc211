"""Leases on scheduled tasks: who may run a task now, and the runs a dead holder left.

A runner *claims* a due task by taking its lease (``lease_owner``, ``lease_until``), so two
processes (or instances on one PostgreSQL) never run the same occurrence twice. While the lease
is held no other run of that task can start. :meth:`TaskLeases.claim_due` claims the due tasks:
on PostgreSQL in one statement whose ``SELECT ... FOR UPDATE SKIP LOCKED`` passes over the rows
another instance is claiming at that moment, on SQLite inside one write transaction;
:meth:`TaskLeases.claim` takes one task's lease with a conditional UPDATE.

A holder that died leaves its run marked running and its lease to run out; the next claim closes
that run as failed and reports it (:class:`Interrupted`): how many runs the occurrence (a run's
``scheduled_for``) has had. The scheduler retries an interrupted occurrence once; after its
:data:`FIRING_ATTEMPTS`-th run was interrupted too it is given up.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .database import Database
    from .tasks import Task

__all__ = ["CLAIM_BATCH", "FIRING_ATTEMPTS", "INTERRUPTED", "Interrupted", "TaskLeases"]

log = logging.getLogger(__name__)

INTERRUPTED = "interrupted: the process running it stopped before it finished"
FIRING_ATTEMPTS = 2  # runs an occurrence gets at most: a run a dead holder left is retried once
CLAIM_BATCH = 10  # due tasks one claim statement takes; a runner claims batch after batch

# The due tasks (what the index tasks_due serves), soonest first.
_DUE = (
    "SELECT id FROM tasks WHERE enabled = 1 AND next_run_at IS NOT NULL AND next_run_at <= ? "
    "AND lease_until < ? ORDER BY next_run_at, id LIMIT ?"
)
_LEASE = "lease_owner = ?, lease_until = ? + timeout * ? + ?"
# PostgreSQL's claim: one statement, so one transaction of its own, outside the advisory lock
# that serialises the store's transactions (postgres.py). Rows another claimer has locked are
# skipped, not waited for; its committed leases fail "lease_until < now" when read again.
_CLAIM_DUE_SKIP_LOCKED = (
    f"WITH due AS MATERIALIZED ({_DUE} FOR UPDATE SKIP LOCKED) "
    f"UPDATE tasks SET {_LEASE} FROM due WHERE tasks.id = due.id RETURNING tasks.id"
)


@dataclass(frozen=True)
class Interrupted:
    """A run that a lease holder left marked running when it died, closed by the claim that
    took the lease after it ran out. ``firing`` is the occurrence the run was for (its
    ``scheduled_for``); ``attempts`` how many runs that occurrence has had, this one included."""

    run_id: int
    firing: float | None
    started_at: float | None
    attempts: int

    @property
    def given_up(self) -> bool:
        """The occurrence had its last run: it is not retried again."""
        return self.attempts >= FIRING_ATTEMPTS


def interrupted_error(attempts: int) -> str:
    """What a run closed after its holder died records as its error."""
    runs = f"run {attempts} of at most {FIRING_ATTEMPTS} of this occurrence"
    if attempts >= FIRING_ATTEMPTS:
        return f"{INTERRUPTED} ({runs}: it is given up, not retried again)"
    return f"{INTERRUPTED} ({runs})"


class TaskLeases:
    """The lease half of ``tasks.TaskRepository`` (which inherits it)."""

    _db: Database

    def get(self, task_id: int) -> Task | None:
        raise NotImplementedError

    def claim(
        self, task_id: int, owner: str, now: float, lease_until: float, *, due_only: bool = True
    ) -> Task | None:
        """Take the task's lease if nobody holds it; the claimed task, or None.

        With ``due_only`` the task must also be enabled and due (``next_run_at <= now``). One
        conditional UPDATE decides, so of two processes claiming at once exactly one wins. Runs
        still marked running belong to a holder whose lease ran out: they are closed as failed
        (the task's ``interrupted`` says so).
        """
        condition = "id = ? AND lease_until < ?"
        params: list[Any] = [owner, lease_until, int(task_id), now]
        if due_only:
            condition += " AND enabled = 1 AND next_run_at IS NOT NULL AND next_run_at <= ?"
            params.append(now)
        with self._db.transaction() as tx:
            cursor = tx.execute(
                f"UPDATE tasks SET lease_owner = ?, lease_until = ? WHERE {condition}", params
            )
            if cursor.rowcount == 0:
                return None
            interrupted = self._close_interrupted(tx, int(task_id), now)
            task = self.get(task_id)
        if task is not None:
            task.interrupted = interrupted
        return task

    def claim_due(
        self,
        owner: str,
        now: float,
        *,
        lease_factor: float,
        lease_extra: float,
        limit: int = CLAIM_BATCH,
    ) -> list[Task]:
        """Take the lease of up to ``limit`` due tasks nobody holds, soonest first; the claimed
        tasks. Each lease runs until ``now + timeout * lease_factor + lease_extra`` (the task's
        own ``timeout``). Runs a dead holder left are closed as with :meth:`claim`.

        On PostgreSQL one ``UPDATE`` over a ``SELECT ... FOR UPDATE SKIP LOCKED`` claims them:
        instances claiming at once each get other tasks and never wait for one another (it runs
        as a transaction of its own, so it does not take the store's advisory lock; the row locks
        and the condition on the lease decide). On SQLite one write transaction reads and claims.
        """
        lease = (owner, now, float(lease_factor), float(lease_extra))
        due = (now, now, max(1, int(limit)))
        if self._db.dialect == "postgresql":
            rows = self._db.query(_CLAIM_DUE_SKIP_LOCKED, due + lease)
            ids = [int(row[0]) for row in rows]
        else:
            with self._db.transaction() as tx:
                ids = [int(row[0]) for row in tx.query(_DUE, due)]
                for task_id in ids:
                    tx.execute(f"UPDATE tasks SET {_LEASE} WHERE id = ?", (*lease, task_id))
        return self._claimed(ids, now)

    def _claimed(self, ids: Sequence[int], now: float) -> list[Task]:
        """The tasks just claimed, soonest first, with the runs their dead holders left closed."""
        if not ids:
            return []
        marks = ", ".join("?" * len(ids))
        stale = self._db.query(
            f"SELECT DISTINCT task_id FROM task_runs WHERE status = 'running' AND task_id IN "
            f"({marks})",
            ids,
        )
        interrupted: dict[int, Interrupted | None] = {}
        for row in stale:
            with self._db.transaction() as tx:
                interrupted[int(row[0])] = self._close_interrupted(tx, int(row[0]), now)
        from .tasks import _SELECT_TASKS, _task

        tasks = [
            _task(row)
            for row in self._db.query(
                _SELECT_TASKS + f" WHERE t.id IN ({marks}) ORDER BY t.next_run_at, t.id", ids
            )
        ]
        for task in tasks:
            task.interrupted = interrupted.get(task.id)
        return tasks

    @staticmethod
    def _close_interrupted(tx: Database, task_id: int, now: float) -> Interrupted | None:
        """Close as failed the runs of ``task_id`` still marked running (call it holding the
        task's lease: they belong to a holder that died); the newest of them, or None."""
        rows = tx.query(
            "SELECT id, scheduled_for, started_at FROM task_runs "
            "WHERE task_id = ? AND status = 'running' ORDER BY id",
            (task_id,),
        )
        if not rows:
            return None
        newest = rows[-1]
        firing = newest["scheduled_for"]
        attempts = 1
        if firing is not None:
            # every run of the occurrence counts: this one, an earlier interrupted or cancelled one
            row = tx.query_one(
                "SELECT COUNT(*) FROM task_runs WHERE task_id = ? AND scheduled_for = ? "
                "AND status NOT IN ('missed', 'skipped')",
                (task_id, firing),
            )
            attempts = max(1, int(row[0]) if row else 1)
        tx.execute(
            "UPDATE task_runs SET status = 'failed', ended_at = ?, error = ? "
            "WHERE task_id = ? AND status = 'running'",
            (now, interrupted_error(attempts), task_id),
        )
        return Interrupted(int(newest["id"]), firing, newest["started_at"], attempts)

    def release(
        self,
        task_id: int,
        owner: str,
        *,
        last_run_at: float | None = None,
        topic_id: str | None = None,
        reschedule: bool = False,
        next_run_at: float | None = None,
    ) -> bool:
        """Drop ``owner``'s lease. With ``reschedule`` also set ``next_run_at``; None there
        disables the task (its schedule never fires again). False when the lease was not ours
        (it ran out and another process took it): nothing is changed then."""
        assignments = ["lease_owner = NULL", "lease_until = 0"]
        params: list[Any] = []
        if last_run_at is not None:
            assignments.append("last_run_at = ?")
            params.append(last_run_at)
        if topic_id is not None:
            assignments.append("topic_id = ?")
            params.append(topic_id)
        if reschedule:
            assignments.append("next_run_at = ?")
            params.append(next_run_at)
            if next_run_at is None:
                assignments.append("enabled = 0")
        cursor = self._db.execute(
            f"UPDATE tasks SET {', '.join(assignments)} WHERE id = ? AND lease_owner = ?",
            (*params, int(task_id), owner),
        )
        if cursor.rowcount == 0:
            log.warning("task #%s: the lease of %s was lost before the run ended", task_id, owner)
        return cursor.rowcount > 0

    def release_all(self, owner: str) -> int:
        """Drop every lease ``owner`` still holds (at shutdown); how many there were."""
        return self._db.execute(
            "UPDATE tasks SET lease_owner = NULL, lease_until = 0 WHERE lease_owner = ?", (owner,)
        ).rowcount
