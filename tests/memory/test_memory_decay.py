"""Decay with injected time: CRITICAL -> HIGH after 30 days, HIGH -> MEDIUM after 60, MEDIUM ->
LOW after 90, counted from the last update; pinned memories exempt; expired ones retired."""

from __future__ import annotations

import pytest

from tea_agent_mini.memory.decay import decay_memories, decayed_priority
from tea_agent_mini.memory.manager import MemoryManager
from tea_agent_mini.memory.model import Priority

T0 = 1_700_000_000.0
DAY = 86400.0


@pytest.mark.parametrize(
    ("priority", "age_days", "expected"),
    [
        (Priority.CRITICAL, 29, Priority.CRITICAL),
        (Priority.CRITICAL, 31, Priority.HIGH),
        (Priority.CRITICAL, 61, Priority.MEDIUM),
        (Priority.CRITICAL, 91, Priority.LOW),
        (Priority.HIGH, 59, Priority.HIGH),
        (Priority.HIGH, 61, Priority.MEDIUM),
        (Priority.MEDIUM, 89, Priority.MEDIUM),
        (Priority.MEDIUM, 91, Priority.LOW),
        (Priority.LOW, 1000, Priority.LOW),
    ],
)
def test_decayed_priority(priority, age_days, expected):
    assert decayed_priority(priority, age_days * DAY) == expected


def test_decay_over_time_with_an_injected_clock(store):
    clock = [T0]
    manager = MemoryManager(store, clock=lambda: clock[0])
    rule = manager.add("Always use metric units", priority="CRITICAL").memory
    pinned = manager.add("Never push to main directly", priority="CRITICAL", pinned=True).memory
    high = manager.add("Prefers pytest over unittest", priority="HIGH").memory

    clock[0] = T0 + 20 * DAY
    report = manager.decay()
    assert report.demoted == [] and report.expired == []

    clock[0] = T0 + 31 * DAY
    report = manager.decay()
    assert report.demoted == [(rule.id, Priority.CRITICAL, Priority.HIGH)]
    assert store.memories.get(rule.id).priority == Priority.HIGH
    assert store.memories.get(rule.id).updated_at == T0  # decay is not a restatement
    assert manager.decay().demoted == []  # idempotent at the same time

    clock[0] = T0 + 61 * DAY
    report = manager.decay()
    assert sorted(report.demoted) == sorted(
        [(rule.id, Priority.HIGH, Priority.MEDIUM), (high.id, Priority.HIGH, Priority.MEDIUM)]
    )
    assert store.memories.get(pinned.id).priority == Priority.CRITICAL


def test_restating_a_memory_restarts_its_clock(store):
    clock = [T0]
    manager = MemoryManager(store, clock=lambda: clock[0])
    memory = manager.add("Deploys happen on Fridays", priority="HIGH").memory
    clock[0] = T0 + 50 * DAY
    assert manager.add("deploys happen on fridays", priority="HIGH").action == "duplicate"
    clock[0] = T0 + 70 * DAY
    manager.decay()
    assert store.memories.get(memory.id).priority == Priority.HIGH


def test_expired_memories_are_retired(store):
    clock = [T0]
    manager = MemoryManager(store, clock=lambda: clock[0])
    reminder = manager.add("Call the bank", category="reminder", expires_in_days=2).memory
    keep = manager.add("Lives in Lisbon").memory
    clock[0] = T0 + 3 * DAY
    assert [m.id for m in manager.matching()] == [keep.id]
    report = decay_memories(store.memories, clock[0])
    assert report.expired == [reminder.id]
    assert store.memories.get(reminder.id) is None
    assert store.memories.get(reminder.id, include_deleted=True).deleted_at == clock[0]
