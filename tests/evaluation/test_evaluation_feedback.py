"""The user's verdict overrides the model's: POST /v1/sessions/{id}/feedback, /good and /bad in
the chat; the evaluations and lessons on the REST API; toolkit_evaluation reads them back."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.tools.evaluation import toolkit_evaluation
from tests.fakes.background import answer_background
from tests.fakes.scripted_server import Reply, ToolCallSpec
from tests.pg import home_store
from tests.server.server_helpers import LiveServer, read_events, start_server
from tests.test_cli import cli

LESSON = (
    '{"category": "tools", "mistake": "Listed the workspace root, not src/.", '
    '"instead": "List the folder the user names."}'
)


@pytest.fixture
def live(model_config) -> Iterator[LiveServer]:
    server = start_server()
    yield server
    server.stop()


@pytest.fixture
def http(live: LiveServer) -> Iterator[httpx.Client]:
    with live.client() as client:
        yield client


def wait_for(fetch: Callable[[], Any], deadline: float = 20.0) -> Any:
    """``fetch()`` once it returns something truthy (background work lands when it lands)."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        found = fetch()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError("nothing arrived before the deadline")


def tool_turn(http: httpx.Client, scripted_server) -> str:
    scripted_server.push(
        Reply(tool_calls=[ToolCallSpec("toolkit_file", {"action": "list", "filename": "."})]),
        Reply(text="Here are your files."),
    )
    sid = http.post("/v1/sessions", json={}).json()["id"]
    response, _ = read_events(
        http, "POST", f"/v1/sessions/{sid}/messages", json={"content": "list src"}
    )
    assert response.status_code == 200
    return sid


def evaluations(http: httpx.Client, sid: str) -> list[dict]:
    return http.get("/v1/evaluations", params={"session_id": sid}).json()["data"]


def test_feedback_overrides_the_models_score_and_a_bad_one_leaves_a_lesson(http, scripted_server):
    answer_background(
        scripted_server, verdict='{"outcome": "success", "quality": 5}', lesson=LESSON
    )
    sid = tool_turn(http, scripted_server)
    (judged,) = wait_for(lambda: evaluations(http, sid))
    assert (judged["outcome"], judged["quality"], judged["source"]) == ("success", 5, "model")
    assert judged["tools"] == ["toolkit_file"] and judged["lesson_id"] is None

    body = {"rating": "bad", "comment": "I asked for src/"}
    rated = http.post(f"/v1/sessions/{sid}/feedback", json=body)
    assert rated.status_code == 200, rated.text
    data = rated.json()
    assert (data["id"], data["outcome"], data["quality"], data["source"]) == (
        judged["id"],
        "failed",
        2,
        "user",
    )
    assert (data["rating"], data["comment"]) == ("bad", "I asked for src/")

    (lesson,) = wait_for(lambda: http.get("/v1/lessons").json()["data"])
    assert lesson["category"] == "tools" and lesson["instead"] == "List the folder the user names."
    assert lesson["evaluation_id"] == judged["id"] and lesson["session_id"] == sid
    (listed,) = evaluations(http, sid)
    assert listed["lesson_id"] == lesson["id"] and listed["source"] == "user"

    good = http.post(f"/v1/sessions/{sid}/feedback", json={"rating": "good"}).json()
    assert (good["outcome"], good["quality"], good["rating"]) == ("success", 4, "good")
    assert http.delete(f"/v1/lessons/{lesson['id']}").json()["deleted"] is True
    assert http.delete(f"/v1/lessons/{lesson['id']}").status_code == 404


def test_a_turn_without_tools_can_be_rated_too(http, scripted_server):
    sid = http.post("/v1/sessions", json={}).json()["id"]
    read_events(http, "POST", f"/v1/sessions/{sid}/messages", json={"content": "hi"})
    assert evaluations(http, sid) == []
    messages = http.get(f"/v1/sessions/{sid}/messages").json()["data"]
    answer_id = messages[-1]["id"]
    rated = http.post(
        f"/v1/sessions/{sid}/feedback", json={"rating": "good", "message_id": answer_id}
    )
    assert rated.status_code == 200
    assert (rated.json()["source"], rated.json()["message_id"]) == ("user", messages[0]["id"])


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        ({"rating": "meh"}, 400, "expected good or bad"),
        ({}, 400, "'rating' is required"),
        ({"rating": 1}, 400, "expected a string"),
        ({"rating": "good", "stars": 5}, 400, "unknown field"),
        ({"rating": "good", "message_id": "x"}, 400, "expected an integer"),
        ({"rating": "good"}, 404, "no turn to rate"),
        ({"rating": "good", "message_id": 999999}, 404, "no message 999999"),
    ],
)
def test_bad_feedback_is_refused(http, body, status, words):
    sid = http.post("/v1/sessions", json={}).json()["id"]
    response = http.post(f"/v1/sessions/{sid}/feedback", json=body)
    assert response.status_code == status and words in response.json()["error"]["message"]


def test_feedback_on_an_unknown_session_is_a_404(http):
    response = http.post("/v1/sessions/nope/feedback", json={"rating": "good"})
    assert response.status_code == 404 and "no session" in response.json()["error"]["message"]


def test_the_lists_check_their_filters(http):
    assert http.get("/v1/evaluations", params={"outcome": "great"}).status_code == 400
    assert http.get("/v1/lessons", params={"category": "cooking"}).status_code == 400
    empty = http.get("/v1/evaluations", params={"limit": 5}).json()
    assert empty == {
        "object": "list",
        "data": [],
        "has_more": False,
        "first_id": None,
        "last_id": None,
    }


def test_good_and_bad_in_the_chat(model_config, scripted_server, tea_home):
    answer_background(scripted_server, lesson=LESSON)
    scripted_server.push(
        Reply(tool_calls=[ToolCallSpec("toolkit_file", {"action": "list", "filename": "."})]),
        Reply(text="Listed."),
    )
    result = cli("chat", stdin="list src\n/bad wrong folder\n/exit\n")
    assert result.returncode == 0, result.stderr
    assert "noted: a bad result" in result.stderr and "lesson" in result.stderr
    store = home_store(tea_home)
    try:
        (evaluation,) = store.evaluations.recent(5)
        assert (evaluation.rating, evaluation.comment, evaluation.source) == (
            "bad",
            "wrong folder",
            "user",
        )
        (lesson,) = store.lessons.recent(5)  # drawn by the worker before the chat closed
        assert lesson.evaluation_id == evaluation.id
        ctx = ToolContext(tea_home, tea_home, store=store, topic_id=evaluation.topic_id)
        listing = toolkit_evaluation(ctx, "list", this_conversation=True)
        assert f"#{evaluation.id}" in listing and "failed" in listing and "user: bad" in listing
        shown = toolkit_evaluation(ctx, "show", id=evaluation.id)
        assert "The user rated it bad: wrong folder" in shown and "Lesson [tools]" in shown
        assert "1 task(s) evaluated" in toolkit_evaluation(ctx, "stats")
        assert "List the folder the user names." in toolkit_evaluation(ctx, "lessons")
    finally:
        store.close()
    result = cli("chat", stdin="/good\n/exit\n")
    assert "error: session" in result.stderr and "no turn to rate" in result.stderr
