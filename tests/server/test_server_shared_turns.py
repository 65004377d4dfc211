"""Two server instances on one PostgreSQL (issue 17): a turn started on one streams to its end
on the other after a re-attach, and a killed instance's session goes on on the other once its
lease has expired. Skips, saying why, where PostgreSQL cannot be started."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
import yaml

from tea_agent_mini.server.turn_commands import REPLY_WAIT
from tests.fakes.background import turn_requests
from tests.fakes.scripted_server import Reply, ToolCallSpec
from tests.pg import free_port
from tests.server.server_helpers import parse_sse, read_events

ROOT = Path(__file__).resolve().parents[2]
TEXT = " ".join(f"w{i:03d}" for i in range(60))  # 299 characters: 75 chunks of 4
LEASE = 2.0


@pytest.fixture
def shared_config(model_config: Path, postgres_url: str) -> Path:
    data = yaml.safe_load(model_config.read_text(encoding="utf-8"))
    data["store"] = {"url": postgres_url}
    data["server"] = {"turn_lease": LEASE}
    model_config.write_text(yaml.safe_dump(data), encoding="utf-8")
    return model_config


def new_session(client: httpx.Client) -> str:
    return client.post("/v1/sessions", json={}).json()["id"]


def tokens(events) -> str:
    return "".join(e.data["text"] for e in events if e.event == "token")


def test_a_turn_started_on_one_instance_streams_to_its_end_on_another(
    shared_config, live_factory, scripted_server
):
    a, b = live_factory(), live_factory()
    scripted_server.push(Reply(text=TEXT, delay=0.02, chunk_chars=4))
    with a.client() as on_a, b.client() as on_b:
        sid = new_session(on_a)
        _, head = read_events(
            on_a,
            "POST",
            f"/v1/sessions/{sid}/messages",
            json={"content": "go"},
            until=lambda e: e.event == "token" and len(e.data["text"]) > 0 and e.id is not None,
        )
        last = head[-1].id
        assert on_b.get(f"/v1/sessions/{sid}").status_code == 200
        _, rest = read_events(
            on_b, "GET", f"/v1/sessions/{sid}/events", headers={"Last-Event-ID": str(last)}
        )
        assert rest and rest[-1].event == "done", [e.event for e in rest]
        ids = [e.id for e in head + rest]
        assert ids == sorted(set(ids)) and rest[0].id > last
        assert tokens(head + rest) == TEXT
        assert rest[-1].data["text"] == TEXT

        # the whole turn from B, and from A, is the same stream under the same ids
        _, whole_b = read_events(on_b, "GET", f"/v1/sessions/{sid}/events")
        _, whole_a = read_events(on_a, "GET", f"/v1/sessions/{sid}/events")
        assert whole_b[0].event == "start" and whole_b[-1].event == "done"
        assert [e.id for e in whole_a] == [e.id for e in whole_b]

    # B's stream was woken by A's notifications, not by its 2 s poll
    assert b.app.state.tea.turns.notifications >= 3
    writer = a.app.state.tea.turns.writer
    print(f"events {writer.events}, rows {writer.rows_written}, writes {writer.writes}")
    # the turn's ~80 events went to the database in a handful of batched writes
    assert writer.rows_written >= 75 and writer.writes <= writer.rows_written / 3


def test_a_killed_instance_leaves_the_next_turn_to_another(
    shared_config, live_factory, scripted_server, tea_home, tmp_path
):
    port = free_port()
    env = {**os.environ, "TEA_AGENT_HOME": str(tea_home), "PYTHONPATH": str(ROOT)}
    log = (tmp_path / "a.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tea_agent_mini.server", "--port", str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        on_a = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=20.0)
        deadline = time.monotonic() + 60
        while True:
            try:
                if on_a.get("/health").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, "A did not start"
            time.sleep(0.2)
        b = live_factory()
        scripted_server.push(Reply(text=TEXT * 4, delay=0.05, chunk_chars=4))
        sid = new_session(on_a)
        _, head = read_events(
            on_a,
            "POST",
            f"/v1/sessions/{sid}/messages",
            json={"content": "first"},
            until=lambda e: e.event == "token",
        )
        time.sleep(0.3)  # a few more events stored
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)

        scripted_server.push(Reply(text="second answer"))
        with b.client() as on_b:
            started = time.monotonic()
            _, second = read_events(
                on_b, "POST", f"/v1/sessions/{sid}/messages", json={"content": "second"}
            )
            waited = time.monotonic() - started
            assert [e.event for e in second][0] == "queued"  # A's lease was still alive
            assert second[-1].event == "done" and second[-1].data["text"] == "second answer"
            assert waited < LEASE * 3 + 5

            _, whole = read_events(on_b, "GET", f"/v1/sessions/{sid}/events", params={"since": 0})
            ids = [e.id for e in whole]
            assert ids == sorted(set(ids))
            first_turn = head[0].data["turn"]
            ends = [e for e in whole if e.data.get("turn") == first_turn and e.event == "error"]
            assert [e.data["kind"] for e in ends] == ["interrupted"]
            assert ends[0].id > max(e.id for e in head)
            assert whole[-1].event == "done"

            stored = on_b.get(f"/v1/sessions/{sid}/messages").json()["data"]
            assert stored[0]["role"] == "user" and stored[0]["content"] == "first"
            assert stored[-1]["role"] == "assistant"
            assert stored[-1]["content"] == "second answer"
            assert on_b.get(f"/v1/sessions/{sid}").json()["busy"] is False
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
        log.close()


def test_the_queue_is_shared_and_a_message_cancelled_anywhere_ends_its_stream(
    shared_config, live_factory, scripted_server
):
    a, b = live_factory(), live_factory()
    scripted_server.push(Reply(text=TEXT, delay=0.02, chunk_chars=4), Reply(text="unused"))
    with a.client() as on_a, b.client() as on_b:
        sid = new_session(on_a)
        read_events(
            on_a,
            "POST",
            f"/v1/sessions/{sid}/messages",
            json={"content": "first"},
            until=lambda e: e.event == "token",
        )
        with on_b.stream("POST", f"/v1/sessions/{sid}/messages", json={"content": "2nd"}) as r:
            lines = r.iter_lines()
            queue = on_b.get(f"/v1/sessions/{sid}/queue").json()
            assert queue["running"] is not None
            assert [item["text"] for item in queue["data"]] == ["2nd"]
            item = queue["data"][0]["id"]
            assert on_a.delete(f"/v1/sessions/{sid}/queue/{item}").json()["cancelled"] == 1
            events = list(parse_sse(lines))
        assert [e.event for e in events] == ["queued", "error"]
        assert events[-1].data["kind"] == "cancelled"
        _, rest = read_events(on_b, "GET", f"/v1/sessions/{sid}/events")
        assert rest[-1].event == "done" and on_b.get(f"/v1/sessions/{sid}/queue").json() == {
            "running": None,
            "data": [],
        }


def test_openai_routes_follow_the_shared_log(shared_config, live_factory, scripted_server):
    b = live_factory()
    scripted_server.push(
        Reply(text="plain answer"), Reply(text="streamed answer"), Reply(text="unkept answer")
    )
    body = {"model": "tea", "messages": [{"role": "user", "content": "hi"}]}
    with b.client() as on_b:
        answer = on_b.post("/v1/chat/completions", json=body).json()
        assert answer["choices"][0]["message"]["content"] == "plain answer"
        _, chunks = read_events(on_b, "POST", "/v1/chat/completions", json={**body, "stream": True})
        unkept = on_b.post("/v1/chat/completions", json={**body, "store": False})
        assert unkept.json()["choices"][0]["message"]["content"] == "unkept answer"
        gone = unkept.headers["X-Session-Id"]
        deadline = time.monotonic() + 10
        while on_b.get(f"/v1/sessions/{gone}").status_code != 404:
            assert time.monotonic() < deadline, "the unkept session stayed"
            time.sleep(0.05)
    text = "".join(
        c.data["choices"][0]["delta"].get("content") or ""
        for c in chunks
        if isinstance(c.data, dict) and c.data.get("choices")
    )
    assert text == "streamed answer" and chunks[-1].data == "[DONE]"


def test_an_instance_whose_lease_was_taken_stops_its_turn(
    shared_config, live_factory, scripted_server
):
    a = live_factory()
    scripted_server.push(Reply(text=TEXT * 4, delay=0.05, chunk_chars=4))
    turns = a.app.state.tea.turns
    with a.client() as on_a:
        sid = new_session(on_a)
        read_events(
            on_a,
            "POST",
            f"/v1/sessions/{sid}/messages",
            json={"content": "go"},
            until=lambda e: e.event == "token",
        )
        store = a.runtime.store
        # as if A had stalled past its lease and B had taken the session
        store.db.execute(
            "UPDATE session_leases SET owner = ?, expires_at = ? WHERE topic_id = ?",
            ("elsewhere", time.time() + 60, sid),
        )
        deadline = time.monotonic() + LEASE * 2 + 3
        while turns.running(sid) is not None:
            assert time.monotonic() < deadline, "the turn went on without its lease"
            time.sleep(0.05)
        time.sleep(0.3)
        stored = [e.event for e in store.turn_log.after(sid, 0)]
        assert stored and not any('"~":"Error"' in event for event in stored)


def follow_in_background(client: httpx.Client, url: str, **kwargs) -> tuple[list, threading.Thread]:
    """Read a whole SSE stream in a thread; the events land in the returned list as they come."""
    events: list = []

    def run() -> None:
        read_events(client, "POST", url, until=lambda e: events.append(e) is not None, **kwargs)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return events, thread


def wait_for(check, what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def test_a_turn_running_on_one_instance_is_aborted_through_another(
    shared_config, live_factory, scripted_server
):
    a, b = live_factory(), live_factory()
    scripted_server.push(Reply(text=TEXT * 4, delay=0.05, chunk_chars=4))
    with a.client() as on_a, b.client() as on_b:
        sid = new_session(on_a)
        assert on_b.post(f"/v1/sessions/{sid}/abort").json() == {"aborted": False}
        events, reader = follow_in_background(
            on_a, f"/v1/sessions/{sid}/messages", json={"content": "go"}
        )
        wait_for(lambda: any(e.event == "token" for e in events), "the turn did not start")
        assert b.app.state.tea.turns.running(sid) is None  # it runs on A only
        started = time.monotonic()
        assert on_b.post(f"/v1/sessions/{sid}/abort").json() == {"aborted": True}
        assert time.monotonic() - started < REPLY_WAIT  # A replied (not B's fallback)
        reader.join(timeout=10)
        assert not reader.is_alive() and events[-1].event == "error"
        assert events[-1].data["kind"] == "cancelled"
        assert len(tokens(events)) < len(TEXT * 4)
        _, seen_on_b = read_events(on_b, "GET", f"/v1/sessions/{sid}/events")
        assert seen_on_b[-1].event == "error" and seen_on_b[-1].data["kind"] == "cancelled"

        scripted_server.push(Reply(text="after the abort"))
        _, after = read_events(on_b, "POST", f"/v1/sessions/{sid}/messages", json={"content": "2"})
        assert after[-1].event == "done" and after[-1].data["text"] == "after the abort"
        assert on_b.post(f"/v1/sessions/{sid}/abort").json() == {"aborted": False}


def test_deleting_a_session_through_another_instance_stops_its_turn(
    shared_config, live_factory, scripted_server
):
    # a long lease: A must hear of the deletion from B, not notice it at its next renewal
    data = yaml.safe_load(shared_config.read_text(encoding="utf-8"))
    data["server"]["turn_lease"] = 120
    shared_config.write_text(yaml.safe_dump(data), encoding="utf-8")
    a, b = live_factory(), live_factory()
    scripted_server.push(Reply(text=TEXT * 4, delay=0.05, chunk_chars=4))  # 15 s of tokens
    with a.client() as on_a, b.client() as on_b:
        sid = new_session(on_a)
        events, reader = follow_in_background(
            on_a, f"/v1/sessions/{sid}/messages", json={"content": "go"}
        )
        wait_for(lambda: any(e.event == "token" for e in events), "the turn did not start")
        assert on_b.delete(f"/v1/sessions/{sid}").json()["deleted"] is True
        reader.join(timeout=10)
        assert not reader.is_alive()
        assert len(tokens(events)) < len(TEXT * 4)  # stopped, not run to its end
        wait_for(lambda: a.app.state.tea.turns.running(sid) is None, "A still runs the turn")
        assert on_a.get(f"/v1/sessions/{sid}").status_code == 404


def test_an_approval_asked_on_one_instance_is_given_through_another(
    shared_config, live_factory, scripted_server, workspace
):
    a, b = live_factory(), live_factory()
    write = {"action": "write", "filename": "notes.txt", "content": "hello"}
    scripted_server.push(
        Reply(tool_calls=[ToolCallSpec("toolkit_file", write)]), Reply(text="Finished.")
    )
    with a.client() as on_a, b.client() as on_b:
        assert on_a.patch("/v1/config", json={"agent": {"approval": "ask"}}).status_code == 200
        sid = new_session(on_a)
        _, head = read_events(
            on_a,
            "POST",
            f"/v1/sessions/{sid}/messages",
            json={"content": "write it"},
            until=lambda e: e.event == "question",
        )
        assert head[-1].data["kind"] == "approval"
        url = f"/v1/sessions/{sid}/questions/{head[-1].data['id']}"
        assert on_b.post(url, json={"answer": "Allow"}).status_code == 200
        _, rest = read_events(
            on_b, "GET", f"/v1/sessions/{sid}/events", headers={"Last-Event-ID": str(head[-1].id)}
        )
        assert next(e.data for e in rest if e.event == "tool_result")["ok"] is True
        assert rest[-1].event == "done" and (workspace / "notes.txt").read_text() == "hello"


def test_a_question_asked_on_one_instance_is_answered_through_another(
    shared_config, live_factory, scripted_server
):
    a, b = live_factory(), live_factory()
    ask = {"question": "Which database?", "choices": ["SQLite", "Postgres"], "timeout": 30}
    scripted_server.push(
        Reply(tool_calls=[ToolCallSpec("toolkit_question", ask)]), Reply(text="Noted.")
    )
    with a.client() as on_a, b.client() as on_b:
        sid = new_session(on_a)
        _, head = read_events(
            on_a,
            "POST",
            f"/v1/sessions/{sid}/messages",
            json={"content": "set it up"},
            until=lambda e: e.event == "question",
        )
        question = head[-1].data["id"]
        url = f"/v1/sessions/{sid}/questions"
        assert on_b.post(f"{url}/nope", json={"answer": "x"}).status_code == 404
        other = new_session(on_b)
        elsewhere = on_b.post(f"/v1/sessions/{other}/questions/{question}", json={"answer": "x"})
        assert elsewhere.status_code == 404
        started = time.monotonic()
        answer = "Postgres " + "é" * 4000  # over the 8000 bytes a notification carries
        answered = on_b.post(f"{url}/{question}", json={"answer": answer})
        assert time.monotonic() - started < REPLY_WAIT  # A replied
        assert answered.status_code == 200, answered.text
        assert answered.json() == {"id": question, "status": "answered", "answer": answer}
        _, rest = read_events(
            on_b, "GET", f"/v1/sessions/{sid}/events", headers={"Last-Event-ID": str(head[-1].id)}
        )
        closed = next(e for e in rest if e.event == "question_closed")
        assert closed.data["status"] == "answered" and closed.data["answer"] == answer
        result = next(e for e in rest if e.event == "tool_result")
        assert result.data["preview"].startswith("The user answered: Postgres éé")
        assert answer in turn_requests(scripted_server)[-1]["messages"][-1]["content"]
        assert rest[-1].event == "done"
        assert on_b.post(f"{url}/{question}", json={"answer": "SQLite"}).status_code == 409
        assert on_a.post(f"{url}/{question}", json={"answer": "SQLite"}).status_code == 409


def test_busy_is_the_same_on_every_instance(shared_config, live_factory, scripted_server):
    a, b = live_factory(), live_factory()
    scripted_server.push(Reply(text=TEXT * 2, delay=0.03, chunk_chars=4))
    with a.client() as on_a, b.client() as on_b:
        sid = new_session(on_a)
        idle = new_session(on_b)
        events, reader = follow_in_background(
            on_a, f"/v1/sessions/{sid}/messages", json={"content": "go"}
        )
        wait_for(lambda: any(e.event == "token" for e in events), "the turn did not start")
        turn = events[0].data["turn"]
        for client in (on_a, on_b):
            session = client.get(f"/v1/sessions/{sid}").json()
            assert session["busy"] is True and session["running"] == turn
            listed = {s["id"]: s for s in client.get("/v1/sessions").json()["data"]}
            assert listed[sid]["busy"] is True and listed[sid]["running"] == turn
            assert listed[idle]["busy"] is False and listed[idle]["running"] is None
        reader.join(timeout=20)
        assert events[-1].event == "done"
        wait_for(
            lambda: on_b.get(f"/v1/sessions/{sid}").json()["busy"] is False,
            "the session stayed busy",
        )
        for client in (on_a, on_b):
            listed = {s["id"]: s for s in client.get("/v1/sessions").json()["data"]}
            assert listed[sid]["busy"] is False and listed[sid]["running"] is None


@pytest.mark.sqlite_only  # starts from a home whose store is its chat.db
def test_a_migrated_sqlite_home_is_used_from_both_instances(
    model_config, scripted_server, tea_home, empty_postgres_url, live_factory
):
    from tests.fakes.background import turn_requests
    from tests.test_cli import cli

    scripted_server.push(Reply(text="Noted: tabs over spaces."))
    assert cli("run", "remember: I like tabs over spaces").returncode == 0
    moved = cli("migrate", "--to", empty_postgres_url)
    assert moved.returncode == 0 and "counts match" in moved.stdout, moved.stderr
    data = yaml.safe_load(model_config.read_text(encoding="utf-8"))
    data.update(store={"url": empty_postgres_url}, server={"turn_lease": LEASE})
    model_config.write_text(yaml.safe_dump(data), encoding="utf-8")
    (tea_home / "chat.db").rename(tea_home / "chat.db.migrated")  # nothing reads it any more

    a, b = live_factory(), live_factory()
    with a.client() as on_a, b.client() as on_b:
        (session,) = on_a.get("/v1/sessions").json()["data"]
        scripted_server.push(Reply(text="You like tabs."))
        _, events = read_events(
            on_b, "POST", f"/v1/sessions/{session['id']}/messages", json={"content": "and I?"}
        )
        assert events[-1].event == "done" and events[-1].data["text"] == "You like tabs."
        sent = json.dumps(turn_requests(scripted_server)[-1]["messages"])
        assert "I like tabs over spaces" in sent  # the migrated turn is the history on B
        listed = on_a.get(f"/v1/sessions/{session['id']}/messages").json()["data"]
        texts = [m["content"] for m in listed if isinstance(m["content"], str)]
        assert texts[0] == "remember: I like tabs over spaces" and texts[-1] == "You like tabs."
