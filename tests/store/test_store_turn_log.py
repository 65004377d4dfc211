"""The shared turns' tables (issue 17, store/turn_log.py): events, queue and leases."""

from __future__ import annotations

import time

from tea_agent_mini.store.turn_log import Holder, SessionRow


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


def test_the_state_of_a_page_of_sessions_and_who_runs_them(store):
    running, waiting, idle = (store.topics.create(t).id for t in ("r", "w", "i"))
    log = store.turn_log
    log.enqueue(running, "i1", "{}")
    log.enqueue(running, "i2", "{}")
    assert log.claim(running, "A", 30).taken and log.next_item(running, "A", 30) == "{}"
    log.enqueue(waiting, "i3", "{}")
    states = log.states([running, waiting, idle])
    assert states[running] == SessionRow(True, "i1", 1)
    assert states[waiting] == SessionRow(False, None, 1)
    assert idle not in states and log.states([]) == {}
    assert log.holder(running) == Holder("A", "i1") and log.holder(waiting) is None


def test_a_turn_whose_last_event_is_stored_leaves_its_session_idle(store):
    topic = store.topics.create("t").id
    log = store.turn_log
    log.enqueue(topic, "i1", "{}")
    assert log.claim(topic, "A", 30).taken and log.next_item(topic, "A", 30) == "{}"
    log.append([(topic, 1, "i1", '{"type": "token"}')])
    assert log.busy(topic) and log.pending(topic, "i1")
    log.append([(topic, 2, "i1", '{"type": "done"}')], ended=["i1"])
    # the holder keeps the lease (nobody else starts a turn) until it looks at the queue
    assert log.holder(topic) == Holder("A", None) and not log.claim(topic, "B", 30).taken
    assert not log.busy(topic) and not log.pending(topic, "i1")
    assert log.states([topic]) == {}
    assert log.next_item(topic, "A", 30) is None and log.holder(topic) is None


def test_commands_are_taken_once_by_their_instance(store):
    topic = store.topics.create("t").id
    log = store.turn_log
    log.send_command("c1", topic, "A", '{"kind": "abort"}')
    log.send_command("c2", topic, "B", "{}")
    assert log.take_commands("A") == [("c1", topic, '{"kind": "abort"}')]
    assert log.take_commands("A") == []
    log.drop_commands(time.time() + 1)
    assert log.take_commands("B") == []


def test_events_are_found_by_the_start_of_their_json(store):
    topic = store.topics.create("t").id
    log = store.turn_log
    asked = '{"~":"Question","id":"q1"}'
    rows = [(topic, 1, "t", asked), (topic, 2, "t", '{"~":"TextDelta"}')]
    log.append([*rows, (topic, 3, "t", '{"~":"QuestionClosed","id":"q1"}')])
    found = log.with_prefix(topic, '{"~":"Question')
    assert [e.id for e in found] == [1, 3] and found[0].event == asked
