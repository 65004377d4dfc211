"""The shared turns' tables (issue 17, store/turn_log.py): events, queue and leases."""

from __future__ import annotations

import time


def test_events_are_read_back_after_an_id_and_trimmed_to_the_last_turns(store):
    topic = store.topics.create("t").id
    log = store.turn_log
    log.append([(topic, i, f"turn{i // 10}", f'{{"n": {i}}}') for i in range(1, 41)])
    assert log.last_id(topic) == 40
    assert [e.id for e in log.after(topic, 35)] == [36, 37, 38, 39, 40]
    assert log.turn_start_id(topic) == 39  # turn4 is 40 only
    log.trim(topic, 2)
    assert {e.turn for e in log.after(topic, 0)} == {"turn3", "turn4"}
    log.append([(topic, 40, "again", "{}")])  # a repeated id is ignored
    assert log.after(topic, 39)[0].turn == "turn4"


def test_the_queue_runs_under_one_lease_at_a_time(store):
    topic = store.topics.create("t").id
    log = store.turn_log
    assert log.enqueue(topic, "i1", '{"id": "i1"}') == 0
    assert log.enqueue(topic, "i2", '{"id": "i2"}') == 1
    assert log.busy(topic)
    assert log.claim(topic, "A", 30).taken
    assert not log.claim(topic, "B", 30).taken
    assert log.next_item(topic, "A", 30) == '{"id": "i1"}'
    assert log.running(topic) == "i1"
    assert [r[0] for r in log.queued(topic)] == ["i2"]
    assert log.cancel(topic, "i2") and not log.cancel(topic, "i2")
    assert log.next_item(topic, "A", 30) is None  # empty: the lease is released
    assert not log.busy(topic) and log.running(topic) is None
    assert log.orphans() == []


def test_an_expired_lease_is_taken_over_with_its_dead_turn(store):
    topic = store.topics.create("t").id
    log = store.turn_log
    log.append([(topic, 7, "i1", "{}")])
    log.enqueue(topic, "i1", "{}")
    log.enqueue(topic, "i2", "{}")
    assert log.claim(topic, "A", 0.05).taken
    assert log.next_item(topic, "A", 0.05) == "{}"
    time.sleep(0.1)  # A is gone: nobody renews
    assert log.orphans() == [topic]
    claim = log.claim(topic, "B", 30)
    assert claim.taken and claim.dead_turn == "i1" and claim.last_id == 7
    assert log.renew("B", 30) == [topic] and log.renew("A", 30) == []
    assert log.next_item(topic, "B", 30) == "{}" and log.running(topic) == "i2"
