"""Per-turn selection: scoring, recency steps, CRITICAL first, tier floors, item and character
limits, access stamps, and the prompt block."""

from __future__ import annotations

import random
import time

import pytest

from tea_agent_mini.memory import select
from tea_agent_mini.memory.manager import MemoryManager
from tea_agent_mini.memory.select import (
    PROMPT_HEADING,
    SelectionLimits,
    base_score,
    blend_relevance,
    format_for_prompt,
    prompt_line,
    recency_factor,
    select_memories,
)
from tea_agent_mini.store import Store
from tea_agent_mini.store.memories import Memory

NOW = 1_700_000_000.0
DAY = 86400.0


def mem(mid, priority=2, importance=3, age_days=0.0, content=None, category="general", **kw):
    stamp = NOW - age_days * DAY
    return Memory(
        id=mid,
        content=content or f"memory number {mid}",
        priority=priority,
        importance=importance,
        category=category,
        created_at=stamp,
        updated_at=stamp,
        **kw,
    )


def ids(memories):
    return [m.id for m in memories]


@pytest.mark.parametrize(
    ("age_days", "factor"),
    [(0, 1.0), (1, 1.0), (1.01, 0.9), (7, 0.9), (8, 0.7), (30, 0.7), (31, 0.5), (90, 0.5),
     (91, 0.3), (400, 0.3), (-2, 1.0)],
)  # fmt: skip
def test_recency_steps(age_days, factor):
    assert recency_factor(age_days * DAY) == factor


def test_score_formula_with_known_inputs():
    memory = mem(1, priority=1, importance=4, age_days=3)
    relevance = blend_relevance(keyword=0.6, vector=0.8)
    assert relevance == pytest.approx(0.7)
    # relevance x importance/5 x recency x (4 - priority)/4
    assert relevance * base_score(memory, NOW) == pytest.approx(0.7 * 0.8 * 0.9 * 0.75)


def test_selection_scores_with_the_tested_functions():
    rng = random.Random(13)
    pool = [
        mem(i, rng.randint(1, 3), rng.randint(1, 5), age_days=rng.uniform(-1, 200))
        for i in range(1, 301)
    ]
    keyword = {i: rng.random() for i in range(1, 301) if rng.random() < 0.6}
    vector = {i: rng.uniform(-0.5, 1.0) for i in range(1, 301) if rng.random() < 0.6}
    by_id = {m.id: m for m in pool}
    for has_query in (True, False):
        scored = select._scored(pool, keyword, vector, NOW, has_query)
        assert len(scored) == len(pool)
        for score, base, _, mid, relevance, _ in scored:
            expected = blend_relevance(keyword.get(mid, 0.0), vector.get(mid, 0.0))
            assert relevance == (expected if has_query else 1.0)
            assert base == base_score(by_id[mid], NOW)
            assert score == relevance * base


def test_changing_the_recency_steps_changes_the_selection(monkeypatch):
    old, new = mem(1, priority=1, importance=5, age_days=100), mem(2, priority=1, importance=4)
    limits = SelectionLimits(floors=())
    assert ids(select_memories([old, new], {1: 1.0, 2: 1.0}, {}, NOW, limits)) == [2, 1]
    # a fresh memory now weighs less than an old one, in the tested function and in selection
    monkeypatch.setattr(select, "RECENCY_STEPS", ((1.0, 0.1),))
    assert recency_factor(0.0) == 0.1 and recency_factor(100 * DAY) == 0.3
    assert ids(select_memories([old, new], {1: 1.0, 2: 1.0}, {}, NOW, limits)) == [1, 2]


@pytest.mark.parametrize(
    ("keyword", "vector", "expected"),
    [(0.0, 0.0, 0.0), (1.0, 1.0, 1.0), (1.0, -0.4, 0.5), (0.0, 0.5, 0.25)],
)
def test_relevance_blend(keyword, vector, expected):
    assert blend_relevance(keyword, vector) == pytest.approx(expected)


def test_order_follows_the_score():
    a = mem(1, priority=2, importance=5, age_days=40)  # 1.0 x 5/5 x 0.5 x 2/4 = 0.25
    b = mem(2, priority=1, importance=3, age_days=0)  # 0.3 x 3/5 x 1.0 x 3/4 = 0.135
    c = mem(3, priority=1, importance=5, age_days=0)  # 0.3 x 5/5 x 1.0 x 3/4 = 0.225
    keyword = {1: 1.0, 2: 0.6, 3: 0.6}
    vector = {1: 1.0}
    picked = select_memories([a, b, c], keyword, vector, NOW, SelectionLimits(floors=()))
    assert ids(picked) == [1, 3, 2]


def test_critical_first_at_most_ten_newest_first():
    critical = [mem(i, priority=0, age_days=i) for i in range(1, 13)]
    other = mem(100, priority=1)
    picked = select_memories([other, *critical], {100: 1.0}, {}, NOW)
    assert ids(picked) == [*range(1, 11), 100]


def test_tier_floors_take_irrelevant_memories_when_needed():
    pool = [mem(10 + i, priority=1) for i in range(5)]
    pool += [mem(20 + i, priority=2) for i in range(5)]
    pool += [mem(30 + i, priority=3) for i in range(5)]
    picked = select_memories(pool, {}, {}, NOW)
    tiers = [m.priority for m in picked]
    assert tiers.count(1) == 3 and tiers.count(2) == 2 and tiers.count(3) == 1
    assert len(picked) == 6


def test_floors_take_the_best_of_each_tier_and_only_what_exists():
    pool = [mem(1, priority=1, importance=1), mem(2, priority=3, importance=5)]
    pool += [mem(3, priority=3, importance=1)]
    picked = select_memories(pool, {}, {}, NOW)
    assert ids(picked) == [2, 1]  # one HIGH (all there is), the best LOW; the weaker LOW waits


def test_relevant_memories_beyond_the_floors_are_added():
    pool = [mem(i, priority=3) for i in range(1, 6)]
    keyword = {2: 1.0, 4: 0.5}
    picked = select_memories(pool, keyword, {}, NOW)
    assert ids(picked) == [2, 4]


def test_barely_relevant_memories_stay_out():
    pool = [mem(1, priority=3), mem(2, priority=3), mem(3, priority=3)]
    picked = select_memories(pool, {1: 1.0, 2: 0.1}, {3: 0.1}, NOW)  # 2 -> 0.05, 3 -> 0.05
    assert ids(picked) == [1]


def test_at_most_thirty_memories():
    pool = [mem(i, priority=2) for i in range(1, 61)]
    picked = select_memories(pool, {i: 1.0 for i in range(1, 61)}, {}, NOW)
    assert len(picked) == 30


def test_character_budget_counts_the_injected_lines():
    pool = [mem(i, priority=1, content="x" * 900) for i in range(1, 10)]
    picked = select_memories(pool, {i: 1.0 for i in range(1, 10)}, {}, NOW)
    assert len(picked) == 4  # 4 x (~916 chars) fits in 4000, a fifth does not
    assert sum(len(prompt_line(m)) + 1 for m in picked) <= 4000


def test_a_long_memory_is_skipped_but_shorter_ones_still_fit():
    pool = [mem(1, priority=1, content="y" * 3900), mem(2, priority=1), mem(3, priority=1)]
    limits = SelectionLimits(max_chars=500)
    picked = select_memories(pool, {1: 1.0, 2: 0.5, 3: 0.5}, {}, NOW, limits)
    assert set(ids(picked)) == {2, 3}


def test_without_a_query_importance_recency_and_priority_decide():
    pool = [mem(1, priority=3, importance=5), mem(2, priority=1, importance=5, age_days=100)]
    pool += [mem(3, priority=1, importance=5)]
    picked = select_memories(pool, {}, {}, NOW, SelectionLimits(floors=()), has_query=False)
    assert ids(picked) == [3, 1, 2]  # 0.75, 0.25, 0.75 x 0.3 = 0.225


def test_prompt_lines_by_kind():
    until = NOW + 3 * DAY
    day = time.strftime("%Y-%m-%d", time.localtime(until))
    memories = [
        mem(1, priority=3, content="Cat is called Miso", category="fact"),
        mem(2, priority=1, content="Prefers dark mode", category="preference"),
        mem(3, priority=1, content="Dentist on Friday", category="reminder", expires_at=until),
        mem(4, priority=0, content="Always answer in English", category="preference"),
        mem(5, priority=2, content="Reply  with\nshort answers", category="instruction"),
        mem(6, priority=3, content="Likes hiking"),
    ]
    block = format_for_prompt(memories)
    assert block.splitlines() == [
        PROMPT_HEADING,
        "- [must follow] Always answer in English",
        "- [must follow] Reply with short answers",
        f"- [reminder, until {day}] Dentist on Friday",
        "- [preference] Prefers dark mode",
        "- [fact] Cat is called Miso",
        "- [note] Likes hiking",
    ]


def test_no_memories_no_block():
    assert format_for_prompt([]) == ""


def test_select_for_turn_marks_the_chosen_as_accessed(tmp_path):
    clock = [NOW]
    with Store.open(tmp_path / "chat.db") as store:
        manager = MemoryManager(store, clock=lambda: clock[0])
        rule = manager.add("Always answer in English", priority="CRITICAL").memory
        tea = manager.add("The user drinks green tea every morning", priority=3).memory
        cat = manager.add("The user has a cat called Miso", priority=3).memory
        chosen = manager.select_for_turn("what tea should I drink this morning")
        assert ids(chosen) == [rule.id, tea.id]
        assert store.memories.get(rule.id).last_accessed_at == NOW
        assert store.memories.get(tea.id).last_accessed_at == NOW
        assert store.memories.get(cat.id).last_accessed_at is None
        block = manager.prompt_block("green tea")
        assert "- [must follow] Always answer in English" in block
        assert "green tea every morning" in block and "Miso" not in block
