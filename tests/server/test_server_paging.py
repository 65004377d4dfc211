"""Every list route answers one bounded page: a default and a maximum ``limit``, a cursor or an
offset to the next page, ``has_more``, and a JSON 400 for values out of range."""

from __future__ import annotations

import time

import pytest

from tea_agent_mini.store import topic_scope
from tea_agent_mini.types import Message

ECHO = {"schedule": "daily:08:00", "command": "echo hi"}


def fill_session(live, count: int) -> tuple[str, list[int]]:
    store = live.runtime.store
    topic = store.topics.create(title="long").id
    roles = ("user", "assistant")
    ids = [
        store.messages.add(topic, Message(role=roles[n % 2], content=f"message {n}")).id
        for n in range(count)
    ]
    return topic, ids


def error_of(response) -> str:
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error"
    return error["message"]


def test_messages_come_a_page_at_a_time_newest_first(http, live):
    topic, ids = fill_session(live, 150)
    url = f"/v1/sessions/{topic}/messages"
    page = http.get(url).json()  # the default limit
    assert [m["id"] for m in page["data"]] == ids[-100:]
    assert page["has_more"] is True
    assert (page["first_id"], page["last_id"]) == (ids[-100], ids[-1])
    seen: list[int] = []
    cursor = {"limit": 40}
    while True:  # what the web UI does with "load earlier"
        page = http.get(url, params=cursor).json()
        seen = [m["id"] for m in page["data"]] + seen
        if not page["has_more"]:
            break
        cursor = {"limit": 40, "before": page["first_id"]}
    assert seen == ids


def test_messages_page_forwards_after_an_id(http, live):
    topic, ids = fill_session(live, 30)
    url = f"/v1/sessions/{topic}/messages"
    page = http.get(url, params={"after": ids[4], "limit": 20}).json()
    assert [m["id"] for m in page["data"]] == ids[5:25] and page["has_more"] is True
    page = http.get(url, params={"after": page["last_id"], "limit": 20}).json()
    assert [m["id"] for m in page["data"]] == ids[25:] and page["has_more"] is False
    empty = http.get(url, params={"after": ids[-1]}).json()
    assert empty == {
        "object": "list", "data": [], "has_more": False, "first_id": None, "last_id": None
    }  # fmt: skip


@pytest.mark.parametrize(
    ("path", "params", "fragment"),
    [
        ("/v1/sessions/{topic}/messages", {"limit": 0}, "'limit': expected 1-1000"),
        ("/v1/sessions/{topic}/messages", {"limit": 1001}, "'limit': expected 1-1000"),
        ("/v1/sessions/{topic}/messages", {"limit": "all"}, "'limit': expected an integer"),
        ("/v1/sessions/{topic}/messages", {"before": 0}, "'before'"),
        ("/v1/sessions/{topic}/messages", {"after": -3}, "'after'"),
        ("/v1/sessions", {"limit": 201}, "'limit': expected 1-200"),
        ("/v1/sessions", {"offset": -1}, "'offset'"),
        ("/v1/memory", {"limit": 501}, "'limit': expected 1-500"),
        ("/v1/memory", {"q": "tea", "offset": 990, "limit": 20}, "offset + limit"),
        ("/v1/tasks", {"limit": 0}, "'limit': expected 1-500"),
        ("/v1/tasks", {"offset": "x"}, "'offset': expected an integer"),
        ("/v1/notices", {"limit": 500}, "'limit': expected 1-200"),
        ("/v1/search", {"q": "tea", "limit": 101}, "'limit': expected 1-100"),
    ],
)
def test_bad_paging_values_are_a_json_400(http, live, path, params, fragment):
    topic, _ = fill_session(live, 1)
    assert fragment in error_of(http.get(path.format(topic=topic), params=params))


def test_sessions_page_by_offset(http, live):
    made = [live.runtime.store.topics.create(title=f"s{n}").id for n in range(5)]
    first = http.get("/v1/sessions", params={"limit": 2}).json()
    assert [s["id"] for s in first["data"]] == made[::-1][:2] and first["has_more"] is True
    last = http.get("/v1/sessions", params={"limit": 2, "offset": 4}).json()
    assert [s["id"] for s in last["data"]] == [made[0]] and last["has_more"] is False


def test_memories_page_and_expired_ones_page_in_sql(http, live):
    memory = live.runtime.memory
    facts = ("tomatoes need sun", "roses like clay", "basil hates frost", "mint spreads fast")
    for n, fact in enumerate((*facts, "gardening gloves live in the shed")):
        memory.add(f"{fact} (gardening)", importance=5 - n)
    gone = memory.add("an expired reminder").memory
    memory.update(gone.id, expires_at=time.time() - 60)
    first = http.get("/v1/memory", params={"limit": 3}).json()
    assert len(first["data"]) == 3 and first["has_more"] is True
    rest = http.get("/v1/memory", params={"limit": 3, "offset": 3}).json()
    assert len(rest["data"]) == 2 and rest["has_more"] is False
    everything = http.get("/v1/memory", params={"include_expired": "true", "limit": 10}).json()
    assert gone.id in [m["id"] for m in everything["data"]] and len(everything["data"]) == 6
    found = http.get("/v1/memory", params={"q": "gardening", "limit": 2}).json()
    assert len(found["data"]) == 2 and found["has_more"] is True


def test_tasks_and_their_runs_page(http, live):
    made = [http.post("/v1/tasks", json={**ECHO, "name": f"t{n}"}).json() for n in range(3)]
    page = http.get("/v1/tasks", params={"limit": 2}).json()
    assert [t["id"] for t in page["data"]] == [t["id"] for t in made[:2]] and page["has_more"]
    page = http.get("/v1/tasks", params={"limit": 2, "offset": 2}).json()
    assert [t["id"] for t in page["data"]] == [made[2]["id"]] and not page["has_more"]

    store = live.runtime.store
    task = made[0]["id"]
    runs = [store.tasks.record_run(task, "missed", float(n)).id for n in range(5)]
    url = f"/v1/tasks/{task}/runs"
    page = http.get(url, params={"limit": 3}).json()
    assert [r["id"] for r in page["data"]] == runs[::-1][:3] and page["has_more"] is True
    page = http.get(url, params={"limit": 3, "before": page["data"][-1]["id"]}).json()
    assert [r["id"] for r in page["data"]] == runs[::-1][3:] and page["has_more"] is False
    assert "'before'" in error_of(http.get(url, params={"before": "latest"}))


def test_notices_page_by_offset(http, live):
    store = live.runtime.store
    topic = store.topics.create(title="noisy").id
    notices = [
        {"title": f"n{n}", "message": "m", "urgency": "normal", "time": f"2026-01-0{n + 1}T00:00"}
        for n in range(5)
    ]
    store.state.put(topic_scope(topic), "notices", notices)
    page = http.get("/v1/notices", params={"limit": 2}).json()
    assert [n["title"] for n in page["data"]] == ["n4", "n3"] and page["has_more"] is True
    page = http.get("/v1/notices", params={"limit": 2, "offset": 4}).json()
    assert [n["title"] for n in page["data"]] == ["n0"] and page["has_more"] is False
    assert page["data"][0]["session_title"] == "noisy"


def test_openapi_documents_limits_and_cursors(http):
    document = http.get("/openapi.json").json()
    operation = document["paths"]["/v1/sessions/{id}/messages"]["get"]
    params = {p["name"]: p for p in operation["parameters"] if p["in"] == "query"}
    assert set(params) == {"limit", "before", "after"}
    assert "1000" in params["limit"]["description"] and "400" in operation["responses"]
    page = document["components"]["schemas"]["MessageList"]
    assert {"has_more", "first_id", "last_id"} <= set(page["properties"])
    for path in ("/v1/sessions", "/v1/memory", "/v1/tasks", "/v1/notices"):
        names = {p["name"] for p in document["paths"][path]["get"]["parameters"]}
        assert {"limit", "offset"} <= names, path
    validator = pytest.importorskip("openapi_spec_validator")
    validator.validate(document)
