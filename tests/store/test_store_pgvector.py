"""Vector search ranked by pgvector where the store's database has it: the same results as the
sign codes' first pass on SQLite, vectors kept in step whoever writes them, an HNSW index per
model. Skips, saying why, where the cluster has no pgvector (Debian's PostgreSQL does not ship
it: build it from its source with postgresql-server-dev, or use PGDG's postgresql-NN-pgvector)."""

from __future__ import annotations

import random
import time

import pytest

from tea_agent_mini.memory.embedder import LocalEmbedder
from tea_agent_mini.memory.index import MemoryVectors
from tea_agent_mini.store import Store
from tea_agent_mini.vectors import normalize

DIM = 32
MODEL = LocalEmbedder(DIM).model_name


@pytest.fixture
def vector_url(postgres_cluster, empty_postgres_url):
    try:
        postgres_cluster.admin("CREATE EXTENSION vector", empty_postgres_url.rsplit("/", 1)[1])
    except Exception as exc:
        pytest.skip(f"pgvector cannot be installed in the test cluster: {exc}")
    return empty_postgres_url


def random_vectors(n: int, seed: int = 7) -> list[list[float]]:
    rng = random.Random(seed)
    return [normalize([rng.gauss(0, 1) for _ in range(DIM)]) for _ in range(n)]


def fill(store: Store, vectors: list[list[float]]) -> None:
    for number, vector in enumerate(vectors):
        store.memories.add(f"memory {number}", embedding=vector, embedding_model=MODEL)


def searcher(store: Store, rerank: int = 16) -> MemoryVectors:
    return MemoryVectors(store.memories, LocalEmbedder(DIM), rerank=rerank)


def test_pgvector_ranks_and_the_results_match_sqlite(vector_url, tmp_path):
    data = random_vectors(300)
    queries = random_vectors(10, seed=8)
    with Store.open(vector_url) as pg, Store.open(tmp_path / "chat.db") as lite:
        assert pg.db.has_pgvector
        fill(pg, data)
        fill(lite, data)
        # SQLite scores every memory exactly when the rerank covers them all
        on_pg, on_lite = searcher(pg), searcher(lite, rerank=300)
        for query in queries:
            best = sorted(range(300), key=lambda i: -sum(map(float.__mul__, query, data[i])))
            found = [memory_id for _, memory_id in on_pg.nearest(query, 5)]
            assert found == [i + 1 for i in best[:5]]  # exact: pgvector ranks every vector
            assert [m for _, m in on_lite.nearest(query, 5)] == found
        assert pg.memories.codes._set is None  # no code set in this process's memory


def test_a_changed_or_deleted_vector_is_seen_by_the_next_search(vector_url):
    data = random_vectors(20)
    with Store.open(vector_url) as store:
        fill(store, data)
        search = searcher(store)
        assert search.nearest(data[3], 1)[0][1] == 4
        store.memories.set_embedding(4, data[10], MODEL)  # memory 4 now says what 11 says
        top = {memory_id for _, memory_id in search.nearest(data[10], 2)}
        assert top == {4, 11}
        store.memories.soft_delete(11)
        assert [m for _, m in search.nearest(data[10], 1)] == [4]
        stale = store.db.query_one(
            "SELECT count(*) FROM memories WHERE embedding IS NOT NULL AND embedding_vec IS NULL"
        )
        assert stale[0] == 0


def test_another_instances_writes_get_their_vectors(vector_url):
    data = random_vectors(10)
    with Store.open(vector_url) as a, Store.open(vector_url) as b:
        searcher(b).nearest(data[0], 1)  # b sets up the column
        fill(a, data)  # a writes only the bytea; the trigger leaves the vector empty
        assert [m for _, m in searcher(b).nearest(data[7], 1)] == [8]


def test_an_hnsw_index_is_built_per_model_and_used(vector_url):
    data = random_vectors(200)
    with Store.open(vector_url) as store:
        fill(store, data)
        searcher(store).nearest(data[0], 3)
        deadline = time.monotonic() + 30
        name = None
        while time.monotonic() < deadline and name is None:
            row = store.db.query_one(
                "SELECT indexname FROM pg_indexes WHERE indexname LIKE 'memories_vec_32_%'"
            )
            name = row[0] if row else None
            time.sleep(0.1)
        assert name is not None
        plan = store.db.query(
            f"EXPLAIN SELECT id FROM memories WHERE embedding_model = '{MODEL}' "
            "AND embedding_dim = 32 "
            "ORDER BY embedding_vec::vector(32) <=> '"
            + "["
            + ",".join(["0.1"] * 32)
            + "]'::vector(32) LIMIT 5"
        )
        assert name in " ".join(str(row[0]) for row in plan)
        assert [m for _, m in searcher(store).nearest(data[5], 1)] == [6]


def test_without_pgvector_the_codes_rank(postgres_url):
    data = random_vectors(30)
    with Store.open(postgres_url) as store:
        assert not store.db.has_pgvector
        fill(store, data)
        assert [m for _, m in searcher(store).nearest(data[2], 1)] == [3]
        assert store.memories.codes._set is not None
