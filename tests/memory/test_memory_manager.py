"""The manager's search paths and its embedder: semantic search with no endpoint configured,
hybrid search, lazy re-embedding on a model change, and which API key goes where."""

from __future__ import annotations

import pytest

from tea_agent_mini.config import Config, EmbeddingConfig, ModelConfig
from tea_agent_mini.errors import ConfigError
from tea_agent_mini.memory.embedder import FallbackEmbedder, LocalEmbedder
from tea_agent_mini.memory.embedding import build_embedder, embed_texts, same_host
from tea_agent_mini.memory.index import MemoryVectors
from tea_agent_mini.memory.manager import MemoryManager
from tests.fakes.scripted_server import ScriptedServer

T0 = 1_700_000_000.0
FACTS = [
    "The web service is deployed to a Raspberry Pi in the garage",
    "The user's daughter is learning the violin",
    "Invoices are sent to clients on the first Monday of each month",
    "用户每天早上喝一杯绿茶",
    "The database backups run every night at 2am",
]


def fill(manager):
    return {text: manager.add(text, category="fact").memory for text in FACTS}


def test_semantic_search_works_with_no_embedding_endpoint(store):
    manager = MemoryManager.from_config(store, Config(), clock=lambda: T0)
    assert isinstance(manager.embedder, LocalEmbedder)
    memories = fill(manager)
    cases = {
        "deploying on the raspberry": FACTS[0],
        "violinist daughter": FACTS[1],
        "when do clients get their invoice": FACTS[2],
        "早上喝茶": FACTS[3],
        "nightly backup of the database": FACTS[4],
    }
    for query, expected in cases.items():
        hits = manager.semantic_search(query, limit=2)
        assert hits[0][0].id == memories[expected].id, query
        assert hits[0][1] > hits[1][1]


def test_semantic_search_min_score_and_limit(store):
    manager = MemoryManager(store, clock=lambda: T0)
    fill(manager)
    assert len(manager.semantic_search("raspberry", limit=3)) == 3
    assert [m.content for m, _ in manager.semantic_search("raspberry", 5, min_score=0.2)] == [
        FACTS[0]
    ]
    assert manager.semantic_search("   ") == []


def test_hybrid_search_blends_keywords_and_vectors(store):
    manager = MemoryManager(store, clock=lambda: T0)
    memories = fill(manager)
    hits = manager.search("backups database", limit=3)
    assert hits[0][0].id == memories[FACTS[4]].id
    assert hits[0][1] > 0.5
    assert manager.search("quantum chromodynamics") == []


def test_model_change_re_embeds_lazily(store):
    old = MemoryManager(store, LocalEmbedder(256), clock=lambda: T0)
    fill(old)
    assert store.memories.stats(T0).embedded == {"local-hash-256": len(FACTS)}
    new = MemoryManager(store, LocalEmbedder(64), clock=lambda: T0)
    hits = new.semantic_search("garage raspberry", limit=1)
    assert hits[0][0].content == FACTS[0]
    assert store.memories.stats(T0).embedded == {"local-hash-64": len(FACTS)}


def test_re_embedding_goes_one_batch_at_a_time(store):
    MemoryManager(store, LocalEmbedder(256), clock=lambda: T0).add("one")
    for text in ("two", "three", "four"):
        store.memories.add(text, now=T0)  # no vector at all
    vectors = MemoryVectors(store.memories, LocalEmbedder(32), reembed_batch=3)
    assert vectors.refresh(T0) == 3
    assert vectors.refresh(T0) == 1
    assert vectors.refresh(T0) == 0
    assert store.memories.stats(T0).embedded == {"local-hash-32": 4}


def test_a_stand_in_manager_never_replaces_foreign_vectors(store):
    MemoryManager(store, LocalEmbedder(64), clock=lambda: T0).add("made by the real embedder")
    bare = store.memories.add("no vector yet", now=T0)
    stand_in = MemoryManager(store, LocalEmbedder(256), clock=lambda: T0, reembed=False)
    stand_in.search("anything")
    assert store.memories.stats(T0).embedded == {"local-hash-64": 1, "local-hash-256": 1}
    assert store.memories.get(bare.id).embedding_model == "local-hash-256"


# -- which embedder, which key ---------------------------------------------------------------


@pytest.mark.parametrize(
    "embedding",
    [EmbeddingConfig(), EmbeddingConfig(provider="local"),
     EmbeddingConfig(provider="local", api_url="http://127.0.0.1:1/v1", model="x")],
)  # fmt: skip
def test_local_embedder_unless_an_endpoint_is_configured(embedding):
    embedder = build_embedder(embedding, ModelConfig(api_url="http://h/v1", api_key="sk-main"))
    assert isinstance(embedder, LocalEmbedder) and embedder.dim == 256


def test_remote_embedder_needs_a_model_name():
    with pytest.raises(ConfigError, match="embedding.model"):
        build_embedder(EmbeddingConfig(api_url="http://127.0.0.1:1/v1"))


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/other", True),
        ("https://API.example.com/v1", "https://api.example.com:443/v2", True),
        ("http://127.0.0.1:8080/v1", "http://localhost:8080/v1", False),
        ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8081/v1", False),
        ("http://example.com/v1", "https://example.com/v1", False),
        ("", "http://example.com", False),
    ],
)
def test_same_host(a, b, same):
    assert same_host(a, b) is same


def embed_through(embedding, main):
    embedder = build_embedder(embedding, main)
    assert isinstance(embedder, FallbackEmbedder)
    try:
        model, vectors = embed_texts(embedder, ["hello world"])
    finally:
        embedder._primary.close()
    return model, vectors


def test_main_key_is_not_sent_to_another_host():
    with ScriptedServer(api_key="sk-main-secret") as server:
        other_host = server.base_url.replace("127.0.0.1", "localhost")
        main = ModelConfig(api_url=other_host, api_key="sk-main-secret")
        embedding = EmbeddingConfig(api_url=server.base_url, model="emb")
        model, _ = embed_through(embedding, main)
        # no key was sent, the server refused, the local embedder answered
        assert model == "local-hash-256"
        assert len(server.embedding_requests) == 1


def test_main_key_goes_to_the_main_models_own_host():
    with ScriptedServer(api_key="sk-main-secret") as server:
        main = ModelConfig(api_url=server.base_url, api_key="sk-main-secret")
        model, vectors = embed_through(EmbeddingConfig(api_url=server.base_url, model="emb"), main)
        assert model == "emb" and len(vectors[0]) == 64
        # provider openai without api_url: the main model's endpoint, with its key
        model, _ = embed_through(EmbeddingConfig(provider="openai", model="emb"), main)
        assert model == "emb"


def test_the_embedding_key_is_used_for_its_host():
    with ScriptedServer(api_key="sk-embed") as server:
        main = ModelConfig(api_url="https://api.example.com/v1", api_key="sk-main")
        embedding = EmbeddingConfig(api_url=server.base_url, model="emb", api_key="sk-embed")
        assert embed_through(embedding, main)[0] == "emb"


def test_semantic_search_through_a_remote_embedder(store):
    with ScriptedServer() as server:
        embedder = build_embedder(EmbeddingConfig(api_url=server.base_url, model="emb"))
        try:
            manager = MemoryManager(store, embedder, clock=lambda: T0)
            memories = fill(manager)
            assert store.memories.stats(T0).embedded == {"emb": len(FACTS)}
            hits = manager.semantic_search("backups every night", limit=1)
            assert hits[0][0].id == memories[FACTS[4]].id
        finally:
            embedder._primary.close()
