"""SchedulerRunner on a real store with a fake clock: due runs, leases, overlap, missed runs."""

from __future__ import annotations

import asyncio

import pytest

from tea_agent_mini.scheduler.runner import (
    RunResult,
    SchedulerRunner,
    TaskBusy,
    TaskNotFound,
)
from tea_agent_mini.scheduler.service import TaskService
from tea_agent_mini.store import Store
from tea_agent_mini.store.tasks import INTERRUPTED
from tests.scheduler.scheduler_helpers import HOUR, T0, FakeClock, Recorder, settle, utc


@pytest.fixture
def db_path(store_target):
    """The store, opened once or twice per test (two runners): an SQLite file or PostgreSQL."""
    return store_target


def add_task(store, clock, schedule="daily:09:00", **options):
    options.setdefault("command", "echo hi")
    return TaskService(store, clock=clock).add(
        options.pop("name", "job"), schedule, tz="UTC", **options
    )


def statuses(store, task_id):
    return [(r.status, r.scheduled_for) for r in reversed(store.tasks.runs(task_id))]


async def started(runner, store) -> None:
    """Start ``runner``; on PostgreSQL, also wait until it listens: it looks again once
    listening has begun, which a test counting its sleeps must not see halfway."""
    await runner.start()
    await until(lambda: getattr(store.db, "listening", True))


def run(coro_fn):
    return asyncio.run(coro_fn())


async def until(condition) -> None:
    for _ in range(5000):
        if condition():
            return
        await asyncio.sleep(0.001)
    raise AssertionError("condition not reached")


def test_a_due_run_fires_once_at_its_time(db_path):
    async def main():
        clock = FakeClock()
        recorder = Recorder()
        recorder.clock = clock
        with Store.open(db_path) as store:
            task = add_task(store, clock)
            assert task.next_run_at == utc("2026-01-05 09:00")
            runner = SchedulerRunner(store, recorder, clock, "me")
            assert await runner.tick() == utc("2026-01-05 09:00")  # not due yet
            assert recorder.calls == []
            clock.t = utc("2026-01-05 09:00")
            await runner.tick()
            await runner.tick()  # running already: not started twice
            await runner.wait_idle()
            await runner.tick()
            await runner.wait_idle()
            assert recorder.calls == [(task.id, utc("2026-01-05 09:00"))]
            done = store.tasks.get(task.id)
            (only,) = store.tasks.runs(task.id)
            return done, only

    done, only = run(main)
    assert only.status == "ok" and only.output == "done" and only.exit_code == 0
    assert only.scheduled_for == only.started_at == utc("2026-01-05 09:00")
    assert done.next_run_at == utc("2026-01-06 09:00")  # recomputed after the run
    assert done.last_run_at == utc("2026-01-05 09:00") and done.last_status == "ok"
    assert done.lease_owner is None and done.lease_until == 0 and done.enabled


def test_the_lease_keeps_a_second_runner_from_running_it_too(db_path):
    async def main():
        clock = FakeClock()
        recorder = Recorder(hold=True)
        with Store.open(db_path) as first_store, Store.open(db_path) as second_store:
            task = add_task(first_store, clock)
            first = SchedulerRunner(first_store, recorder, clock, "first")
            second = SchedulerRunner(second_store, recorder, clock, "second")
            clock.t = utc("2026-01-05 09:00")
            await asyncio.gather(first.tick(), second.tick())  # both see it due and claim it
            await recorder.started.wait()
            await until(lambda: len(first.active) + len(second.active) == 1)  # one claim lost
            loser = first if not first.active else second
            lease = second_store.tasks.get(task.id)
            assert lease.lease_owner != loser.owner_id
            assert await loser.tick() == pytest.approx(lease.lease_until + 0.001)
            assert not loser.active and len(recorder.calls) == 1
            recorder.release()
            await asyncio.gather(first.wait_idle(), second.wait_idle())
            await asyncio.gather(first.tick(), second.tick())
            await asyncio.gather(first.wait_idle(), second.wait_idle())
            return len(recorder.calls), statuses(second_store, task.id)

    calls, rows = run(main)
    assert calls == 1
    assert rows == [("ok", utc("2026-01-05 09:00"))]


def test_a_task_never_overlaps_itself_and_records_what_it_skipped(db_path):
    async def main():
        clock = FakeClock()
        recorder = Recorder(hold=True)
        with Store.open(db_path) as store, Store.open(db_path) as other_store:
            task = add_task(store, clock, "interval:60")
            runner = SchedulerRunner(store, recorder, clock, "me")
            other = SchedulerRunner(other_store, recorder, clock, "other")
            clock.t = T0 + 60
            await runner.tick()
            await recorder.started.wait()
            clock.t = T0 + 200  # two more occurrences pass while it runs
            await runner.tick()
            await other.tick()
            assert not other.active and len(recorder.calls) == 1
            recorder.release()
            await asyncio.gather(runner.wait_idle(), other.wait_idle())
            return store.tasks.get(task.id), statuses(store, task.id)

    task, rows = run(main)
    assert rows == [("ok", T0 + 60), ("skipped", T0 + 120)]
    assert task.next_run_at == T0 + 240  # the grid continues after the run's end


@pytest.mark.parametrize(
    "restart_at, expected_rows, next_run",
    [
        # 5 minutes late, grace 10 minutes: runs once, late
        ("2026-01-05 09:05", [("ok", "2026-01-05 09:00")], "2026-01-06 09:00"),
        # two hours late: recorded as missed, not run
        ("2026-01-05 11:00", [("missed", "2026-01-05 09:00")], "2026-01-06 09:00"),
    ],
)
def test_a_run_missed_while_down(db_path, restart_at, expected_rows, next_run):
    async def main():
        clock = FakeClock()
        recorder = Recorder()
        with Store.open(db_path) as store:
            task = add_task(store, clock, grace_seconds=600)
            clock.t = utc(restart_at)  # the process was down until now
            runner = SchedulerRunner(store, recorder, clock, "restarted")
            await runner.tick()
            await runner.wait_idle()
            return store.tasks.get(task.id), statuses(store, task.id), recorder.calls

    task, rows, calls = run(main)
    assert rows == [(status, utc(when)) for status, when in expected_rows]
    assert len(calls) == (1 if rows[-1][0] == "ok" else 0)
    assert task.next_run_at == utc(next_run) and task.enabled


def test_missed_runs_then_the_newest_occurrence_within_grace_runs(db_path):
    async def main():
        clock = FakeClock()
        with Store.open(db_path) as store:
            task = add_task(store, clock, "hourly:00", grace_seconds=600)
            clock.t = utc("2026-01-05 12:05")  # missed 09:00 .. 11:00, 12:00 is 5 min ago
            runner = SchedulerRunner(store, Recorder(), clock, "me")
            await runner.tick()
            await runner.wait_idle()
            return store.tasks.get(task.id), statuses(store, task.id)

    task, rows = run(main)
    assert rows == [("missed", utc("2026-01-05 09:00")), ("ok", utc("2026-01-05 12:00"))]
    assert task.next_run_at == utc("2026-01-05 13:00")


@pytest.mark.parametrize("late", [0.0, 2 * HOUR])
def test_a_once_task_disables_itself(db_path, late):
    async def main():
        clock = FakeClock()
        with Store.open(db_path) as store:
            task = add_task(store, clock, "once:2026-01-05T10:00")
            clock.t = utc("2026-01-05 10:00") + late
            runner = SchedulerRunner(store, Recorder(), clock, "me")
            await runner.tick()
            await runner.wait_idle()
            assert await runner.tick() is None  # nothing left to wait for
            return store.tasks.get(task.id), statuses(store, task.id)

    task, rows = run(main)
    assert rows == [("ok" if not late else "missed", utc("2026-01-05 10:00"))]
    assert not task.enabled and task.next_run_at is None


def test_failures_are_recorded_and_the_runner_goes_on(db_path):
    async def explode(task):
        raise RuntimeError("boom")

    async def main():
        clock = FakeClock()
        with Store.open(db_path) as store:
            task = add_task(store, clock)
            broken = add_task(store, clock, name="broken")
            store.tasks.update(broken.id, schedule="daily:99:00")  # damaged behind our back
            clock.t = utc("2026-01-05 09:00")
            runner = SchedulerRunner(store, explode, clock, "me")
            await runner.tick()
            await runner.wait_idle()
            return (
                store.tasks.runs(task.id),
                store.tasks.get(broken.id),
                store.tasks.runs(broken.id),
            )

    runs, broken, broken_runs = run(main)
    assert runs[0].status == "failed" and runs[0].error == "RuntimeError: boom"
    assert broken_runs[0].status == "failed" and "invalid schedule: daily: hour 99" in (
        broken_runs[0].error or ""
    )
    assert not broken.enabled


def test_run_now_keeps_the_schedule_and_refuses_to_overlap(db_path):
    async def main():
        clock = FakeClock()
        recorder = Recorder(hold=True)
        with Store.open(db_path) as store:
            task = add_task(store, clock)
            runner = SchedulerRunner(store, recorder, clock, "me")
            first = asyncio.ensure_future(runner.run_now(task.id))
            await recorder.started.wait()
            with pytest.raises(TaskBusy):
                await runner.run_now(task.id)
            other = SchedulerRunner(store, recorder, clock, "other")
            with pytest.raises(TaskBusy, match="running already"):
                await other.run_now(task.id)  # the lease, not the runner, says no
            with pytest.raises(TaskNotFound):
                await runner.run_now(999)
            recorder.release()
            done = await first
            return done, store.tasks.get(task.id)

    done, task = run(main)
    assert done.status == "ok" and done.scheduled_for == T0 and done.started_at == T0
    assert task.next_run_at == utc("2026-01-05 09:00") and task.last_run_at == T0


def test_start_now_returns_the_run_as_it_starts_and_it_goes_on(db_path):
    async def main():
        clock = FakeClock()
        recorder = Recorder(hold=True)
        with Store.open(db_path) as store:
            task = add_task(store, clock)
            runner = SchedulerRunner(store, recorder, clock, "me")
            started = await runner.start_now(task.id)  # returns while the run is held
            assert task.id in runner.active
            with pytest.raises(TaskBusy):
                await runner.start_now(task.id)
            with pytest.raises(TaskNotFound):
                await runner.start_now(999)
            recorder.release()
            await runner.wait_idle()
            return started, store.tasks.runs(task.id, 5)

    started, runs = run(main)
    assert (started.status, started.ended_at, started.started_at) == ("running", None, T0)
    assert [(r.id, r.status) for r in runs] == [(started.id, "ok")]


def test_stop_cancels_a_run_and_the_next_start_takes_it_up(db_path):
    async def main():
        clock = FakeClock(limit=utc("2026-01-05 09:00"))
        recorder = Recorder(hold=True)
        with Store.open(db_path) as store:
            task = add_task(store, clock)
            runner = clock.runner = SchedulerRunner(store, recorder, clock, "me")
            await runner.start()
            await recorder.started.wait()
            await runner.stop(grace=0.01)
            cancelled = store.tasks.get(task.id), statuses(store, task.id)
            error = store.tasks.runs(task.id)[0].error
            again = SchedulerRunner(store, Recorder(), clock, "again")
            await again.tick()
            await again.wait_idle()
            return cancelled, error, statuses(store, task.id)

    (task, rows), error, later = run(main)
    assert rows == [("failed", utc("2026-01-05 09:00"))] and "scheduler stopped" in error
    assert task.lease_owner is None and task.next_run_at == utc("2026-01-05 09:00")
    assert later[-1] == ("ok", utc("2026-01-05 09:00"))


def test_a_run_left_behind_by_a_crash_is_closed_when_the_lease_runs_out(db_path):
    async def main():
        clock = FakeClock()
        with Store.open(db_path) as store:
            task = add_task(store, clock, timeout=10)
            due = utc("2026-01-05 09:00")
            assert store.tasks.claim(task.id, "crashed", due, due + 60)
            store.tasks.start_run(task.id, due, due)  # ... and the process died here
            runner = SchedulerRunner(store, Recorder(), clock, "me")
            clock.t = due + 30
            assert await runner.tick() == pytest.approx(due + 60, abs=0.01)  # lease still held
            clock.t = due + 61
            await runner.tick()
            await runner.wait_idle()
            return [(r.status, r.error) for r in reversed(store.tasks.runs(task.id))]

    rows = run(main)
    assert rows == [("failed", f"{INTERRUPTED} (run 1 of at most 2 of this occurrence)")] + [
        ("ok", None)
    ]


def crash_during_run(store, task_id, owner, now, lease_until):
    """What a runner that dies mid-run leaves: its lease, and a run marked running."""
    (claimed,) = store.tasks.claim_due(owner, now, lease_factor=0, lease_extra=lease_until - now)
    firing = claimed.interrupted.firing if claimed.interrupted else claimed.next_run_at
    return store.tasks.start_run(task_id, firing, now)


def test_an_interrupted_occurrence_is_retried_once_even_past_its_grace(db_path):
    async def main():
        clock = FakeClock()
        recorder = Recorder()
        recorder.clock = clock
        with Store.open(db_path) as store, Store.open(db_path) as other_store:
            # timeout 100: a lease runs 4 * 100 + 10 + 60 s, well beyond the 60 s of grace
            task = add_task(store, clock, grace_seconds=60, timeout=100)
            due = utc("2026-01-05 09:00")
            crash_during_run(other_store, task.id, "crashed", due, due + 470)
            runner = SchedulerRunner(store, recorder, clock, "me")
            clock.t = due + 471
            await runner.tick()
            await runner.wait_idle()
            return recorder.calls, store.tasks.get(task.id), statuses(store, task.id)

    calls, task, rows = run(main)
    due = utc("2026-01-05 09:00")
    assert calls == [(task.id, due + 471)]
    assert rows == [("failed", due), ("ok", due)]  # both runs are of the 09:00 occurrence
    assert task.next_run_at == utc("2026-01-06 09:00") and task.lease_owner is None


def test_an_occurrence_interrupted_twice_is_given_up_never_run_a_third_time(db_path):
    async def main():
        clock = FakeClock()
        recorder = Recorder()
        with Store.open(db_path) as store:
            task = add_task(store, clock, timeout=10)
            due = utc("2026-01-05 09:00")
            crash_during_run(store, task.id, "crashed", due, due + 60)
            crash_during_run(store, task.id, "crashed too", due + 61, due + 200)  # the retry
            runner = SchedulerRunner(store, recorder, clock, "me")
            clock.t = due + 201
            await runner.tick()
            await runner.wait_idle()
            runs = [
                (r.status, r.scheduled_for, r.error) for r in reversed(store.tasks.runs(task.id))
            ]
            return recorder.calls, store.tasks.get(task.id), runs

    calls, task, runs = run(main)
    due = utc("2026-01-05 09:00")
    assert calls == []  # not a third time
    assert [(status, when) for status, when, _ in runs] == [("failed", due), ("failed", due)]
    assert runs[1][2] == (
        f"{INTERRUPTED} (run 2 of at most 2 of this occurrence: it is given up, not retried again)"
    )
    assert task.next_run_at == utc("2026-01-06 09:00") and task.lease_owner is None


def test_a_retry_found_beyond_the_grace_after_the_lease_ran_out_is_missed(db_path):
    async def main():
        clock = FakeClock()
        recorder = Recorder()
        with Store.open(db_path) as store:
            task = add_task(store, clock, timeout=10, grace_seconds=60)
            due = utc("2026-01-05 09:00")
            crash_during_run(store, task.id, "crashed", due, due + 110)  # the runner's lease
            runner = SchedulerRunner(store, recorder, clock, "me")
            clock.t = due + 110 + 61  # the whole fleet was down for a while
            await runner.tick()
            await runner.wait_idle()
            return recorder.calls, store.tasks.get(task.id), statuses(store, task.id)

    calls, task, rows = run(main)
    due = utc("2026-01-05 09:00")
    assert calls == [] and rows == [("failed", due), ("missed", due)]
    assert task.next_run_at == utc("2026-01-06 09:00")


def test_the_started_runner_sleeps_exactly_until_the_next_run(db_path):
    async def main():
        clock = FakeClock()
        recorder = Recorder()
        recorder.clock = clock
        with Store.open(db_path) as store:
            add_task(store, clock)
            runner = SchedulerRunner(store, recorder, clock, "me", recheck_seconds=24 * HOUR)
            clock.runner = runner
            await started(runner, store)
            await settle(clock, runner, utc("2026-01-06 12:00"))
            await runner.stop()
            return recorder.calls, clock.sleeps

    calls, sleeps = run(main)
    assert [when for _, when in calls] == [utc("2026-01-05 09:00"), utc("2026-01-06 09:00")]
    assert sleeps[0] == HOUR  # 08:00 -> 09:00 in one sleep, no polling
    assert 24 * HOUR in sleeps


def test_sleeps_are_capped_to_notice_other_processes_and_cut_short_by_changes(db_path):
    async def main():
        clock = FakeClock()
        recorder = Recorder()
        recorder.clock = clock
        with Store.open(db_path) as store:
            runner = clock.runner = SchedulerRunner(
                store, recorder, clock, "me", recheck_seconds=60
            )
            await started(runner, store)
            await settle(clock, runner, T0 + 90)  # no tasks: rechecks every 60 s
            assert clock.sleeps[:2] == [60, 60]
            add_task(store, clock, "interval:45")  # added now (T0 + 90): due at T0 + 135
            await settle(clock, runner, T0 + 200)
            await runner.stop()
            return recorder.calls, clock.sleeps

    calls, sleeps = run(main)
    assert [when for _, when in calls] == [T0 + 135, T0 + 180]
    assert 45 in sleeps  # woken by the change, then slept exactly until the run


def test_poke_from_another_thread_wakes_the_runner(db_path):
    async def main():
        clock = FakeClock()
        with Store.open(db_path) as store:
            runner = SchedulerRunner(store, Recorder(), clock, "me", recheck_seconds=HOUR)
            clock.runner = runner
            await started(runner, store)
            await settle(clock, runner, T0)
            before = len(clock.sleeps)
            await asyncio.to_thread(runner.poke)
            await until(lambda: len(clock.sleeps) > before)
            await settle(clock, runner, T0)
            await runner.stop()
            runner.poke()  # after stop: a no-op
            return before, len(clock.sleeps)

    before, after = run(main)
    assert after == before + 1


def test_results_with_an_unknown_status_count_as_failed(db_path):
    async def main():
        clock = FakeClock()
        with Store.open(db_path) as store:
            task = add_task(store, clock)
            runner = SchedulerRunner(store, Recorder(RunResult("great", "x")), clock, "me")
            return await runner.run_now(task.id)

    assert run(main).status == "failed"
