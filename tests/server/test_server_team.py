"""/v1/team through the real server: spawn, clash and bad names, messages from the lead and the
answers in its inbox (peeked or read), shutdown, and a round trip across a server restart."""

from __future__ import annotations

import time

import httpx

from tests.agents.test_subagents import last_user, system_text
from tests.fakes.script import Reply

SPAWN = {"name": "alice", "role": "reviewer", "prompt": "Answer briefly."}


def answer_as_alice(scripted_server) -> None:
    scripted_server.on(
        lambda request: "You are alice, a teammate" in system_text(request),
        lambda request: Reply(text="alice on: " + last_user(request).splitlines()[-1]),
    )


def inbox(http: httpx.Client, count: int, **params) -> list[dict]:
    """The lead's unread messages once there are ``count`` (peeked until then)."""
    deadline = time.monotonic() + 10
    while True:
        page = http.get("/v1/team/inbox", params={"peek": "true"}).json()
        if len(page["data"]) >= count:
            break
        assert time.monotonic() < deadline, page
        time.sleep(0.05)
    return http.get("/v1/team/inbox", params=params).json()["data"]


def test_spawn_list_message_and_read_the_answer(http, scripted_server):
    answer_as_alice(scripted_server)
    assert http.get("/v1/team").json() == {"object": "list", "data": [], "has_more": False}

    created = http.post("/v1/team", json=SPAWN)
    assert created.status_code == 201, created.text
    member = created.json()
    assert member["name"] == "alice" and member["status"] == "idle" and member["unread"] == 0
    assert member["agent"] is None and member["topic_id"]
    listed = http.get("/v1/team").json()["data"]
    assert [m["name"] for m in listed] == ["alice"]
    assert set(listed[0]) == {"name", "role", "status", "agent", "topic_id", "unread"}

    sent = http.post("/v1/team/messages", json={"to": "alice", "text": "check parser.py"})
    assert sent.status_code == 201, sent.text
    assert sent.json()["sender"] == "lead" and sent.json()["kind"] == "message"

    (peeked,) = inbox(http, 1, peek="true")
    assert peeked["sender"] == "alice" and peeked["text"] == "alice on: check parser.py"
    assert peeked["read_at"] is None
    (read,) = http.get("/v1/team/inbox", params={"address": "lead"}).json()["data"]
    assert read["id"] == peeked["id"]
    assert http.get("/v1/team/inbox").json()["data"] == []
    # alice's own session holds the exchange
    messages = http.get(f"/v1/sessions/{member['topic_id']}/messages").json()["data"]
    assert [m["role"] for m in messages][-2:] == ["user", "assistant"]


def test_clashes_bad_names_and_unknown_teammates_are_refused(http):
    assert http.post("/v1/team", json=SPAWN).status_code == 201
    clash = http.post("/v1/team", json=SPAWN)
    assert clash.status_code == 409 and "already running" in clash.json()["error"]["message"]
    for bad in ("Alice", "lead", "no spaces", "x" * 41):
        answer = http.post("/v1/team", json={**SPAWN, "name": bad})
        assert answer.status_code == 400 and "is not valid" in answer.json()["error"]["message"]
    no_role = http.post("/v1/team", json={"name": "bob"})
    assert no_role.status_code == 400 and "needs a role" in no_role.json()["error"]["message"]
    assert http.post("/v1/team", json={"role": "x"}).status_code == 400

    unknown = http.post("/v1/team/messages", json={"to": "nobody", "text": "hi"})
    assert unknown.status_code == 404
    bad_kind = http.post("/v1/team/messages", json={"to": "alice", "text": "hi", "kind": "x"})
    assert bad_kind.status_code == 400
    assert http.delete("/v1/team/nobody").status_code == 404
    assert [m["name"] for m in http.get("/v1/team").json()["data"]] == ["alice"]


def test_delete_asks_a_teammate_to_stop(http):
    http.post("/v1/team", json=SPAWN)
    stopped = http.delete("/v1/team/alice")
    assert stopped.status_code == 202 and stopped.json()["requested"] is True
    (response,) = inbox(http, 1)
    assert response["kind"] == "shutdown_response" and response["sender"] == "alice"
    deadline = time.monotonic() + 10
    while http.get("/v1/team").json()["data"][0]["status"] != "shutdown":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    again = http.delete("/v1/team/alice")
    assert again.status_code == 202 and again.json()["requested"] is False


def test_a_round_trip_across_a_server_restart(model_config, scripted_server, live_factory):
    answer_as_alice(scripted_server)
    first = live_factory()
    with first.client() as http:
        topic = http.post("/v1/team", json=SPAWN).json()["topic_id"]
        http.post("/v1/team/messages", json={"to": "alice", "text": "the code word is teal"})
        assert inbox(http, 1)[0]["text"] == "alice on: the code word is teal"
    first.stop()

    second = live_factory()
    with second.client() as http:
        (member,) = http.get("/v1/team").json()["data"]
        assert member["status"] == "offline" and member["topic_id"] == topic
        waiting = http.post("/v1/team/messages", json={"to": "alice", "text": "the code word?"})
        assert waiting.status_code == 201
        assert http.get("/v1/team").json()["data"][0]["unread"] == 1
        revived = http.post("/v1/team", json={"name": "alice"})
        assert revived.status_code == 201 and revived.json()["topic_id"] == topic
        assert inbox(http, 1)[0]["text"] == "alice on: the code word?"
    last = [r for r in scripted_server.requests if "You are alice" in system_text(r)][-1]
    assert "the code word is teal" in " ".join(str(m["content"]) for m in last["messages"])
