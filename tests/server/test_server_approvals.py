"""``approval: ask`` in a server turn: the mutating call waits for an ``approval`` question on the
UI event stream, answered through POST .../questions/{qid}; Deny or no answer refuses the call.
Over ``/v1/chat/completions`` nobody can answer, so the call is refused at once."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import openai
import pytest

from tea_agent_mini.server import interactions
from tests.fakes.scripted_server import Reply, ToolCallSpec
from tests.server.server_helpers import SSE, read_events, types_of

WRITE = {"action": "write", "filename": "notes.txt", "content": "hello"}


def write_turn(scripted_server) -> None:
    scripted_server.push(
        Reply(tool_calls=[ToolCallSpec("toolkit_file", WRITE)]), Reply(text="Finished.")
    )


def start_session(http) -> str:
    assert http.patch("/v1/config", json={"agent": {"approval": "ask"}}).status_code == 200
    return http.post("/v1/sessions", json={}).json()["id"]


def answering(http, sid: str, text: str, answered: list[int]):
    def on_event(event: SSE) -> bool:
        if event.event == "question":
            url = f"/v1/sessions/{sid}/questions/{event.data['id']}"

            def post() -> None:
                answered.append(http.post(url, json={"answer": text}).status_code)

            threading.Thread(target=post).start()
        return False

    return on_event


def tool_result(events: list[SSE]) -> dict:
    return next(e.data for e in events if e.event == "tool_result")


def answered_turn(http, scripted_server, text: str) -> tuple[list[SSE], list[int]]:
    """A turn that writes a file under approval: ask, its approval answered with ``text``."""
    write_turn(scripted_server)
    sid = start_session(http)
    answered: list[int] = []
    url = f"/v1/sessions/{sid}/messages"
    until = answering(http, sid, text, answered)
    _, events = read_events(http, "POST", url, json={"content": "write it"}, until=until)
    return events, answered


def test_allowed_call_runs(http, scripted_server, workspace: Path):
    events, answered = answered_turn(http, scripted_server, "Allow")
    asked = next(e.data for e in events if e.event == "question")
    assert asked["kind"] == "approval" and asked["name"] == "toolkit_file"
    assert json.loads(asked["arguments"]) == WRITE
    assert asked["choices"] == ["Allow", "Deny"] and asked["default"] == "Deny"
    kinds = types_of(events)
    assert kinds.index("question") < kinds.index("question_closed") < kinds.index("tool_result")
    assert answered == [200] and tool_result(events)["ok"] is True
    assert (workspace / "notes.txt").read_text() == "hello"


def test_an_approval_shows_the_whole_call(http, scripted_server, workspace: Path):
    command = "echo harmless" + " " * 5000 + "; touch tail-ran"
    call = ToolCallSpec("toolkit_exec", {"command": command})
    scripted_server.push(Reply(tool_calls=[call]), Reply(text="Finished."))
    sid = start_session(http)
    answered: list[int] = []
    until = answering(http, sid, "Deny", answered)
    url = f"/v1/sessions/{sid}/messages"
    _, events = read_events(http, "POST", url, json={"content": "run it"}, until=until)
    asked = next(e.data for e in events if e.event == "question")
    assert json.loads(asked["arguments"]) == {"command": command}  # the tail is shown too
    assert not (workspace / "tail-ran").exists()


def test_denied_call_is_refused(http, scripted_server, workspace: Path):
    events, answered = answered_turn(http, scripted_server, "Deny")
    assert answered == [200]
    result = tool_result(events)
    assert result["ok"] is False and "declined" in result["error"]
    assert not (workspace / "notes.txt").exists() and types_of(events)[-1] == "done"


def test_no_answer_in_time_refuses(http, scripted_server, workspace: Path, monkeypatch):
    monkeypatch.setattr(interactions, "APPROVAL_TIMEOUT", 1.0)
    write_turn(scripted_server)
    sid = start_session(http)
    _, events = read_events(http, "POST", f"/v1/sessions/{sid}/messages", json={"content": "x"})
    closed = next(e.data for e in events if e.event == "question_closed")
    assert closed["status"] == "timeout"
    assert tool_result(events)["ok"] is False and not (workspace / "notes.txt").exists()


@pytest.mark.parametrize("policy", ["auto", "never"])
def test_other_policies_ask_nobody(http, scripted_server, workspace: Path, policy: str):
    write_turn(scripted_server)
    assert http.patch("/v1/config", json={"agent": {"approval": policy}}).status_code == 200
    sid = http.post("/v1/sessions", json={}).json()["id"]
    _, events = read_events(http, "POST", f"/v1/sessions/{sid}/messages", json={"content": "x"})
    assert "question" not in types_of(events)
    assert (workspace / "notes.txt").exists() is (policy == "auto")


def test_an_api_call_has_nobody_to_ask_and_is_refused_at_once(
    http, live, scripted_server, workspace: Path
):
    write_turn(scripted_server)
    assert http.patch("/v1/config", json={"agent": {"approval": "ask"}}).status_code == 200
    started = time.monotonic()
    # the client's timeout keeps a regression (a wait of APPROVAL_TIMEOUT) from hanging the run
    with openai.OpenAI(base_url=live.url + "/v1", api_key="-", max_retries=0, timeout=20) as api:
        completion = api.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "write it"}]
        )
    assert time.monotonic() - started < 10
    assert completion.choices[0].message.content == "Finished."
    tool_message = scripted_server.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool"
    assert (
        "needs the user's approval (approval: ask), but nobody can be asked"
        in (tool_message["content"])
    )
    assert "declined" not in tool_message["content"] and not (workspace / "notes.txt").exists()
