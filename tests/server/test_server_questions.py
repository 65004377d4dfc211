"""Tools reaching the user from a server turn: toolkit_question over the UI event stream and
POST .../questions/{qid}, toolkit_notify notices on the stream and in GET /v1/notices."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from tea_agent_mini.store.state import topic_scope
from tests.fakes.background import turn_requests
from tests.fakes.scripted_server import Reply, ToolCallSpec
from tests.server.server_helpers import SSE, read_events, types_of

ASK = {"question": "Which database?", "choices": ["SQLite", "Postgres"], "default": "SQLite"}


def new_session(http) -> str:
    return http.post("/v1/sessions", json={}).json()["id"]


def ask(arguments: dict, answer_text: str = "Noted.") -> list[Reply]:
    return [
        Reply(tool_calls=[ToolCallSpec("toolkit_question", arguments)]),
        Reply(text=answer_text),
    ]


def result_of(events: list[SSE], name: str) -> str:
    return next(
        e.data["preview"] for e in events if e.event == "tool_result" and e.data["name"] == name
    )


@pytest.fixture
def no_desktop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A PATH without notify-send or osascript: toolkit_notify stores its notices."""
    empty = tmp_path / "no-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))


def test_question_is_streamed_and_the_posted_answer_reaches_the_tool(http, scripted_server):
    scripted_server.push(*ask({**ASK, "timeout": 30}))
    sid = new_session(http)
    answers: list[int] = []

    def answer(event: SSE) -> bool:
        if event.event == "question":
            url = f"/v1/sessions/{sid}/questions/{event.data['id']}"
            threading.Thread(
                target=lambda: answers.append(
                    http.post(url, json={"answer": "Postgres"}).status_code
                )
            ).start()
        return False

    url = f"/v1/sessions/{sid}/messages"
    _, events = read_events(http, "POST", url, json={"content": "set it up"}, until=answer)
    kinds = types_of(events)
    assert kinds.index("tool_start") < kinds.index("question") < kinds.index("question_closed")
    assert kinds.index("question_closed") < kinds.index("tool_result") and kinds[-1] == "done"
    question = next(e for e in events if e.event == "question")
    assert question.data["question"] == "Which database?"
    assert question.data["choices"] == ["SQLite", "Postgres"]
    assert question.data["default"] == "SQLite" and question.data["timeout"] == 30
    assert 0 < question.data["expires_in"] <= 30
    closed = next(e for e in events if e.event == "question_closed")
    assert closed.data == {
        "type": "question_closed",
        "turn": question.data["turn"],
        "id": question.data["id"],
        "status": "answered",
        "answer": "Postgres",
    }
    assert result_of(events, "toolkit_question") == "The user answered: Postgres"
    assert answers == [200]
    again = http.post(
        f"/v1/sessions/{sid}/questions/{question.data['id']}", json={"answer": "SQLite"}
    )
    assert again.status_code == 409
    tool_message = turn_requests(scripted_server)[-1]["messages"][-1]
    assert tool_message["role"] == "tool" and "Postgres" in tool_message["content"]


def test_unanswered_question_times_out_to_the_default(http, scripted_server):
    scripted_server.push(*ask({**ASK, "timeout": 1}))
    sid = new_session(http)
    _, events = read_events(
        http, "POST", f"/v1/sessions/{sid}/messages", json={"content": "set it up"}
    )
    closed = next(e for e in events if e.event == "question_closed")
    assert closed.data["status"] == "timeout" and closed.data["answer"] is None
    assert "going with the default answer: SQLite" in result_of(events, "toolkit_question")
    late = http.post(f"/v1/sessions/{sid}/questions/{closed.data['id']}", json={"answer": "x"})
    assert late.status_code == 409


def test_reattaching_replays_an_open_question(http, scripted_server):
    scripted_server.push(*ask({"question": "Go on?", "timeout": 30}))
    sid = new_session(http)
    _, first = read_events(
        http,
        "POST",
        f"/v1/sessions/{sid}/messages",
        json={"content": "work"},
        until=lambda e: e.event == "question",
    )
    asked = first[-1].data
    assert asked["choices"] == [] and asked["default"] is None
    # a reload: the re-attached stream shows the question again, still open
    _, replay = read_events(
        http, "GET", f"/v1/sessions/{sid}/events", until=lambda e: e.event == "question"
    )
    assert replay[-1].data["id"] == asked["id"] and "question_closed" not in types_of(replay)
    answered = http.post(f"/v1/sessions/{sid}/questions/{asked['id']}", json={"answer": "yes"})
    assert answered.json() == {"id": asked["id"], "status": "answered", "answer": "yes"}
    _, rest = read_events(http, "GET", f"/v1/sessions/{sid}/events?since={first[-1].id}")
    assert types_of(rest)[0] == "question_closed" and types_of(rest)[-1] == "done"
    assert result_of(rest, "toolkit_question") == "The user answered: yes"


def test_answer_errors(http, scripted_server):
    sid = new_session(http)
    missing = http.post(f"/v1/sessions/{sid}/questions/nope", json={"answer": "x"})
    assert missing.status_code == 404
    assert http.post("/v1/sessions/nope/questions/q", json={"answer": "x"}).status_code == 404
    empty = http.post(f"/v1/sessions/{sid}/questions/q", json={"answer": "  "})
    assert empty.status_code == 400
    assert http.post(f"/v1/sessions/{sid}/questions/q", json={}).status_code == 400


def test_stopping_the_turn_ends_its_question(http, scripted_server):
    scripted_server.push(*ask({"question": "Wait for me?", "timeout": 600}))
    sid = new_session(http)
    url = f"/v1/sessions/{sid}/messages"
    _, events = read_events(
        http, "POST", url, json={"content": "go"}, until=lambda e: e.event == "question"
    )
    assert http.post(f"/v1/sessions/{sid}/abort").json() == {"aborted": True}
    _, rest = read_events(http, "GET", f"/v1/sessions/{sid}/events?since={events[-1].id}")
    assert rest[-1].event == "error" and rest[-1].data["kind"] == "cancelled"
    qid = events[-1].data["id"]
    late = http.post(f"/v1/sessions/{sid}/questions/{qid}", json={"answer": "yes"})
    assert late.status_code == 409


def test_stored_notice_is_streamed_and_listed(http, live, scripted_server, no_desktop):
    notify = {"title": "Build done", "message": "All green", "urgency": "low"}
    scripted_server.push(
        Reply(tool_calls=[ToolCallSpec("toolkit_notify", notify)]), Reply(text="Told you.")
    )
    sid = new_session(http)
    _, events = read_events(http, "POST", f"/v1/sessions/{sid}/messages", json={"content": "x"})
    notice = next(e for e in events if e.event == "notice")
    assert notice.data["kind"] == "notify" and notice.data["title"] == "Build done"
    assert notice.data["message"] == "All green" and notice.data["urgency"] == "low"
    assert types_of(events).index("notice") < types_of(events).index("tool_result")
    # a notice stored by a scheduled run outside any session is listed too, newest first
    live.runtime.store.state.put(
        "topic:default",
        "notices",
        [{"title": "Task t: ok", "message": "done", "urgency": "normal", "time": "2000-01-01"}],
    )
    listed = http.get("/v1/notices").json()
    assert [n["title"] for n in listed["data"]] == ["Build done", "Task t: ok"]
    first = listed["data"][0]
    assert first["session_id"] == sid and first["message"] == "All green"
    assert listed["data"][1]["session_id"] is None
    assert http.get("/v1/notices?limit=1").json()["data"][0]["title"] == "Build done"
    assert http.get("/v1/notices?limit=0").status_code == 400
    assert live.runtime.store.state.get(topic_scope(sid), "notices")[0]["title"] == "Build done"


def test_openapi_documents_questions_and_notices(http):
    document = http.get("/openapi.json").json()
    answer = document["paths"]["/v1/sessions/{id}/questions/{question}"]["post"]
    assert {"404", "409"} <= set(answer["responses"])
    assert "get" in document["paths"]["/v1/notices"]
    types = document["components"]["schemas"]["UIEvent"]["properties"]["type"]["enum"]
    assert {"question", "question_closed"} <= set(types)
    validator = pytest.importorskip("openapi_spec_validator")
    validator.validate(document)
