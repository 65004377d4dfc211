"""Long-term memory over real HTTP: CRUD, filters, hybrid search, /v1/search, validation."""

from __future__ import annotations

import time

import pytest

COFFEE = "The user prefers dark roast coffee without sugar"
PI = "The home server is a Raspberry Pi 4 in the hallway"
TEA = "用户每天早上喝乌龙茶"


def add(http, content: str, **fields) -> dict:
    response = http.post("/v1/memory", json={"content": content, **fields})
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["action"] == "added"
    return body["memory"]


def ids(response) -> list[int]:
    assert response.status_code == 200, response.text
    return [m["id"] for m in response.json()["data"]]


def test_memory_crud_round_trip(http):
    memory = add(
        http,
        COFFEE,
        priority="high",
        importance=4,
        category="preference",
        tags=["Coffee", "drinks"],
    )
    assert memory["object"] == "memory" and memory["content"] == COFFEE
    assert (memory["priority"], memory["priority_name"]) == (1, "HIGH")
    assert memory["importance"] == 4 and memory["category"] == "preference"
    assert memory["tags"] == ["coffee", "drinks"]
    assert memory["pinned"] is False and memory["expires_at"] is None
    assert memory["expired"] is False

    url = f"/v1/memory/{memory['id']}"
    assert http.get(url).json() == memory
    assert ids(http.get("/v1/memory")) == [memory["id"]]

    patched = http.patch(
        url, json={"priority": 0, "importance": 5, "tags": "a, b", "content": "Coffee: dark"}
    )
    assert patched.status_code == 200, patched.text
    body = patched.json()
    assert (body["priority_name"], body["importance"], body["tags"]) == ("CRITICAL", 5, ["a", "b"])
    assert body["content"] == "Coffee: dark" and body["updated"] >= memory["updated"]

    pinned = http.patch(url, json={"pinned": True}).json()
    assert pinned["pinned"] is True and pinned["updated"] == body["updated"]  # not restated

    deleted = http.delete(url)
    assert deleted.status_code == 200
    assert deleted.json() == {"id": memory["id"], "object": "memory", "deleted": True}
    assert http.get(url).status_code == 404
    assert http.delete(url).status_code == 404
    assert http.patch(url, json={"pinned": False}).status_code == 404
    assert ids(http.get("/v1/memory")) == []


def test_adding_the_same_memory_again_merges_it(http):
    first = add(http, COFFEE, priority="LOW", tags=["coffee"])
    again = http.post("/v1/memory", json={"content": COFFEE, "priority": 1, "tags": ["morning"]})
    assert again.status_code == 200
    body = again.json()
    assert body["action"] == "duplicate" and body["memory"]["id"] == first["id"]
    assert body["memory"]["priority_name"] == "HIGH"  # the stronger one wins
    assert set(body["memory"]["tags"]) == {"coffee", "morning"}
    assert ids(http.get("/v1/memory")) == [first["id"]]


def test_list_filters(http):
    coffee = add(http, COFFEE, priority="HIGH", category="preference")
    pi = add(http, PI, priority="MEDIUM", category="fact", pinned=True)
    tea = add(http, TEA, priority="LOW", category="preference", expires_in_days=1)
    assert ids(http.get("/v1/memory")) == [coffee["id"], pi["id"], tea["id"]]  # by priority
    assert ids(http.get("/v1/memory?priority=medium")) == [pi["id"]]
    assert ids(http.get("/v1/memory?priority=3")) == [tea["id"]]
    assert ids(http.get("/v1/memory?category=preference")) == [coffee["id"], tea["id"]]
    assert ids(http.get("/v1/memory?pinned=true")) == [pi["id"]]
    assert ids(http.get("/v1/memory?pinned=false&category=preference")) == [
        coffee["id"],
        tea["id"],
    ]
    assert ids(http.get("/v1/memory?limit=1&offset=1")) == [pi["id"]]

    past = time.time() - 60
    expired = http.patch(f"/v1/memory/{tea['id']}", json={"expires_at": past}).json()
    assert expired["expired"] is True and expired["expires_at"] == pytest.approx(past)
    http.delete(f"/v1/memory/{coffee['id']}")
    assert ids(http.get("/v1/memory")) == [pi["id"]]
    # expired ones come back on request; soft-deleted ones never do
    assert ids(http.get("/v1/memory?include_expired=true")) == [pi["id"], tea["id"]]
    assert http.get(f"/v1/memory/{tea['id']}").json()["expired"] is True
    revived = http.patch(f"/v1/memory/{tea['id']}", json={"expires_at": None}).json()
    assert revived["expires_at"] is None and revived["expired"] is False
    assert ids(http.get("/v1/memory")) == [pi["id"], tea["id"]]


def test_query_searches_by_keywords_and_meaning(http):
    coffee = add(http, COFFEE, category="preference")
    pi = add(http, PI, category="fact")
    tea = add(http, TEA, category="preference")

    found = http.get("/v1/memory", params={"q": "which coffee does the user like"}).json()["data"]
    assert found[0]["id"] == coffee["id"] and 0 < found[0]["score"] <= 1
    assert [m["score"] for m in found] == sorted((m["score"] for m in found), reverse=True)
    assert ids(http.get("/v1/memory", params={"q": "乌龙茶"}))[0] == tea["id"]
    assert ids(http.get("/v1/memory", params={"q": "raspberry", "category": "preference"})) == []
    assert ids(http.get("/v1/memory", params={"q": "raspberry", "category": "fact"})) == [pi["id"]]
    assert ids(http.get("/v1/memory", params={"q": "zebra quantum"})) == []


def test_memories_join_the_global_search(http):
    coffee = add(http, COFFEE)
    add(http, PI)
    result = http.get("/v1/search", params={"q": "coffee"}).json()
    assert {"sessions", "messages", "memories"} <= set(result)
    assert result["memories"][0]["id"] == coffee["id"]
    assert result["memories"][0]["content"] == COFFEE and result["memories"][0]["score"] > 0
    assert http.get("/v1/search", params={"q": "nothing like it"}).json()["memories"] == []


def test_stats(http):
    add(http, COFFEE, priority="HIGH", category="preference", pinned=True)
    gone = add(http, PI, category="fact")
    http.delete(f"/v1/memory/{gone['id']}")
    stats = http.get("/v1/memory/stats").json()
    assert stats["object"] == "memory.stats"
    assert stats["active"] == 1 and stats["deleted"] == 1 and stats["pinned"] == 1
    assert stats["by_priority"] == {"HIGH": 1} and stats["by_category"] == {"preference": 1}
    assert stats["keyword_backend"] in ("fts5", "like", "tsvector") and stats["embedder"]


def assert_400(response, fragment: str) -> None:
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert fragment in error["message"], error["message"]


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({}, "'content' is required"),
        ({"content": "   "}, "must not be empty"),
        ({"content": 5}, "expected a string"),
        ({"content": "x" * 4001}, "longer than 4000"),
        ({"content": "x", "priority": "urgent"}, "CRITICAL, HIGH, MEDIUM, LOW or 0-3"),
        ({"content": "x", "priority": 7}, "CRITICAL, HIGH, MEDIUM, LOW or 0-3"),
        ({"content": "x", "importance": 9}, "must be 1-5"),
        ({"content": "x", "importance": "high"}, "expected an integer"),
        ({"content": "x", "category": "nonsense"}, "instruction, preference"),
        ({"content": "x", "tags": [1]}, "array of strings"),
        ({"content": "x", "expires_in_days": -1}, "positive number"),
        ({"content": "x", "expires_in_days": "soon"}, "expected a number"),
        ({"content": "x", "pinned": "yes"}, "true or false"),
        ({"content": "x", "colour": "red"}, "unknown field(s) colour"),
    ],
)
def test_add_validation(http, body, fragment):
    assert_400(http.post("/v1/memory", json=body), fragment)
    assert ids(http.get("/v1/memory")) == []


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({}, "nothing to change"),
        ({"priority": None}, "nothing to change"),
        ({"content": ""}, "must not be empty"),
        ({"priority": "x"}, "CRITICAL, HIGH"),
        ({"importance": 0}, "must be 1-5"),
        ({"expires_at": "tomorrow"}, "expected a number"),
        ({"expires_in_days": 3}, "unknown field(s) expires_in_days"),
    ],
)
def test_patch_validation(http, body, fragment):
    memory = add(http, COFFEE)
    assert_400(http.patch(f"/v1/memory/{memory['id']}", json=body), fragment)
    assert http.get(f"/v1/memory/{memory['id']}").json() == memory


@pytest.mark.parametrize(
    ("query", "fragment"),
    [
        ("priority=bogus", "query parameter 'priority'"),
        ("category=bogus", "query parameter 'category'"),
        ("pinned=maybe", "query parameter 'pinned'"),
        ("limit=0", "query parameter 'limit'"),
        ("limit=501", "query parameter 'limit'"),
        ("q=" + "x" * 501, "longer than 500"),
    ],
)
def test_list_validation(http, query, fragment):
    assert_400(http.get(f"/v1/memory?{query}"), fragment)


@pytest.mark.parametrize("path", ["/v1/memory/999", "/v1/memory/abc", "/v1/memory/-1"])
@pytest.mark.parametrize("method", ["GET", "PATCH", "DELETE"])
def test_unknown_memory_is_a_json_404(http, method, path):
    response = http.request(method, path, json={"pinned": True} if method == "PATCH" else None)
    assert response.status_code == 404
    error = response.json()["error"]
    assert error["type"] == "not_found_error" and path.rsplit("/", 1)[1] in error["message"]


def test_memory_needs_the_api_key_when_one_is_set(model_config, live_factory):
    live = live_factory(api_key="secret-key")
    with live.client() as client:
        assert client.get("/v1/memory").status_code == 401
        assert client.post("/v1/memory", json={"content": "x"}).status_code == 401
        authorised = client.get("/v1/memory", headers={"Authorization": "Bearer secret-key"})
        assert authorised.status_code == 200


def test_cross_origin_writes_are_refused(http):
    response = http.post(
        "/v1/memory", json={"content": COFFEE}, headers={"Origin": "https://evil.example"}
    )
    assert response.status_code == 403
    assert ids(http.get("/v1/memory")) == []


def test_openapi_documents_the_memory_routes(http):
    document = http.get("/openapi.json").json()
    memory = document["paths"]["/v1/memory"]
    assert set(memory) == {"get", "post"}
    assert memory["post"]["requestBody"]["content"]["application/json"]["schema"]["required"] == [
        "content"
    ]
    assert set(document["paths"]["/v1/memory/{id}"]) == {"get", "patch", "delete"}
    assert "404" in document["paths"]["/v1/memory/{id}"]["get"]["responses"]
    assert "get" in document["paths"]["/v1/memory/stats"]
    validator = pytest.importorskip("openapi_spec_validator")
    validator.validate(document)
