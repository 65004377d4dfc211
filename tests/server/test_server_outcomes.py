"""How turns ended, over real HTTP: a stopped or failed turn keeps its error and partial answer,
tool calls keep their status and duration, and the stored messages give them back."""

from __future__ import annotations

from tests.fakes.background import turn_requests
from tests.fakes.script import without_context_block
from tests.fakes.scripted_server import Reply, ToolCallSpec
from tests.server.server_helpers import read_events

SLOW_TEXT = " ".join(f"word{i}" for i in range(40))


def new_session(http) -> str:
    return http.post("/v1/sessions", json={}).json()["id"]


def send(http, session_id: str, text: str, **kwargs):
    return read_events(
        http, "POST", f"/v1/sessions/{session_id}/messages", json={"content": text}, **kwargs
    )


def stored(http, session_id: str) -> list[dict]:
    return http.get(f"/v1/sessions/{session_id}/messages").json()["data"]


def test_a_stopped_turn_keeps_its_partial_answer(http, scripted_server):
    scripted_server.push(Reply(text=SLOW_TEXT, delay=0.05, chunk_chars=4))
    sid = new_session(http)
    tokens: list[str] = []

    def three_tokens(event) -> bool:
        if event.event == "token":
            tokens.append(event.data["text"])
        return len(tokens) == 3

    send(http, sid, "tell me", until=three_tokens)
    assert http.post(f"/v1/sessions/{sid}/abort").json() == {"aborted": True}
    # the replay of the whole turn: every token it streamed before it stopped
    _, events = read_events(http, "GET", f"/v1/sessions/{sid}/events")
    assert events[-1].event == "error" and events[-1].data["kind"] == "cancelled"
    streamed = "".join(e.data["text"] for e in events if e.event == "token")
    answer = stored(http, sid)[-1]
    assert answer["role"] == "assistant" and answer["status"] == "stopped"
    assert answer["error"] == "the turn was stopped"
    assert answer["content"] == streamed and SLOW_TEXT.startswith(streamed)
    assert len(streamed) < len(SLOW_TEXT)


def test_an_upstream_error_is_stored_with_its_message(http, scripted_server):
    scripted_server.push(Reply(status=400, error_message="upstream says no"))
    sid = new_session(http)
    _, events = send(http, sid, "hi")
    assert events[-1].event == "error"
    answer = stored(http, sid)[-1]
    assert answer["status"] == "failed" and answer["content"] is None
    assert "upstream says no" in answer["error"]
    assert answer["error"] == events[-1].data["message"]


def test_a_stream_cut_short_keeps_what_arrived(http, scripted_server):
    scripted_server.push(Reply(text="half of an answer that breaks", cut_after=3, chunk_chars=4))
    sid = new_session(http)
    _, events = send(http, sid, "hi")
    streamed = "".join(e.data["text"] for e in events if e.event == "token")
    answer = stored(http, sid)[-1]
    assert streamed and answer["content"] == streamed and answer["status"] == "failed"


def test_tool_calls_keep_status_and_duration(http, scripted_server, workspace):
    (workspace / "here.txt").write_text("present\n")
    scripted_server.push(
        Reply(
            tool_calls=[
                ToolCallSpec("toolkit_file", {"action": "read", "filename": "here.txt"}),
                ToolCallSpec("toolkit_file", {"action": "read", "filename": "gone.txt"}),
            ]
        ),
        Reply(text="one of two"),
    )
    sid = new_session(http)
    _, events = send(http, sid, "read both")
    live = {e.data["call_id"]: e.data for e in events if e.event == "tool_result"}
    messages = stored(http, sid)
    tools = [m for m in messages if m["role"] == "tool"]
    assert [t["status"] for t in tools] == ["ok", "failed"]
    for tool in tools:
        assert tool["duration"] == live[tool["tool_call_id"]]["duration"] >= 0
    assert (
        tools[0]["error"] is None and tools[1]["error"] == live[tools[1]["tool_call_id"]]["error"]
    )
    assert messages[-1]["status"] == "completed" and messages[-1]["content"] == "one of two"


def test_the_model_sees_the_partial_answer_but_not_an_empty_record(http, scripted_server):
    scripted_server.push(
        Reply(status=400, error_message="no"),
        Reply(text="partial words and then", cut_after=2, chunk_chars=4),
        Reply(text="fine now"),
    )
    sid = new_session(http)
    send(http, sid, "first")
    send(http, sid, "second")
    send(http, sid, "third")
    sent = turn_requests(scripted_server)[-1]["messages"][1:]
    shown = [(m["role"], without_context_block(m["content"] or "")) for m in sent]
    partial = stored(http, sid)[3]["content"]
    assert partial and shown == [
        ("user", "first"),
        ("user", "second"),
        ("assistant", partial),
        ("user", "third"),
    ]
