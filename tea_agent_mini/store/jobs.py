"""The durable queue of follow-up jobs: a row per job, written before the job runs.

A job is a kind (``title``, ``memory``, ``evaluate`` ...) and a JSON payload from which the
background worker rebuilds what to run (``agent/background.py``); no callable is ever stored.
A row goes ``pending`` -> ``running`` (``attempts`` counted) -> ``done``, or back to ``pending``
when it failed, until ``failed`` after the last attempt. ``owner`` names the process that
queued or took it, so a process starting later takes over only the rows of processes that are
gone (the worker decides who is gone). Done and failed rows are pruned to the newest few.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import StoreError
from .database import Database, Row

__all__ = ["JOB_STATUSES", "Job", "JobRepository", "JobSpec"]

JOB_STATUSES = ("pending", "running", "done", "failed")
KEEP_FINISHED = 200  # done (and, separately, failed) rows kept for a look back
ERROR_CHARS = 2000


@dataclass(frozen=True)
class JobSpec:
    """What a job row is made from: its kind, its JSON payload, the topic it works on."""

    kind: str
    payload: dict[str, Any] = field(default_factory=dict)
    topic_id: str | None = None


@dataclass(frozen=True)
class Job:
    id: int
    kind: str
    topic_id: str | None
    payload: dict[str, Any]
    status: str
    attempts: int
    owner: str
    error: str | None
    created_at: float
    updated_at: float


class JobRepository:
    """Add, take, finish and fail job rows; find the rows other processes left behind."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def add_many(self, specs: Iterable[JobSpec], owner: str) -> list[int]:
        """Rows for ``specs`` (pending, owned by ``owner``), in one transaction; their ids.

        Raises:
            StoreError: a payload is not JSON-serialisable.
        """
        rows = []
        for spec in specs:
            try:
                payload = json.dumps(spec.payload, ensure_ascii=False)
            except (TypeError, ValueError) as exc:
                raise StoreError(f"the payload of a {spec.kind} job is not JSON: {exc}") from exc
            rows.append((spec.kind, spec.topic_id, payload))
        ids: list[int] = []
        with self._db.transaction():
            for kind, topic_id, payload in rows:
                now = self._db.now()
                cursor = self._db.execute(
                    "INSERT INTO jobs (kind, topic_id, payload, status, owner, created_at, "
                    "updated_at) VALUES (?, ?, ?, 'pending', ?, ?, ?)",
                    (kind, topic_id, payload, owner, now, now),
                )
                ids.append(int(cursor.lastrowid or 0))
        return ids

    def get(self, job_id: int) -> Job | None:
        row = self._db.query_one("SELECT * FROM jobs WHERE id = ?", (job_id,))
        return _job(row) if row else None

    def start(self, job_id: int) -> None:
        """Mark the row running and count the attempt."""
        self._db.execute(
            "UPDATE jobs SET status = 'running', attempts = attempts + 1, updated_at = ? "
            "WHERE id = ?",
            (self._db.now(), job_id),
        )

    def finish(self, job_id: int) -> None:
        """Mark the row done (and prune old done rows)."""
        with self._db.transaction():
            self._db.execute(
                "UPDATE jobs SET status = 'done', error = NULL, updated_at = ? WHERE id = ?",
                (self._db.now(), job_id),
            )
            self._prune("done")

    def fail(self, job_id: int, error: str, max_attempts: int) -> str:
        """Record a failed attempt: the row waits for the next start (``pending``) until it has
        had ``max_attempts``, then it is ``failed``. Returns the new status."""
        with self._db.transaction():
            row = self._db.query_one("SELECT attempts FROM jobs WHERE id = ?", (job_id,))
            if row is None:
                return "failed"
            status = "failed" if int(row[0]) >= max_attempts else "pending"
            self._db.execute(
                "UPDATE jobs SET status = ?, error = ?, updated_at = ? WHERE id = ?",
                (status, error[:ERROR_CHARS], self._db.now(), job_id),
            )
            if status == "failed":
                self._prune("failed")
        return status

    def take_over(
        self, owner: str, gone: Callable[[str, float], bool], max_attempts: int, limit: int = 500
    ) -> list[Job]:
        """The unfinished rows of owners that are ``gone(owner, updated_at)``, now owned by
        ``owner`` and pending, oldest first. A row that already had ``max_attempts`` is marked
        failed instead (its last error kept, or that its process ended while it ran)."""
        taken: list[Job] = []
        with self._db.transaction():
            rows = self._db.query(
                "SELECT * FROM jobs WHERE status IN ('pending', 'running') AND owner != ? "
                "ORDER BY id LIMIT ?",
                (owner, max(1, int(limit))),
            )
            now = self._db.now()
            for row in rows:
                job = _job(row)
                if not gone(job.owner, job.updated_at):
                    continue
                if job.attempts >= max_attempts:
                    error = job.error or "interrupted: the process running it ended"
                    self._db.execute(
                        "UPDATE jobs SET status = 'failed', error = ?, updated_at = ? WHERE id = ?",
                        (
                            f"gave up after {job.attempts} attempts: {error}"[:ERROR_CHARS],
                            now,
                            job.id,
                        ),
                    )
                    continue
                self._db.execute(
                    "UPDATE jobs SET status = 'pending', owner = ?, updated_at = ? WHERE id = ?",
                    (owner, now, job.id),
                )
                taken.append(replace(job, owner=owner, status="pending", updated_at=now))
            self._prune("failed")
        return taken

    def recent(self, limit: int = 50, status: str | None = None) -> list[Job]:
        """Rows newest first, of one status when ``status`` is given."""
        where, params = ("WHERE status = ?", [status]) if status else ("", [])
        rows = self._db.query(
            f"SELECT * FROM jobs {where} ORDER BY id DESC LIMIT ?", (*params, max(0, int(limit)))
        )
        return [_job(row) for row in rows]

    def counts(self) -> dict[str, int]:
        """Rows per status (every status present, 0 when none)."""
        found = dict.fromkeys(JOB_STATUSES, 0)
        for status, count in self._db.query("SELECT status, COUNT(*) FROM jobs GROUP BY status"):
            found[status] = int(count)
        return found

    def _prune(self, status: str) -> None:
        self._db.execute(
            "DELETE FROM jobs WHERE status = ? AND id < (SELECT MIN(id) FROM "
            "(SELECT id FROM jobs WHERE status = ? ORDER BY id DESC LIMIT ?))",
            (status, status, KEEP_FINISHED),
        )


def _job(row: Row) -> Job:
    try:
        payload = json.loads(row["payload"] or "{}")
    except ValueError:
        payload = {}
    return Job(
        id=row["id"],
        kind=row["kind"],
        topic_id=row["topic_id"],
        payload=payload if isinstance(payload, dict) else {},
        status=row["status"],
        attempts=int(row["attempts"]),
        owner=row["owner"],
        error=row["error"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )
