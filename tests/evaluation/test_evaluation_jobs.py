"""The durable queue of follow-up jobs: rows written before a job runs, taken over at start from
processes that are gone, retried up to a cap, pruned."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from tea_agent_mini.agent.background import (
    MAX_ATTEMPTS,
    BackgroundWorker,
    JobKind,
    process_gone,
    process_mark,
)
from tea_agent_mini.shell import proctree
from tea_agent_mini.store import JobSpec, Store
from tea_agent_mini.store.jobs import KEEP_FINISHED

GONE = "1:1:00000000"  # pid 1 never started at tick 1 of another boot


@pytest.fixture
def store(tmp_path: Path):
    with Store.open(tmp_path / "chat.db") as opened:
        yield opened


def left_behind(store: Store, kind: str, payload: dict, status: str = "pending") -> int:
    """A row as a process that died would have left it."""
    (job_id,) = store.jobs.add_many([JobSpec(kind, payload)], owner=GONE)
    store.db.execute("UPDATE jobs SET status = ?, updated_at = 0 WHERE id = ?", (status, job_id))
    return job_id


def worker_for(store: Store, **kinds: JobKind) -> BackgroundWorker:
    return BackgroundWorker(jobs=store.jobs, kinds=kinds)


def test_a_pending_and_a_running_job_left_in_the_table_run_at_start(store):
    ran: list[str] = []

    async def note(payload):
        ran.append(payload["text"])

    first = left_behind(store, "note", {"text": "pending one"})
    second = left_behind(store, "note", {"text": "was running"}, status="running")

    async def go():
        worker = worker_for(store, note=JobKind(note, 5))
        assert await worker.resume() == 2
        assert await worker.resume() == 0  # once per worker
        await worker.drain()
        await worker.aclose()
        return worker.stats

    stats = asyncio.run(go())
    assert ran == ["pending one", "was running"]
    assert stats.resumed == 2 and stats.done == 2
    assert [store.jobs.get(i).status for i in (first, second)] == ["done", "done"]
    assert store.jobs.get(first).owner == process_mark()


def test_a_job_failing_three_times_is_marked_failed_with_its_error(store):
    calls: list[int] = []

    async def broken(payload):
        calls.append(1)
        raise RuntimeError("the model is down")

    job_id = left_behind(store, "broken", {})
    statuses = []
    for _ in range(MAX_ATTEMPTS + 1):  # a start after each failure; the last finds it failed

        async def start():
            worker = worker_for(store, broken=JobKind(broken, 5))
            await worker.resume()
            await worker.drain()
            await worker.aclose()

        asyncio.run(start())
        job = store.jobs.get(job_id)
        statuses.append((job.status, job.attempts))
        # the next start is another process: this one is gone by then
        store.db.execute("UPDATE jobs SET owner = ?, updated_at = 0 WHERE id = ?", (GONE, job_id))
    assert len(calls) == MAX_ATTEMPTS
    assert statuses == [("pending", 1), ("pending", 2), ("failed", 3), ("failed", 3)]
    assert "RuntimeError: the model is down" in store.jobs.get(job_id).error


def test_a_row_a_process_left_running_too_often_is_given_up(store):
    job_id = left_behind(store, "note", {}, status="running")
    store.db.execute("UPDATE jobs SET attempts = ? WHERE id = ?", (MAX_ATTEMPTS, job_id))

    async def go():
        worker = worker_for(store, note=JobKind(lambda payload: asyncio.sleep(0), 5))
        return await worker.resume()

    assert asyncio.run(go()) == 0
    job = store.jobs.get(job_id)
    assert job.status == "failed" and "gave up after 3 attempts" in job.error


@pytest.mark.skipif(not proctree.has_proc(), reason="tells live processes apart through /proc")
def test_the_rows_of_a_live_process_are_left_to_it(store):
    parent = proctree.read_stat(os.getppid())
    alive = f"{parent.pid}:{parent.start}:{proctree.boot_id()[:8]}"
    (job_id,) = store.jobs.add_many([JobSpec("note", {})], owner=alive)
    assert not process_gone(alive, 0.0)
    assert process_gone(GONE, 1e12, now=1e12)

    async def go():
        return await worker_for(store, note=JobKind(lambda payload: asyncio.sleep(0), 5)).resume()

    assert asyncio.run(go()) == 0
    assert store.jobs.get(job_id).status == "pending" and store.jobs.get(job_id).owner == alive


def test_an_enqueued_job_is_in_the_store_before_and_while_it_runs(store):
    seen: list[tuple[str, int]] = []

    async def look(payload):
        (row,) = store.jobs.recent(1)
        seen.append((row.status, row.attempts))

    async def go():
        worker = worker_for(store, look=JobKind(look, 5))
        assert worker.enqueue([JobSpec("look", {"x": 1})]) is True
        await worker.drain()
        await worker.aclose()

    asyncio.run(go())
    assert seen == [("running", 1)]
    (row,) = store.jobs.recent(1)
    assert (row.kind, row.payload, row.status) == ("look", {"x": 1}, "done")


def test_an_unknown_kind_left_behind_is_marked_failed(store):
    job_id = left_behind(store, "vanished", {})

    async def go():
        return await worker_for(store).resume()

    assert asyncio.run(go()) == 0
    job = store.jobs.get(job_id)
    assert job.status == "failed" and "unknown job kind" in job.error


def test_done_rows_are_pruned_to_the_newest(store):
    ids = store.jobs.add_many([JobSpec("note", {"n": n}) for n in range(KEEP_FINISHED + 5)], "me")
    for job_id in ids:
        store.jobs.start(job_id)
        store.jobs.finish(job_id)
    assert store.jobs.counts()["done"] == KEEP_FINISHED
    assert store.jobs.get(ids[0]) is None and store.jobs.get(ids[-1]).status == "done"
