"""Ingest with deduplication: exact hash, keyword Jaccard (same category x1.1) >= 0.3 merges,
merge rules, batch merge by cosine >= 0.92, and the cap on CRITICAL memories."""

from __future__ import annotations

import pytest

from tea_agent_mini.memory.ingest import (
    CRITICAL_CAP,
    enforce_critical_cap,
    ingest_candidates,
    merge_candidates,
    similarity,
)
from tea_agent_mini.memory.manager import MemoryManager
from tea_agent_mini.memory.model import Candidate, Priority
from tea_agent_mini.terms import keyword_terms

T0 = 1_700_000_000.0
DAY = 86400.0


@pytest.fixture
def manager(store):
    return MemoryManager(store, clock=lambda: T0)


def test_exact_duplicate_is_absorbed(manager, store):
    first = manager.add("Use Python 3.11 for new projects", priority="MEDIUM", tags=["py"])
    again = manager.add("use python 3.11  for new projects", priority="HIGH", tags=["lang"])
    assert (first.action, again.action) == ("added", "duplicate")
    assert again.memory.id == first.memory.id
    assert again.memory.priority == Priority.HIGH and again.memory.tags == ("py", "lang")
    assert store.memories.stats(T0).active == 1


def test_similar_memory_is_merged_by_the_rules(manager):
    base = manager.add(
        "The user prefers dark mode in every editor",
        priority="LOW",
        importance=2,
        category="preference",
        tags=["ui"],
        expires_in_days=30,
    ).memory
    outcome = manager.add(
        "User prefers dark mode in all editors, including VS Code",
        priority="HIGH",
        importance=4,
        category="preference",
        tags=["editor", "ui"],
        expires_in_days=10,
    )
    merged = outcome.memory
    assert outcome.action == "merged" and merged.id == base.id
    assert merged.content == "User prefers dark mode in all editors, including VS Code"  # longer
    assert merged.priority == Priority.HIGH  # stronger
    assert merged.importance == 4  # higher
    assert merged.tags == ("ui", "editor")  # union
    assert merged.expires_at == T0 + 10 * DAY  # earlier


def test_merge_keeps_the_existing_longer_content(manager):
    long = manager.add("Deploys go to the staging cluster first, then production").memory
    outcome = manager.add("Deploys go to staging first", priority="HIGH")
    assert outcome.action == "merged"
    assert outcome.memory.content == long.content and outcome.memory.priority == Priority.HIGH


def test_unrelated_memories_are_not_merged(manager):
    manager.add("The user likes green tea", category="preference")
    outcome = manager.add("The user has a cat called Miso", category="fact")
    assert outcome.action == "added"


def test_similarity_weights_the_same_category():
    a = {"tea", "green", "morning"}
    b = {"tea", "green", "evening", "cup"}
    assert similarity(a, b, False) == pytest.approx(2 / 5)
    assert similarity(a, b, True) == pytest.approx(2 / 5 * 1.1)


def test_same_category_tips_a_borderline_pair_over_the_threshold(manager):
    # 3 shared of 11 distinct terms: Jaccard 0.27 < 0.3, but x1.1 = 0.30 within a category
    first = "alpha beta gamma delta epsilon zeta eta"
    other_kind = "alpha beta gamma theta iota kappa lambda"
    same_kind = "alpha beta gamma mu nu xi omicron"
    assert similarity(keyword_terms(first), keyword_terms(other_kind), False) < 0.3
    assert similarity(keyword_terms(first), keyword_terms(same_kind), True) >= 0.3
    kept = manager.add(first, category="fact").memory
    assert manager.add(other_kind, category="general").action == "added"
    outcome = manager.add(same_kind, category="fact")
    assert outcome.action == "merged" and outcome.memory.id == kept.id


def test_chinese_near_duplicates_are_merged(manager):
    manager.add("用户喜欢喝绿茶", category="preference")
    outcome = manager.add("用户很喜欢喝绿茶，不加糖", category="preference")
    assert outcome.action == "merged"
    assert outcome.memory.content == "用户很喜欢喝绿茶，不加糖"


def test_batch_candidates_merge_by_cosine(store):
    class Embedder:
        model_name = "fixed"

        def embed(self, texts):
            # the first two point the same way (cosine 0.995), the third is orthogonal
            table = {"a": [1.0, 0.0], "b": [0.995, 0.0998749], "c": [0.0, 1.0]}
            return [table[text.split()[0]] for text in texts]

    manager = MemoryManager(store, Embedder(), clock=lambda: T0)
    batch = [
        Candidate("a likes espresso", priority=Priority.LOW, tags=("x",)),
        Candidate("b enjoys a strong espresso daily", priority=Priority.HIGH, tags=("y",)),
        Candidate("c owns a bicycle"),
    ]
    outcomes = manager.ingest(batch)
    assert [o.action for o in outcomes] == ["added", "added"]
    merged = outcomes[0].memory
    assert merged.content == "b enjoys a strong espresso daily"
    assert merged.priority == Priority.HIGH and merged.tags == ("x", "y")
    assert merged.embedding_model == "fixed"
    assert store.memories.stats(T0).active == 2


def test_merge_candidates_prefers_earlier_expiry_and_keeps_pins():
    a = Candidate("short", expires_at=None, pinned=True, importance=2)
    b = Candidate("a longer one", expires_at=T0 + 5, importance=5, category="reminder")
    merged = merge_candidates(a, b)
    assert merged.content == "a longer one" and merged.category == "reminder"
    assert merged.expires_at == T0 + 5 and merged.pinned and merged.importance == 5


def test_critical_memories_are_capped_oldest_first(store):
    clock = [T0]
    manager = MemoryManager(store, clock=lambda: clock[0])
    pinned = manager.add("rule zero is pinned", priority=0, pinned=True).memory
    rules = []
    for n in range(CRITICAL_CAP + 2):
        clock[0] = T0 + n + 1
        rules.append(manager.add(f"rule {n} {'xyzw'[n % 4] * (n + 1)}", priority=0).memory)
    live = {m.id for m in store.memories.matching(priority=0, limit=None, now=clock[0])}
    assert len(live) == CRITICAL_CAP
    assert pinned.id in live
    assert rules[0].id not in live and rules[1].id not in live and rules[2].id not in live
    assert rules[-1].id in live


def test_enforce_cap_does_nothing_under_the_cap(store):
    store.memories.add("one rule", priority=0, now=T0)
    assert enforce_critical_cap(store.memories, T0) == []


def test_ingest_skips_empty_candidates(store):
    assert ingest_candidates(store.memories, [Candidate("   ")], T0) == []


DISTINCT_FACTS = [
    ("staging server IP is 10.0.0.5", "production server IP is 10.0.0.9"),
    ("Project Apollo uses PostgreSQL", "Project Hermes uses MySQL"),
    ("Apollo uses PostgreSQL", "Project Hermes uses MySQL"),
    ("The API runs on api.example.com", "The API runs on api.example.org"),
    ("The build needs Python 3.11", "The build needs Python 3.12"),
    ("Deploy with the key of Alice", "Deploy with the key of Bob"),
]
NEAR_DUPLICATES = [
    ("The user prefers dark mode", "User prefers dark mode."),
    ("I like tea", "I really like tea"),
    ("The user's name is Ada", "User's name is Ada."),
    ("Deploys go to staging first", "Deploys go to staging first, always"),
    ("The build needs Python 3.11", "the build really needs Python 3.11"),
]


@pytest.mark.parametrize(("first", "second"), DISTINCT_FACTS)
def test_texts_with_different_facts_are_never_merged(manager, store, first, second):
    assert manager.add(first, category="fact").action == "added"
    assert manager.add(second, category="fact").action == "added"
    contents = {m.content for m in store.memories.matching(limit=None, now=T0)}
    assert contents == {first, second}


@pytest.mark.parametrize(("first", "second"), NEAR_DUPLICATES)
def test_near_duplicates_still_merge(manager, store, first, second):
    kept = manager.add(first, category="preference").memory
    outcome = manager.add(second, category="preference")
    assert outcome.action in ("merged", "duplicate") and outcome.memory.id == kept.id
    assert store.memories.stats(T0).active == 1


def test_a_batch_never_merges_different_facts_even_at_cosine_one(store):
    class SameVector:
        model_name = "flat"

        def embed(self, texts):
            return [[1.0, 0.0] for _ in texts]

    manager = MemoryManager(store, SameVector(), clock=lambda: T0)
    pairs = [*DISTINCT_FACTS[:2], NEAR_DUPLICATES[0]]
    for first, second in pairs:
        store.memories.soft_delete([m.id for m in store.memories.matching(limit=None, now=T0)], T0)
        outcomes = manager.ingest([Candidate(first), Candidate(second)])
        assert len(outcomes) == (1 if (first, second) in NEAR_DUPLICATES else 2)
