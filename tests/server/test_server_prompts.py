"""Versions of the guidelines over real HTTP: list with turn counts, set, evolve through the
scripted model, accept, rollback, one version with its diff, and bad input as 4xx JSON."""

from __future__ import annotations

import pytest

from tea_agent_mini.context.guidelines import REQUIRED_RULES
from tea_agent_mini.context.prompt_versions import EVOLVE_MARKER
from tea_agent_mini.context.prompts import builtin_guidelines
from tests.agents.test_subagents import system_text
from tests.fakes.script import Reply

RULES = "\n".join(f"- {rule}" for rule in REQUIRED_RULES.values())
BRITISH = f"You are a careful agent.\n{RULES}\n- Answer in British English."
TERSE = f"You are a terse agent.\n{RULES}"


def is_evolve(request: dict) -> bool:
    return system_text(request).startswith(EVOLVE_MARKER)


def ok(response, status: int = 200) -> dict:
    assert response.status_code == status, response.text
    return response.json()


def error(response, status: int) -> str:
    assert response.status_code == status, response.text
    return response.json()["error"]["message"]


def test_the_list_starts_with_the_builtin_version(http):
    listed = ok(http.get("/v1/prompts"))
    assert listed["object"] == "list" and listed["has_more"] is False
    (builtin,) = listed["data"]
    assert builtin == listed["current"]
    assert (builtin["version"], builtin["source"], builtin["status"]) == (0, "builtin", "active")
    assert builtin["text"] == builtin_guidelines("full") and builtin["in_use"] is True
    assert builtin["parent"] is None and builtin["turns"]["total"] == 0


def test_set_evolve_accept_rollback(http, live, scripted_server):
    first = ok(http.post("/v1/prompts", json={"text": TERSE, "note": "mine"}), 201)
    assert (first["version"], first["status"], first["source"], first["note"]) == (
        1,
        "active",
        "user",
        "mine",
    )
    live.runtime.memory.add("Always answer in British English", category="instruction")
    scripted_server.on(is_evolve, Reply(text=BRITISH))

    proposal = ok(http.post("/v1/prompts/evolve", json={}), 201)
    assert proposal["object"] == "prompt_proposal" and proposal["base"] == 1
    assert proposal["proposal"]["status"] == "proposed" and proposal["proposal"]["parent"] == 1
    assert "+- Answer in British English." in proposal["diff"]
    assert proposal["evidence"]["memories"] == 1
    assert proposal["summary"] == "from 1 memories"
    assert ok(http.get("/v1/prompts"))["current"]["version"] == 1  # nothing changed yet

    accepted = ok(http.post("/v1/prompts/2/accept"))
    assert accepted["version"] == 2 and accepted["in_use"] is True
    detail = ok(http.get("/v1/prompts/2"))
    assert detail["text"] == BRITISH and detail["diff"].startswith("--- version 1\n+++ version 2")
    listed = ok(http.get("/v1/prompts"))
    assert [v["version"] for v in listed["data"]] == [2, 1, 0]
    assert [v["status"] for v in listed["data"]] == ["active", "retired", "retired"]

    assert ok(http.post("/v1/prompts/rollback"))["version"] == 1  # no body: to the parent
    assert ok(http.post("/v1/prompts/rollback", json={"to": 0}))["version"] == 0
    assert ok(http.get("/v1/prompts"))["current"]["source"] == "builtin"


def test_turns_are_counted_by_version(http, scripted_server):
    scripted_server.push(Reply(text="one"), Reply(text="two"))
    chat = {"model": "scripted-model", "messages": [{"role": "user", "content": "hi"}]}
    ok(http.post("/v1/chat/completions", json=chat))
    ok(http.post("/v1/prompts", json={"text": TERSE}), 201)
    ok(http.post("/v1/chat/completions", json=chat))

    by_version = {v["version"]: v["turns"] for v in ok(http.get("/v1/prompts"))["data"]}
    assert by_version[0] == {"total": 1, "completed": 1, "stopped": 0, "failed": 0, "unknown": 0}
    assert by_version[1]["total"] == 1 and by_version[1]["completed"] == 1


@pytest.mark.parametrize(
    ("body", "status", "complaint"),
    [
        ({}, 400, "field 'text' is required"),
        ({"text": 5}, 400, "expected a string"),
        ({"text": "Be nice."}, 400, "must keep these rules"),
        ({"text": TERSE, "colour": "red"}, 400, "unknown field(s) colour"),
        ({"text": TERSE, "note": "x" * 501}, 400, "longer than 500"),
        ({"text": TERSE + "\n- key sk-abcdefghijklmnopqrstuvwx"}, 400, "secret"),
        ({"text": "x" * 9000}, 400, "longer than 8000"),
    ],
)
def test_bad_sets_are_400(http, body, status, complaint):
    assert complaint in error(http.post("/v1/prompts", json=body), status)
    assert len(ok(http.get("/v1/prompts"))["data"]) == 1


def test_bad_actions_are_4xx(http, scripted_server):
    assert "nothing to roll back" in error(http.post("/v1/prompts/rollback", json={}), 409)
    assert "at least 0" in error(http.post("/v1/prompts/rollback", json={"to": -1}), 400)
    assert "no prompt version 42" in error(http.post("/v1/prompts/rollback", json={"to": 42}), 404)
    assert "expected an integer" in error(http.post("/v1/prompts/rollback", json={"to": "1"}), 400)
    assert "no prompt version 7" in error(http.post("/v1/prompts/7/accept"), 404)
    error(http.post("/v1/prompts/abc/accept"), 404)
    error(http.get("/v1/prompts/99999999999999999999999"), 404)
    assert "not a proposal" in error(http.post("/v1/prompts/0/accept"), 409)
    assert "expected 1-200" in error(http.get("/v1/prompts?limit=0"), 400)
    error(http.post("/v1/prompts/rollback", content=b"to=1"), 415)

    assert "nothing to learn from yet" in error(http.post("/v1/prompts/evolve"), 409)
    http.post("/v1/memory", json={"content": "Use metric units", "category": "preference"})
    scripted_server.on(is_evolve, Reply(text="Be nice."))
    assert "revision was refused" in error(http.post("/v1/prompts/evolve", json={}), 422)
    scripted_server.on(is_evolve, Reply(status=500, error_message="model down"))
    assert "could not propose" in error(http.post("/v1/prompts/evolve", json={}), 502)
    assert ok(http.get("/v1/prompts"))["data"][0]["version"] == 0  # nothing was stored
