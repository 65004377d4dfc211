"""Several instances on one PostgreSQL (issue 17): each runs its own scheduler with its own
connection pool, real shell tasks through the real executor, on the real clock. Every due
occurrence runs exactly once, and one whose runner is SIGKILLed mid-run is retried once by
another instance after its lease ran out. Skipped, saying why, where PostgreSQL cannot start."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from tea_agent_mini.config import load_config
from tea_agent_mini.runtime import Runtime
from tea_agent_mini.scheduler.execute import TaskExecutor
from tea_agent_mini.scheduler.runner import (
    HARD_LIMIT_EXTRA,
    HARD_LIMIT_FACTOR,
    LEASE_MARGIN,
    SchedulerRunner,
    SystemClock,
)
from tea_agent_mini.scheduler.service import TaskService
from tea_agent_mini.store import Store
from tea_agent_mini.store.tasks import INTERRUPTED

ROOT = Path(__file__).resolve().parents[2]
TASKS = 100


@pytest.fixture
def instance_config(write_config, workspace: Path, postgres_url: str) -> Path:
    """A config whose store is the test PostgreSQL, shell tasks running in ``workspace``."""
    return write_config(
        {
            "store": {"url": postgres_url},
            "agent": {"workspace": str(workspace), "sandbox": "off"},
        }
    )


def wait_for(condition, timeout: float = 60.0, what: str = "the condition") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_100_due_tasks_on_two_instances_each_run_exactly_once(
    instance_config, postgres_url, workspace: Path
):
    with Store.open(postgres_url) as store:
        service = TaskService(store)
        ids = [
            service.add(f"t{n}", "interval:3600", command=f"echo {n} >> ran.log").id
            for n in range(TASKS)
        ]
        now = time.time()
        for task_id in ids:
            store.tasks.update(task_id, next_run_at=now - 1)  # all due at once

    started = threading.Barrier(2)
    executed: dict[str, list[int]] = {}
    failures: list[BaseException] = []

    def instance(name: str) -> None:
        async def main() -> None:
            runtime = Runtime(load_config())  # its own store: its own connection pool
            executor = TaskExecutor(runtime)
            mine: list[int] = executed.setdefault(name, [])

            async def execute(task):
                mine.append(task.id)
                return await executor(task)

            runner = SchedulerRunner(runtime.store, execute, owner_id=name)
            try:
                started.wait(30)
                await runner.start()
                deadline = time.monotonic() + 90
                while await asyncio.to_thread(finished, runtime.store) < TASKS:
                    assert time.monotonic() < deadline, "the tasks did not all finish"
                    await asyncio.sleep(0.1)
                await runner.stop()
            finally:
                await runtime.aclose()

        try:
            asyncio.run(main())
        except BaseException as exc:  # reported by the test's thread below
            failures.append(exc)

    threads = [threading.Thread(target=instance, args=(name,)) for name in ("one", "two")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not failures, failures
    with Store.open(postgres_url) as store:
        runs = {task_id: store.tasks.runs(task_id) for task_id in ids}
        tasks = [store.tasks.get(task_id) for task_id in ids]
    assert all(len(found) == 1 and found[0].status == "ok" for found in runs.values()), runs
    assert all(t.lease_owner is None and t.next_run_at > now + 3000 for t in tasks)
    by_instance = Counter(task_id for done in executed.values() for task_id in done)
    assert sorted(by_instance) == ids and set(by_instance.values()) == {1}
    lines = (workspace / "ran.log").read_text().split()
    assert sorted(lines, key=int) == [str(n) for n in range(TASKS)]
    print(f"runs per instance: { {name: len(done) for name, done in executed.items()} }")


def finished(store: Store) -> int:
    row = store.db.query_one("SELECT COUNT(*) FROM task_runs WHERE status != 'running'")
    return int(row[0]) if row else 0


class ShiftedClock(SystemClock):
    """The real clock, ``offset`` seconds ahead: an instance that looks after the lease ran out."""

    def __init__(self, offset: float) -> None:
        self.offset = offset

    def now(self) -> float:
        return time.time() + self.offset


def test_a_runner_killed_mid_run_is_retried_once_by_another_instance(
    instance_config, postgres_url, workspace: Path, tea_home: Path
):
    (workspace / "pause").write_text("60")
    with Store.open(postgres_url) as store:
        task = TaskService(store).add(
            "slow", "interval:3600", command="echo run >> ran.log; sleep $(cat pause)", timeout=5
        )
        store.tasks.update(task.id, next_run_at=time.time() - 1)
        env = {**os.environ, "PYTHONPATH": str(ROOT), "TEA_AGENT_HOME": str(tea_home)}
        log = tea_home / "first.log"
        with log.open("wb") as output:
            first = subprocess.Popen(
                [sys.executable, "-m", "tea_agent_mini", "scheduler"],
                env=env,
                stdout=output,
                stderr=subprocess.STDOUT,
            )
        try:
            started = f"the first instance's run (its output: {log})"
            wait_for(lambda: store.tasks.runs(task.id), what=started)
            wait_for(lambda: (workspace / "ran.log").exists(), what="the command to start")
        finally:
            first.send_signal(signal.SIGKILL)
            first.wait(30)
        (run,) = store.tasks.runs(task.id)
        held = store.tasks.get(task.id)
        assert run.status == "running" and held.lease_owner.split(":")[1] == str(first.pid)
        lease = task.timeout * HARD_LIMIT_FACTOR + HARD_LIMIT_EXTRA + LEASE_MARGIN
        assert held.lease_until == pytest.approx(run.started_at + lease, abs=5)

        (workspace / "pause").write_text("0")

        async def second_instance(offset: float) -> list[int]:
            runtime = Runtime(load_config())
            executor = TaskExecutor(runtime)
            calls: list[int] = []

            async def execute(claimed):
                calls.append(claimed.id)
                return await executor(claimed)

            try:
                runner = SchedulerRunner(runtime.store, execute, ShiftedClock(offset), "second")
                await runner.tick()
                await runner.wait_idle()
                await runner.tick()  # nothing more: the occurrence ran
                await runner.wait_idle()
            finally:
                await runtime.aclose()
            return calls

        assert asyncio.run(second_instance(0.0)) == []  # the lease still holds
        assert asyncio.run(second_instance(lease + 5)) == [task.id]  # it ran out: one retry
        runs = list(reversed(store.tasks.runs(task.id)))
    assert [(r.status, r.scheduled_for) for r in runs] == [("failed", run.scheduled_for)] + [
        ("ok", run.scheduled_for)
    ]
    assert runs[0].error == f"{INTERRUPTED} (run 1 of at most 2 of this occurrence)"
    assert (workspace / "ran.log").read_text().split() == ["run", "run"]
