"""Selection and search over a bounded pool read through indexes pick what a scan of every
memory would pick; writes between turns show at once."""

from __future__ import annotations

import random

import pytest

from tea_agent_mini.memory.embedder import LocalEmbedder
from tea_agent_mini.memory.index import MemoryVectors
from tea_agent_mini.memory.manager import MemoryManager
from tea_agent_mini.memory.model import CATEGORIES
from tea_agent_mini.memory.select import select_memories
from tea_agent_mini.store import Store
from tea_agent_mini.vectors import dot, normalize, unpack

NOW = 1_700_000_000.0
DAY = 86400.0
WORDS = [
    *("tea", "coffee", "garden", "server", "deploy", "python", "docker", "backup", "invoice"),
    *("client", "travel", "music", "violin", "database", "raspberry", "editor", "theme"),
    *("meeting", "report", "weekend", "family", "camera", "keyboard", "language"),
]
QUERIES = [
    "",
    "which tea do I like",
    "deploy the python server with docker",
    "database backup every weekend",
    "violin lessons and music",
    "nothing matches xylophone",
]


@pytest.fixture
def store(tmp_path):
    with Store.open(tmp_path / "chat.db") as opened:
        yield opened


def fill(manager: MemoryManager, count: int, seed: int = 5, words=WORDS) -> None:
    rng = random.Random(seed)
    for n in range(count):
        expires = NOW + rng.uniform(-5, 5) * DAY if rng.random() < 0.1 else None
        manager.repo.add(
            " ".join(rng.choices(words, k=rng.randint(3, 9))) + f" note {n}",
            priority=rng.choices(range(4), weights=(1, 4, 10, 10))[0],
            importance=rng.randint(1, 5),
            category=rng.choice(CATEGORIES),
            expires_at=expires,
            now=NOW - rng.uniform(0, 120) * DAY,
        )
    while manager.vectors.refresh(NOW):  # vectors for all, as turns would give them
        pass


def scan_everything(manager: MemoryManager, query: str) -> list[int]:
    """Selection the way it worked before: every active memory scored, vectors exactly."""
    memories = manager.repo.active(NOW)
    keyword, vector = {}, {}
    if query.strip():
        pool = manager.candidate_pool
        keyword = manager.repo.keyword_scores(query, limit=pool, now=NOW)
        (q,) = manager.embedder.embed([query])
        scores = sorted(
            ((dot(normalize(q), unpack(m.embedding)), m.id) for m in memories if m.embedding),
            key=lambda pair: (-pair[0], pair[1]),
        )
        vector = {i: s for s, i in scores[:pool]}
    chosen = select_memories(
        memories, keyword, vector, NOW, manager.limits, has_query=bool(query.strip())
    )
    return [m.id for m in chosen]


def test_selection_equals_a_scan_of_every_memory(store):
    manager = MemoryManager(store, LocalEmbedder(64), clock=lambda: NOW)
    manager.vectors = MemoryVectors(store.memories, manager.embedder, rerank=10_000)
    fill(manager, 400)
    for query in QUERIES:
        assert [m.id for m in manager.select_for_turn(query)] == scan_everything(manager, query)


FACTS = {
    "deploying on the raspberry": "The web service is deployed to a Raspberry Pi in the garage",
    "violinist daughter": "The user's daughter is learning the violin",
    "when do clients get their invoice": "Invoices go to clients on the first Monday of a month",
    "早上喝茶": "用户每天早上喝一杯绿茶",
    "nightly backup of the database": "The database backups run every night at 2am",
}


def test_with_a_bounded_rerank_clear_matches_are_still_found(store):
    # 60 of 1000 memories scored exactly (the production default is 256 of any number)
    manager = MemoryManager(store, LocalEmbedder(256), clock=lambda: NOW)
    manager.vectors = MemoryVectors(store.memories, manager.embedder, rerank=60)
    rng = random.Random(1)
    made_up = ["".join(rng.choices("kmnstrvzpdfgh", k=2)) + rng.choice("aeiou") for _ in range(300)]
    fill(manager, 1000, words=made_up)
    facts = {query: manager.add(text).memory.id for query, text in FACTS.items()}
    for query, fact in facts.items():
        assert manager.semantic_search(query, 1)[0][0].id == fact, query
        assert fact in [m.id for m in manager.select_for_turn(query)], query


def test_search_and_semantic_search_read_only_candidates(store):
    manager = MemoryManager(store, LocalEmbedder(64), clock=lambda: NOW)
    fill(manager, 300)
    hits = manager.search("database backup weekend", limit=5)
    assert len(hits) == 5 and all("backup" in m.content or "database" in m.content for m, _ in hits)
    scores = [score for _, score in hits]
    assert scores == sorted(scores, reverse=True)
    close = manager.semantic_search("database backup weekend", limit=3)
    assert [m.id for m, _ in close] == [i for _, i in manager.vectors.search(
        "database backup weekend", 3, now=NOW)]  # fmt: skip


def test_a_new_memory_and_a_forgotten_one_show_in_the_next_selection(store):
    manager = MemoryManager(store, LocalEmbedder(64), clock=lambda: NOW)
    fill(manager, 200)
    query = "the cello teacher lives in Lisbon"
    assert manager.select_for_turn(query)  # warm: codes and caches are loaded
    added = manager.add("The cello teacher lives in Lisbon", priority=2).memory
    assert added.id in [m.id for m in manager.select_for_turn(query)]
    assert added.id == manager.semantic_search(query, limit=1)[0][0].id
    manager.forget(added.id)
    assert added.id not in [m.id for m in manager.select_for_turn(query)]
    assert added.id not in [m.id for m, _ in manager.search(query)]


def test_warming_up_loads_the_codes_before_the_first_turn(store):
    manager = MemoryManager(store, LocalEmbedder(64), clock=lambda: NOW)
    fill(manager, 50)
    fresh = MemoryManager(store, LocalEmbedder(64), clock=lambda: NOW)
    store.memories.codes.reset()
    fresh.warm()
    statements: list[str] = []
    store.db._conn.set_trace_callback(statements.append)
    fresh.select_for_turn("database backup")
    store.db._conn.set_trace_callback(None)
    assert not any("embedding_code FROM" in sql for sql in statements)
