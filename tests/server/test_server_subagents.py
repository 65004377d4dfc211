"""Subagents through the server (issue 15): their events reach the web UI as ``child`` SSE events
(replayed like any other), their sessions are listed by parent, and the OpenAI-compatible routes
count their tokens but never show their text."""

from __future__ import annotations

from tea_agent_mini.server.ui_events import CHILD_PREVIEW_CHARS, ui_event
from tea_agent_mini.types import ChildEvent, Done, TextDelta, ToolResult, Usage
from tests.fakes.scripted_server import Reply, ToolCallSpec
from tests.server.server_helpers import read_events, types_of

CHILD_ANSWER = "the notes are in notes.md"


def is_explorer(request: dict) -> bool:
    first = request["messages"][0]
    return first["role"] == "system" and "You are the explorer" in first["content"]


def explorer(request: dict) -> Reply:
    if not any(m["role"] == "tool" for m in request["messages"]):
        call = ToolCallSpec("toolkit_glob", {"pattern": "*.md"})
        return Reply(tool_calls=[call], prompt_tokens=100, completion_tokens=10)
    return Reply(text=CHILD_ANSWER, prompt_tokens=120, completion_tokens=8)


def script(server) -> None:
    server.on(is_explorer, explorer)
    task = {"task": "find the notes", "agent": "explorer"}
    server.push(
        Reply(tool_calls=[ToolCallSpec("toolkit_subagent", task)], prompt_tokens=50),
        Reply(text="Found: notes.md", prompt_tokens=60, completion_tokens=4),
    )


def test_a_childs_event_is_encoded_with_its_call_agent_and_topic():
    kind, data = ui_event(ChildEvent("call_1", "explorer", "t-1", TextDelta("hi")))
    assert kind == "child"
    assert data == {
        "call_id": "call_1",
        "agent": "explorer",
        "topic_id": "t-1",
        "event": {"type": "token", "text": "hi"},
    }
    long = ToolResult("c2", "toolkit_grep", ok=True, output="x" * 5000)
    _, data = ui_event(ChildEvent("call_1", "explorer", "t-1", long))
    assert data["event"]["type"] == "tool_result"
    assert len(data["event"]["preview"]) < CHILD_PREVIEW_CHARS + 60
    done = Done(text="ok", usage=Usage(7, 3, 10), topic_id="t-1", iterations=1)
    _, data = ui_event(ChildEvent("call_1", "explorer", "t-1", done))
    assert data["event"]["type"] == "done" and data["event"]["usage"]["total_tokens"] == 10
    # a child's usage arrives with its done; a child of a child cannot exist
    assert ui_event(ChildEvent("call_1", "explorer", "t-1", Usage(1, 1, 2))) is None
    nested = ChildEvent("call_1", "explorer", "t-1", ChildEvent("x", "y", "z", TextDelta("no")))
    assert ui_event(nested) is None


def test_the_ui_stream_carries_the_childs_events_and_replays_them(http, scripted_server):
    script(scripted_server)
    sid = http.post("/v1/sessions", json={}).json()["id"]
    _, events = read_events(
        http, "POST", f"/v1/sessions/{sid}/messages", json={"content": "where are the notes?"}
    )
    kinds = types_of(events)
    assert kinds[-1] == "done" and events[-1].data["text"] == "Found: notes.md"
    children = [e for e in events if e.event == "child"]
    inner = [e.data["event"]["type"] for e in children]
    assert inner[:2] == ["tool_start", "tool_result"] and inner[-1] == "done"
    assert set(inner[2:-1]) == {"token"}
    streamed = "".join(
        e.data["event"]["text"] for e in children if e.data["event"]["type"] == "token"
    )
    assert streamed == CHILD_ANSWER
    # all of them while the parent's call runs, labelled with it
    call = next(e.data for e in events if e.event == "tool_start")
    assert kinds.index("tool_start") < kinds.index("child")
    assert len(kinds) - 1 - kinds[::-1].index("child") < kinds.index("tool_result")
    assert {e.data["call_id"] for e in children} == {call["call_id"]}
    assert {e.data["agent"] for e in children} == {"explorer"}
    child_done = children[-1].data["event"]
    assert child_done["text"] == CHILD_ANSWER
    assert child_done["usage"]["prompt_tokens"] == 220
    # the parent's total counts the child's tokens
    assert events[-1].data["usage"]["prompt_tokens"] == 50 + 60 + 220
    # the child's session: listed by its parent, not among the web UI's chats
    topic = children[0].data["topic_id"]
    listed = http.get("/v1/sessions", params={"parent": sid}).json()["data"]
    assert [(s["id"], s["source"], s["agent"], s["parent_id"]) for s in listed] == [
        (topic, "subagent", "explorer", sid)
    ]
    assert topic not in {s["id"] for s in http.get("/v1/sessions?source=ui").json()["data"]}
    stored = http.get(f"/v1/sessions/{topic}/messages").json()["data"]
    assert stored[-1]["content"] == CHILD_ANSWER
    # a page that re-attaches gets the same events from the log
    start = next(e.id for e in events if e.event == "start")
    _, replay = read_events(http, "GET", f"/v1/sessions/{sid}/events?since={start - 1}")
    assert [(e.event, e.data) for e in replay] == [(e.event, e.data) for e in events]


def test_the_openai_routes_count_the_childs_tokens_and_leave_out_its_text(http, scripted_server):
    script(scripted_server)
    body = {"model": "m", "messages": [{"role": "user", "content": "where are the notes?"}]}
    answer = http.post("/v1/chat/completions", json=body).json()
    assert answer["choices"][0]["message"]["content"] == "Found: notes.md"
    assert answer["usage"]["prompt_tokens"] == 50 + 60 + 220

    script(scripted_server)
    streamed = {**body, "stream": True, "stream_options": {"include_usage": True}}
    _, chunks = read_events(http, "POST", "/v1/chat/completions", json=streamed)
    data = [c.data for c in chunks if isinstance(c.data, dict)]
    text = "".join(d["choices"][0]["delta"].get("content") or "" for d in data if d["choices"])
    assert text == "Found: notes.md"
    assert data[-1]["usage"]["prompt_tokens"] == 50 + 60 + 220

    script(scripted_server)
    response = http.post("/v1/responses", json={"model": "m", "input": "where are the notes?"})
    assert response.json()["output"][-1]["content"][0]["text"] == "Found: notes.md"
    assert response.json()["usage"]["input_tokens"] == 50 + 60 + 220
