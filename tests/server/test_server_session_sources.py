"""Sessions carry their source (ui, api, task ...): the listing filter, bulk delete, and API
callers that continue one session instead of making one per request."""

from __future__ import annotations

import openai
import pytest

from tests.fakes.scripted_server import Reply, ToolCallSpec
from tests.server.server_helpers import read_events


@pytest.fixture
def client(live):
    with openai.OpenAI(base_url=live.url + "/v1", api_key="unused", max_retries=0) as client:
        yield client


def listed(http, **params) -> list[str]:
    response = http.get("/v1/sessions", params=params)
    assert response.status_code == 200, response.text
    return [s["id"] for s in response.json()["data"]]


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def test_ui_and_api_sessions_can_be_told_apart(http, client):
    ui = http.post("/v1/sessions", json={"title": "mine"}).json()
    assert ui["source"] == "ui"
    raw = client.chat.completions.with_raw_response.create(model="m", messages=[user("hi")])
    api = raw.headers["x-session-id"]
    assert http.get(f"/v1/sessions/{api}").json()["source"] == "api"
    assert listed(http, source="ui") == [ui["id"]]
    assert listed(http, source="api") == [api]
    assert set(listed(http, source="ui,api")) == set(listed(http)) == {ui["id"], api}
    bad = http.get("/v1/sessions", params={"source": "ui,web"})
    assert bad.status_code == 400 and "web" in bad.json()["error"]["message"]


def test_a_client_that_passes_session_id_keeps_one_session(http, client):
    """The way ``llm chat`` should talk to us: three turns, one session."""
    raw = client.chat.completions.with_raw_response.create(model="m", messages=[user("one")])
    session_id = raw.headers["x-session-id"]
    for text in ("two", "three"):
        again = client.chat.completions.with_raw_response.create(
            model="m", messages=[user(text)], extra_body={"session_id": session_id}
        )
        assert again.headers["x-session-id"] == session_id
    assert listed(http, source="api") == [session_id]
    assert http.get(f"/v1/sessions/{session_id}").json()["message_count"] == 6


@pytest.mark.parametrize("how", ["POST", "DELETE"])
def test_bulk_delete(http, how):
    ids = [http.post("/v1/sessions", json={"title": f"s{i}"}).json()["id"] for i in range(4)]
    body = {"ids": [*ids[:3], "missing"]}
    if how == "POST":
        response = http.post("/v1/sessions/delete", json=body)
    else:
        response = http.request("DELETE", "/v1/sessions", json=body)
    assert response.status_code == 200, response.text
    assert response.json() == {"object": "list", "deleted": ids[:3], "not_found": ["missing"]}
    assert listed(http) == [ids[3]]


@pytest.mark.parametrize(
    ("body", "fragment"),
    [({}, "ids"), ({"ids": []}, "ids"), ({"ids": [1]}, "strings"), ({"id": "x"}, "unknown")],
)
def test_bulk_delete_refuses_bad_bodies(http, body, fragment):
    response = http.post("/v1/sessions/delete", json=body)
    assert response.status_code == 400 and fragment in response.json()["error"]["message"]


def test_bulk_delete_stops_a_running_turn(http, live, scripted_server):
    live.app.state.tea.turns.heartbeat = 0.05
    scripted_server.push(Reply(tool_calls=[ToolCallSpec("toolkit_exec", {"command": "sleep 5"})]))
    session_id = http.post("/v1/sessions", json={}).json()["id"]
    with http.stream("POST", f"/v1/sessions/{session_id}/messages", json={"content": "nap"}):
        pass  # the turn runs on without the stream
    assert http.get(f"/v1/sessions/{session_id}").json()["busy"]
    response = http.post("/v1/sessions/delete", json={"ids": [session_id]})
    assert response.json()["deleted"] == [session_id]
    assert not live.app.state.tea.turns.busy(session_id)
    _, events = read_events(http, "GET", f"/v1/sessions/{session_id}/events")
    assert events == []
