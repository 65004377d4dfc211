"""TaskRepository: rows, leases, runs, pruning, cascades and change listeners."""

from __future__ import annotations

import pytest

from tea_agent_mini.errors import StoreError
from tea_agent_mini.store import Store
from tea_agent_mini.store import tasks as tasks_module
from tea_agent_mini.store.tasks import INTERRUPTED, OUTPUT_LIMIT, Interrupted, cap_output

NOW = 1_000_000.0


def add(store, name="job", **fields):
    values = {"kind": "shell", "schedule": "hourly:00", "command": "true", "next_run_at": NOW}
    return store.tasks.add(name=name, **{**values, **fields}, now=NOW - 100)


def test_add_get_find_list_and_search(store):
    task = add(store, "Backup", command="tar czf b.tgz docs")
    other = add(store, "report", kind="prompt", command=None, prompt="Summarise the logs")
    assert store.tasks.get(task.id) == task
    assert store.tasks.find("backup").id == task.id and store.tasks.find("nope") is None
    assert task.created_at == task.updated_at == task.anchor_at == NOW - 100
    assert task.text == "tar czf b.tgz docs" and other.text == "Summarise the logs"
    assert [t.name for t in store.tasks.matching()] == ["Backup", "report"]
    assert [t.name for t in store.tasks.matching(query="LOGS")] == ["report"]
    assert [t.name for t in store.tasks.matching(query="b.tgz")] == ["Backup"]
    with pytest.raises(StoreError, match="already exists"):
        add(store, "BACKUP")


def test_update_checks_fields_and_names(store):
    task = add(store)
    add(store, "other")
    updated = store.tasks.update(task.id, name="renamed", enabled=False, now=NOW)
    assert updated.name == "renamed" and not updated.enabled and updated.updated_at == NOW
    with pytest.raises(StoreError, match="cannot update task field"):
        store.tasks.update(task.id, lease_owner="me")
    with pytest.raises(StoreError, match="already exists"):
        store.tasks.update(task.id, name="Other")
    assert store.tasks.update(999, name="x") is None


def test_scheduled_lists_enabled_tasks_with_a_next_time_soonest_first(store):
    late = add(store, "late", next_run_at=NOW + 50)
    add(store, "off", enabled=False)
    add(store, "never", next_run_at=None)
    soon = add(store, "soon", next_run_at=NOW + 10)
    assert [t.id for t in store.tasks.scheduled()] == [soon.id, late.id]


def test_claim_is_exclusive_until_release(store_target):
    with Store.open(store_target) as one, Store.open(store_target) as two:
        task = add(one)  # due at NOW
        assert two.tasks.claim(task.id, "b", NOW - 1, NOW + 60) is None  # not due yet
        assert one.tasks.claim(task.id, "a", NOW, NOW + 60).lease_owner == "a"
        held = two.tasks.get(task.id)
        assert held.lease_owner == "a" and held.lease_until == NOW + 60
        assert two.tasks.claim(task.id, "b", NOW + 30, NOW + 90) is None
        assert two.tasks.claim(task.id, "b", NOW + 30, NOW + 90, due_only=False) is None
        assert not two.tasks.release(task.id, "b")  # not b's lease: nothing changes
        assert two.tasks.get(task.id).lease_owner == "a"
        assert one.tasks.release(
            task.id, "a", last_run_at=NOW, reschedule=True, next_run_at=NOW + 3600
        )
        assert two.tasks.claim(task.id, "b", NOW + 30, NOW + 90) is None  # no longer due
        assert two.tasks.claim(task.id, "b", NOW + 30, NOW + 90, due_only=False) is not None
        assert two.tasks.get(task.id).last_run_at == NOW


def test_an_expired_lease_can_be_taken_over_and_closes_the_orphaned_run(store):
    task = add(store)
    assert store.tasks.claim(task.id, "dead", NOW, NOW + 60)
    orphan = store.tasks.start_run(task.id, NOW, NOW)
    assert store.tasks.claim(task.id, "alive", NOW + 60, NOW + 120) is None  # "<" not "<="
    taken = store.tasks.claim(task.id, "alive", NOW + 61, NOW + 121)
    assert taken.lease_owner == "alive"
    assert taken.interrupted == Interrupted(orphan.id, NOW, NOW, attempts=1)
    assert not taken.interrupted.given_up
    closed = store.tasks.get_run(orphan.id)
    assert closed.status == "failed" and closed.ended_at == NOW + 61
    assert closed.error == f"{INTERRUPTED} (run 1 of at most 2 of this occurrence)"
    assert store.tasks.get(task.id).interrupted is None  # only a claim reports it


LEASE = {"lease_factor": 4, "lease_extra": 70}


def test_claim_due_takes_due_unleased_tasks_soonest_first_in_batches(store):
    for number in range(5):
        add(store, f"due{number}", next_run_at=NOW - number, timeout=number)
    add(store, "later", next_run_at=NOW + 1)
    add(store, "off", enabled=False)
    add(store, "never", next_run_at=None)
    held = add(store, "held")
    store.tasks.claim(held.id, "other", NOW, NOW + 60)
    first = store.tasks.claim_due("me", NOW, **LEASE, limit=3)
    assert [t.name for t in first] == ["due4", "due3", "due2"]
    assert [(t.lease_owner, t.lease_until) for t in first] == [
        ("me", NOW + 4 * timeout + 70) for timeout in (4, 3, 2)
    ]
    assert [t.name for t in store.tasks.claim_due("me", NOW, **LEASE, limit=3)] == [
        "due1",
        "due0",
    ]
    assert store.tasks.claim_due("you", NOW, **LEASE) == []
    assert store.tasks.get(held.id).lease_owner == "other"


def test_claim_due_counts_the_runs_of_an_occurrence_and_gives_it_up_after_two(store):
    task = add(store)
    (first,) = store.tasks.claim_due("dead", NOW, **LEASE)
    store.tasks.start_run(task.id, NOW, NOW)  # ... and its holder died
    expired = first.lease_until + 1
    (retry,) = store.tasks.claim_due("also dead", expired, **LEASE)
    assert retry.interrupted.attempts == 1 and not retry.interrupted.given_up
    store.tasks.start_run(task.id, NOW, expired)  # the retry of that occurrence ... died too
    store.tasks.record_run(task.id, "skipped", NOW)  # (other statuses do not count)
    (last,) = store.tasks.claim_due("alive", retry.lease_until + 1, **LEASE)
    assert last.interrupted.attempts == 2 and last.interrupted.given_up
    assert last.interrupted.firing == NOW and last.interrupted.started_at == expired
    errors = [run.error for run in store.tasks.runs(task.id) if run.status == "failed"]
    assert errors[0].endswith("(run 2 of at most 2 of this occurrence: it is given up, not "
                              "retried again)")  # fmt: skip
    assert errors[1].endswith("(run 1 of at most 2 of this occurrence)")


def test_instances_claiming_at_once_never_take_the_same_task(store_target):
    import threading

    with Store.open(store_target) as setup:
        for number in range(60):
            add(setup, f"t{number}")
    taken: dict[str, list[int]] = {}

    def claim(owner: str, start: threading.Barrier) -> None:
        with Store.open(store_target) as mine:
            start.wait()
            got: list[int] = []
            while batch := mine.tasks.claim_due(owner, NOW, **LEASE, limit=4):
                got += [t.id for t in batch]
            taken[owner] = got

    start = threading.Barrier(3)
    threads = [threading.Thread(target=claim, args=(f"i{n}", start)) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    every = [task_id for got in taken.values() for task_id in got]
    assert len(taken) == 3 and len(every) == 60 and len(set(every)) == 60


def test_release_without_a_next_time_disables_the_task(store):
    task = add(store)
    store.tasks.claim(task.id, "me", NOW, NOW + 60)
    assert store.tasks.release(task.id, "me", topic_id=None, reschedule=True, next_run_at=None)
    done = store.tasks.get(task.id)
    assert not done.enabled and done.next_run_at is None and done.lease_owner is None


def test_release_all_drops_only_the_owners_leases(store):
    mine, theirs = add(store, "mine"), add(store, "theirs")
    store.tasks.claim(mine.id, "me", NOW, NOW + 60)
    store.tasks.claim(theirs.id, "them", NOW, NOW + 60)
    assert store.tasks.release_all("me") == 1
    assert store.tasks.get(mine.id).lease_owner is None
    assert store.tasks.get(theirs.id).lease_owner == "them"


def test_runs_are_recorded_finished_capped_and_listed_newest_first(store):
    task = add(store)
    run = store.tasks.start_run(task.id, NOW, NOW + 1)
    assert run.status == "running" and run.duration is None
    store.tasks.record_run(task.id, "skipped", NOW + 5, ended_at=NOW + 6, error="busy")
    done = store.tasks.finish_run(
        run.id, status="ok", ended_at=NOW + 4, exit_code=0, output="x" * (3 * OUTPUT_LIMIT)
    )
    assert done.status == "ok" and done.duration == 3 and done.exit_code == 0
    assert len(done.output) < OUTPUT_LIMIT + 100 and "characters omitted" in done.output
    assert [r.status for r in store.tasks.runs(task.id)] == ["skipped", "ok"]
    assert store.tasks.get(task.id).last_status == "skipped"
    with pytest.raises(StoreError, match="cannot finish with status 'running'"):
        store.tasks.finish_run(run.id, status="running", ended_at=NOW)
    with pytest.raises(StoreError, match="unknown run status"):
        store.tasks.record_run(task.id, "great", NOW)


def test_old_runs_are_pruned(store, monkeypatch):
    monkeypatch.setattr(tasks_module, "MAX_RUNS_PER_TASK", 3)
    task = add(store)
    for i in range(5):
        store.tasks.record_run(task.id, "missed", NOW + i)
    assert [r.scheduled_for for r in store.tasks.runs(task.id)] == [NOW + 4, NOW + 3, NOW + 2]


def test_deleting_cascades_and_deleting_the_session_unlinks_it(store):
    topic = store.topics.create("task session")
    task = add(store, kind="prompt", command=None, prompt="hi")
    store.tasks.claim(task.id, "me", NOW, NOW + 60)
    store.tasks.release(task.id, "me", topic_id=topic.id)
    assert store.tasks.get(task.id).topic_id == topic.id
    store.topics.delete(topic.id)
    assert store.tasks.get(task.id).topic_id is None
    store.tasks.record_run(task.id, "missed", NOW)
    assert store.tasks.delete(task.id) and not store.tasks.delete(task.id)
    assert store.db.query_one("SELECT COUNT(*) FROM task_runs")[0] == 0


def test_listeners_hear_scheduling_changes_until_they_unsubscribe(store):
    heard = []
    unsubscribe = store.tasks.on_change(lambda: heard.append(1))
    task = add(store)
    store.tasks.update(task.id, enabled=False)
    store.tasks.claim(task.id, "me", NOW, NOW + 60, due_only=False)  # not a scheduling change
    store.tasks.delete(task.id)
    assert len(heard) == 3
    unsubscribe()
    add(store)
    assert len(heard) == 3


def test_cap_output_keeps_head_and_tail():
    assert cap_output("short", 10) == "short"
    capped = cap_output("a" * 50 + "b" * 50, 20)
    assert capped.startswith("a" * 10) and capped.endswith("b" * 10)
    assert "[80 characters omitted]" in capped
