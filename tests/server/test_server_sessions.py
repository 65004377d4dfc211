"""Sessions over real HTTP: CRUD, stored messages with tool calls, the UI event stream, search."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.scripted_server import Reply, ToolCallSpec
from tests.server.server_helpers import read_events, types_of


def test_session_crud_round_trip(http):
    created = http.post("/v1/sessions", json={"title": "First", "system_prompt": "Be brief."})
    assert created.status_code == 201
    session = created.json()
    assert session["title"] == "First" and session["system_prompt"] == "Be brief."
    assert session["busy"] is False and session["message_count"] == 0
    assert session["total_tokens"] == 0 and session["queued"] == 0

    listed = http.get("/v1/sessions").json()
    assert [s["id"] for s in listed["data"]] == [session["id"]]

    patched = http.patch(f"/v1/sessions/{session['id']}", json={"title": "Renamed"})
    assert patched.status_code == 200 and patched.json()["title"] == "Renamed"
    reset = http.patch(f"/v1/sessions/{session['id']}", json={"system_prompt": None})
    assert reset.json()["system_prompt"] is None

    assert http.get(f"/v1/sessions/{session['id']}").json()["title"] == "Renamed"
    deleted = http.delete(f"/v1/sessions/{session['id']}")
    assert deleted.status_code == 200 and deleted.json()["deleted"] is True
    assert http.get(f"/v1/sessions/{session['id']}").status_code == 404


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/v1/sessions/nope"),
        ("PATCH", "/v1/sessions/nope"),
        ("DELETE", "/v1/sessions/nope"),
        ("GET", "/v1/sessions/nope/messages"),
        ("GET", "/v1/sessions/nope/events"),
        ("GET", "/v1/sessions/nope/queue"),
        ("DELETE", "/v1/sessions/nope/queue/abc"),
        ("POST", "/v1/sessions/nope/abort"),
        ("POST", "/v1/sessions/nope/messages"),
    ],
)
def test_unknown_session_is_a_json_404(http, method, path):
    body = {"PATCH": {"title": "x"}, "POST": {"content": "hi"}}.get(method)
    response = http.request(method, path, json=body)
    assert response.status_code == 404
    error = response.json()["error"]
    assert "nope" in error["message"] and error["type"] == "not_found_error"


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({"title": 5}, "expected a string"),
        ({"color": "red"}, "unknown field"),
        ({"title": "x" * 300}, "longer than"),
    ],
)
def test_session_create_rejects_bad_fields(http, body, fragment):
    response = http.post("/v1/sessions", json=body)
    assert response.status_code == 400
    assert fragment in response.json()["error"]["message"]


def test_send_message_streams_ui_events_and_stores_tool_calls(
    http, scripted_server, workspace: Path
):
    scripted_server.push(
        Reply(
            reasoning="I should list the files.",
            tool_calls=[ToolCallSpec("toolkit_file", {"action": "list", "filename": "."})],
        ),
        Reply(text="There is one file: a.txt", prompt_tokens=50, completion_tokens=7),
    )
    (workspace / "a.txt").write_text("hello\n")
    session = http.post("/v1/sessions", json={}).json()
    response, events = read_events(
        http, "POST", f"/v1/sessions/{session['id']}/messages", json={"content": "what is here?"}
    )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    kinds = types_of(events)
    assert kinds[0] == "start" and kinds[-1] == "done"
    assert "reasoning" in kinds and "tool_start" in kinds and "tool_result" in kinds
    ids = [e.id for e in events]
    assert all(i is not None for i in ids) and ids == sorted(ids) and len(set(ids)) == len(ids)
    assert len({e.data["turn"] for e in events}) == 1
    start = next(e.data for e in events if e.event == "tool_start")
    assert start["name"] == "toolkit_file" and '"list"' in start["arguments"]
    result = next(e.data for e in events if e.event == "tool_result")
    assert result["ok"] is True and "a.txt" in result["preview"]
    assert isinstance(result["duration"], float) and result["duration"] < 30  # seconds taken
    done = events[-1].data
    assert done["text"] == "There is one file: a.txt"
    assert "".join(e.data["text"] for e in events if e.event == "token") == done["text"]
    assert done["usage"]["completion_tokens"] >= 7 and done["context"]["tokens"] > 0

    stored = http.get(f"/v1/sessions/{session['id']}/messages").json()["data"]
    assert [m["role"] for m in stored] == ["user", "assistant", "tool", "assistant"]
    assert stored[1]["tool_calls"][0]["name"] == "toolkit_file"
    assert stored[1]["reasoning"] == "I should list the files."
    assert stored[2]["tool_call_id"] == stored[1]["tool_calls"][0]["id"]
    again = http.get(f"/v1/sessions/{session['id']}").json()
    assert again["message_count"] == 4 and again["busy"] is False
    assert again["total_tokens"] > 0 and again["title"] == "what is here?"
    last_two = http.get(f"/v1/sessions/{session['id']}/messages", params={"limit": 2}).json()
    assert [m["role"] for m in last_two["data"]] == ["tool", "assistant"]


def test_message_body_is_checked(http):
    session = http.post("/v1/sessions", json={}).json()
    url = f"/v1/sessions/{session['id']}/messages"
    assert http.post(url, json={"content": ""}).status_code == 400
    assert http.post(url, json={"content": ["x"]}).status_code == 400
    assert http.post(url, json={"content": "hi", "attachments": ["f" * 32]}).status_code == 404
    bad_profile = http.post(url, json={"content": "hi", "profile": "../etc/passwd"})
    assert bad_profile.status_code == 400
    assert http.post(url, json={"content": "hi", "profile": "ghost"}).status_code == 404


def test_model_error_ends_the_stream_with_an_error_event(http, scripted_server):
    scripted_server.push(*[Reply(status=400, error_message="bad model request")] * 4)
    session = http.post("/v1/sessions", json={}).json()
    _, events = read_events(
        http, "POST", f"/v1/sessions/{session['id']}/messages", json={"content": "hi"}
    )
    assert events[-1].event == "error"
    assert events[-1].data["kind"] == "upstream"
    assert "bad model request" in events[-1].data["message"]


def test_search_finds_sessions_and_messages(http, scripted_server):
    session = http.post("/v1/sessions", json={"title": "Gardening notes"}).json()
    read_events(
        http,
        "POST",
        f"/v1/sessions/{session['id']}/messages",
        json={"content": "tomatoes need sun"},
    )
    found = http.get("/v1/search", params={"q": "tomatoes"}).json()
    assert {m["session_id"] for m in found["messages"]} == {session["id"]}
    assert any("tomatoes" in m["snippet"] for m in found["messages"])
    # each hit names its session, whether or not the title matched too
    assert {m["session_title"] for m in found["messages"]} == {"Gardening notes"}
    assert found["sessions"] == []
    by_title = http.get("/v1/search", params={"q": "gardening"}).json()
    assert [s["id"] for s in by_title["sessions"]] == [session["id"]]
    assert http.get("/v1/search").status_code == 400
    assert http.get("/v1/search", params={"q": "x", "limit": "many"}).status_code == 400


def test_health_and_models(http, write_config, scripted_server):
    health = http.get("/health").json()
    assert health["status"] == "ok" and health["version"]
    write_config({"main_model": {"model_name": "other", "api_url": "http://x/v1"}}, "work")
    models = http.get("/v1/models").json()
    ids = [m["id"] for m in models["data"]]
    assert models["object"] == "list" and ids[0] == "scripted-model"
    assert "profile:work" in ids and "profile:default" in ids
