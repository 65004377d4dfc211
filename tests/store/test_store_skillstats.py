"""Skill statistics: loads and the outcomes of the tasks that loaded each skill."""

from __future__ import annotations


def test_uses_and_outcomes_add_up_per_skill(store):
    store.skill_stats.used("csv-rows")
    store.skill_stats.used("csv-rows")
    store.skill_stats.outcome("csv-rows", True)
    store.skill_stats.outcome("csv-rows", False)
    store.skill_stats.outcome("only-judged", True)
    stats = store.skill_stats.get("csv-rows")
    assert stats is not None
    assert (stats.uses, stats.successes, stats.failures, stats.judged) == (2, 1, 1, 2)
    assert stats.last_used is not None
    assert [s.name for s in store.skill_stats.all()] == ["csv-rows", "only-judged"]
    assert store.skill_stats.get("missing") is None
