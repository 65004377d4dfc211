"""Background turns over real HTTP: queueing while busy, cancel, abort, resume, disconnects."""

from __future__ import annotations

import threading
import time

from tests.fakes.scripted_server import Reply
from tests.server.server_helpers import read_events, types_of

SLOW_TEXT = ("slow answer " * 6).strip()  # 71 characters, 18 chunks of 4


def slow(delay: float = 0.05) -> Reply:
    return Reply(text=SLOW_TEXT, delay=delay, chunk_chars=4)


def new_session(http) -> str:
    return http.post("/v1/sessions", json={}).json()["id"]


def send(http, session_id: str, text: str, **kwargs):
    return read_events(
        http, "POST", f"/v1/sessions/{session_id}/messages", json={"content": text}, **kwargs
    )


def wait_idle(http, session_id: str, timeout: float = 10.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        session = http.get(f"/v1/sessions/{session_id}").json()
        if not session["busy"]:
            return session
        time.sleep(0.02)
    raise AssertionError("the session stayed busy")


def test_turn_keeps_running_after_the_client_leaves(http, scripted_server):
    scripted_server.push(slow())
    sid = new_session(http)
    _, events = send(http, sid, "first", until=lambda e: e.event == "start")
    assert types_of(events) == ["start"]
    assert http.get(f"/v1/sessions/{sid}").json()["busy"] is True
    session = wait_idle(http, sid)
    assert session["message_count"] == 2
    stored = http.get(f"/v1/sessions/{sid}/messages").json()["data"]
    assert stored[-1]["content"] == SLOW_TEXT


def test_message_sent_while_busy_is_queued_then_streamed(http, scripted_server):
    scripted_server.push(slow(), Reply(text="second answer"))
    sid = new_session(http)
    send(http, sid, "first", until=lambda e: e.event == "start")
    response, events = send(http, sid, "second")
    kinds = types_of(events)
    assert kinds[0] == "queued" and events[0].data["position"] == 1
    assert kinds[1] == "start" and kinds[-1] == "done"
    assert events[-1].data["text"] == "second answer"
    assert {e.data["turn"] for e in events} == {response.headers["x-turn-id"]}
    stored = http.get(f"/v1/sessions/{sid}/messages").json()["data"]
    assert [m["content"] for m in stored] == ["first", SLOW_TEXT, "second", "second answer"]


def test_queue_listing_cancel_and_abort(http, scripted_server):
    scripted_server.push(slow(0.2))
    sid = new_session(http)
    send(http, sid, "long one", until=lambda e: e.event == "start")
    send(http, sid, "queued one", until=lambda e: e.event == "queued")
    send(http, sid, "queued two", until=lambda e: e.event == "queued")
    queue = http.get(f"/v1/sessions/{sid}/queue").json()
    assert queue["running"]["text"] == "long one"
    assert [(i["position"], i["text"]) for i in queue["data"]] == [
        (1, "queued one"),
        (2, "queued two"),
    ]
    first = queue["data"][0]["id"]
    assert http.delete(f"/v1/sessions/{sid}/queue/{first}").json()["cancelled"] == 1
    assert http.delete(f"/v1/sessions/{sid}/queue/{first}").status_code == 404
    assert http.delete(f"/v1/sessions/{sid}/queue").json() == {"cancelled": 1}
    assert http.post(f"/v1/sessions/{sid}/abort").json() == {"aborted": True}
    session = wait_idle(http, sid)
    assert http.post(f"/v1/sessions/{sid}/abort").json() == {"aborted": False}
    assert session["running"] is None and session["queued"] == 0

    _, replay = read_events(http, "GET", f"/v1/sessions/{sid}/events", params={"since": 0})
    errors = [e.data for e in replay if e.event == "error"]
    assert [e["kind"] for e in errors] == ["cancelled", "cancelled", "cancelled"]
    assert sum(e["message"] == "removed from the queue" for e in errors) == 2
    stored = http.get(f"/v1/sessions/{sid}/messages").json()["data"]
    assert [(m["role"], m["content"]) for m in stored] == [
        ("user", "long one"),
        ("assistant", None),
    ]
    assert stored[1]["status"] == "stopped" and stored[1]["error"] == "the turn was stopped"


def test_resume_with_last_event_id_and_since(http, scripted_server):
    scripted_server.push(slow())
    sid = new_session(http)
    _, head = send(http, sid, "go", until=lambda e: e.event == "token")
    last_id = head[-1].id
    _, rest = read_events(
        http, "GET", f"/v1/sessions/{sid}/events", headers={"Last-Event-ID": str(last_id)}
    )
    assert rest and all(e.id > last_id for e in rest)
    assert rest[-1].event == "done"
    tokens = [e.data["text"] for e in head + rest if e.event == "token"]
    assert "".join(tokens) == SLOW_TEXT

    _, replay = read_events(http, "GET", f"/v1/sessions/{sid}/events", params={"since": last_id})
    assert [e.id for e in replay] == [e.id for e in rest]
    _, whole = read_events(http, "GET", f"/v1/sessions/{sid}/events")
    assert whole[0].event == "start" and whole[-1].event == "done"
    bad = http.get(f"/v1/sessions/{sid}/events", params={"since": "yesterday"})
    assert bad.status_code == 400


def test_events_of_an_idle_session_end_at_once(http):
    sid = new_session(http)
    response, events = read_events(http, "GET", f"/v1/sessions/{sid}/events")
    assert response.status_code == 200 and events == []


def test_many_sessions_run_at_once(live, http, scripted_server):
    # The model holds every answer until the test lets go, so no turn can end early, and the
    # six requests it holds at once show six turns running side by side, on any machine.
    lock = threading.Lock()
    waiting = []
    all_in, release = threading.Event(), threading.Event()

    def held(request):
        with lock:
            waiting.append(request)
            if len(waiting) == 6:
                all_in.set()
        release.wait(timeout=30)
        return Reply(text=SLOW_TEXT, chunk_chars=4)

    scripted_server.on(lambda request: True, held)
    sids = [new_session(http) for _ in range(6)]
    try:
        for sid in sids:
            send(http, sid, "go", until=lambda e: e.event == "start")
        assert all_in.wait(timeout=30), f"{len(waiting)} of 6 requests reached the model"
        assert live.app.state.tea.turns.running_count() == 6
    finally:
        release.set()
    for sid in sids:
        _, events = read_events(http, "GET", f"/v1/sessions/{sid}/events")
        assert events[-1].event == "done" and events[-1].data["text"] == SLOW_TEXT


def test_quiet_streams_carry_keep_alive_comments(live, http, scripted_server):
    live.app.state.tea.turns.heartbeat = 0.05
    scripted_server.push(Reply(text="a b c d", delay=0.3, chunk_chars=2))
    sid = new_session(http)
    with http.stream("POST", f"/v1/sessions/{sid}/messages", json={"content": "x"}) as response:
        lines = list(response.iter_lines())
    assert ": ping" in lines
    assert lines.index(": ping") < lines.index("event: done")
