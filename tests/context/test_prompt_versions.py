"""Prompt evolution: versions of the guidelines set, checked, proposed by a scripted model,
accepted and rolled back, through the service, the tool and real turns; the system prompt stays
byte-identical within a session and changes at the turn after an accept; each turn records its
version."""

from __future__ import annotations

import pytest

from tea_agent_mini.context.guidelines import (
    LIMITS,
    REQUIRED_RULES,
    PromptVersionError,
    guidelines_in_use,
    missing_rules,
)
from tea_agent_mini.context.prompt_versions import EVOLVE_MARKER, PromptVersions
from tea_agent_mini.context.prompts import builtin_guidelines
from tea_agent_mini.store import Store
from tea_agent_mini.types import Done, ToolResult
from tests.agents.test_subagents import OneLoop, system_text
from tests.fakes.background import is_background
from tests.fakes.script import Reply, ToolCallSpec

RULES = "\n".join(f"- {rule}" for rule in REQUIRED_RULES.values())
BRITISH = f"You are a careful agent.\n{RULES}\n- Answer in British English."
TERSE = f"You are a terse agent.\n{RULES}"


def is_evolve(request: dict) -> bool:
    return system_text(request).startswith(EVOLVE_MARKER)


def turn_requests(server) -> list[dict]:
    return [r for r in server.requests if not is_background(r) and not is_evolve(r)]


def tool_call(**arguments) -> ToolCallSpec:
    return ToolCallSpec("toolkit_prompt_evolve", arguments)


@pytest.fixture
def store(tmp_path):
    with Store.open(tmp_path / "chat.db") as opened:
        yield opened


@pytest.fixture
def versions(store) -> PromptVersions:
    return PromptVersions(store, "full", lambda: ["configured-secret-value"])


@pytest.fixture
def loop(model_config):
    one = OneLoop()
    yield one
    one.close()


async def turn(runtime, text: str, topic_id: str | None = None) -> list:
    session = runtime.session(topic_id)
    return [event async for event in session.run_turn(text)]


# -- the versions themselves -----------------------------------------------------------------


@pytest.mark.parametrize("profile", ["full", "compact"])
def test_the_builtin_text_is_version_zero_and_keeps_the_required_rules(store, profile):
    versions = PromptVersions(store, profile)
    current = versions.current()
    assert (current.version, current.status, current.source) == (0, "active", "builtin")
    assert current.text == builtin_guidelines(profile)
    assert missing_rules(current.text) == [] and len(current.text) <= LIMITS[profile]
    assert versions.newest() == [] and versions.in_use() == 0


def test_set_rollback_and_diff(versions):
    first = versions.set(BRITISH, note="the user is in London")
    assert (first.version, first.status, first.source, first.parent) == (1, "active", "user", 0)
    second = versions.set(TERSE)
    assert (second.version, second.parent) == (2, 1)
    assert [v.status for v in versions.newest()] == ["active", "retired"]
    assert "+You are a terse agent." in versions.diff()
    assert "-You are a careful agent." in versions.diff()

    assert versions.rollback().version == 1  # back to the version 2 was made from
    assert versions.rollback().version == 0
    with pytest.raises(PromptVersionError, match="nothing to roll back") as refused:
        versions.rollback()
    assert refused.value.reason == "conflict"
    assert versions.rollback(to=2).version == 2 and versions.in_use() == 2
    with pytest.raises(PromptVersionError, match="in use already"):
        versions.rollback(to=2)
    with pytest.raises(PromptVersionError, match="no prompt version 9") as missing:
        versions.rollback(to=9)
    assert missing.value.reason == "missing"
    with pytest.raises(PromptVersionError, match="has this text already"):
        versions.set(TERSE)


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("   \n ", "empty"),
        ("Be nice.", "must keep these rules"),
        (BRITISH.replace("toolkit_find_tools", "the finder"), "toolkit_find_tools"),
        (BRITISH + "\n- " + "x" * LIMITS["full"], "the full prompt profile allows 4,000"),
        (BRITISH + "\n- Use the key sk-abcdefghijklmnopqrstuv.", "secret"),
        (BRITISH + "\n- api_key: hunter2hunter2", "secret"),
        (BRITISH + "\n- The code is configured-secret-value.", "secret"),
        (BRITISH + "\x07", "control character"),
    ],
)
def test_a_text_that_breaks_the_rules_is_refused(versions, text, complaint):
    with pytest.raises(PromptVersionError, match=complaint) as refused:
        versions.set(text)
    assert refused.value.reason == "invalid"
    assert versions.newest() == []


def test_the_compact_profile_refuses_a_long_version_and_never_uses_one(store):
    long_text = BRITISH + "\n" + "- Explain each step in full.\n" * 40
    assert LIMITS["compact"] < len(long_text) <= LIMITS["full"]
    with pytest.raises(PromptVersionError, match="compact prompt profile allows 1,200"):
        PromptVersions(store, "compact").set(long_text)
    PromptVersions(store, "full").set(long_text)  # a bigger model's profile
    compact = PromptVersions(store, "compact")
    assert compact.current().version == 1 and compact.in_use() == 0  # the smaller model's
    assert guidelines_in_use(store.prompts.active(), "compact") == (0, None)
    assert guidelines_in_use(store.prompts.active(), "full")[0] == 1


def test_accept_takes_only_a_proposal(versions, store):
    proposal = store.prompts.add(BRITISH, source="evolved", parent=0)
    assert versions.in_use() == 0  # a proposal changes nothing
    with pytest.raises(PromptVersionError, match="never accepted"):
        versions.rollback(to=proposal.version)
    assert versions.accept(proposal.version).status == "active"
    with pytest.raises(PromptVersionError, match="not a proposal") as again:
        versions.accept(proposal.version)
    assert again.value.reason == "conflict"
    with pytest.raises(PromptVersionError, match="no prompt version 5"):
        versions.accept(5)


# -- evolve, the tool and turns ----------------------------------------------------------------


def test_evolve_accept_rollback_through_the_tool_with_versions_recorded_per_turn(
    loop, scripted_server
):
    runtime = loop.runtime
    runtime.memory.add("Always answer in British English", category="instruction")
    scripted_server.on(is_evolve, Reply(text=f"```\n{BRITISH}\n```"))
    scripted_server.push(
        Reply(tool_calls=[tool_call(action="evolve")]),
        Reply(text="Proposed."),
        Reply(tool_calls=[tool_call(action="accept", version=1)]),
        Reply(text="Accepted."),
        Reply(text="Cheerio."),
        Reply(tool_calls=[tool_call(action="rollback")]),
        Reply(text="Rolled back."),
        Reply(text="Bye."),
    )

    events = loop.run(turn(runtime, "improve your guidelines"))
    result = next(e for e in events if isinstance(e, ToolResult))
    assert result.ok, result.error
    assert "Proposed version 1 (a revision of version 0, from 1 memories" in result.output
    assert "+- Answer in British English." in result.output
    assert "action=accept version=1" in result.output
    asked = next(r for r in scripted_server.requests if is_evolve(r))
    assert "Always answer in British English" in asked["messages"][1]["content"]
    assert runtime.store.prompts.get(1).status == "proposed"

    topic = events[-1].topic_id
    events = loop.run(turn(runtime, "accept version 1", topic))
    assert isinstance(events[-1], Done)
    assert "Version 1 is now in use" in next(e for e in events if isinstance(e, ToolResult)).output
    loop.run(turn(runtime, "hello", topic))
    loop.run(turn(runtime, "go back", topic))
    loop.run(turn(runtime, "bye", topic))

    systems = [system_text(r) for r in turn_requests(scripted_server)]
    builtin = builtin_guidelines("full")
    # turn 1 (2 calls), turn 2 (2 calls: the accept applies from the next turn), turn 3,
    # turn 4 (2 calls: the rollback too), turn 5
    assert [s.startswith(BRITISH) for s in systems] == [False] * 4 + [True] * 3 + [False]
    assert all(s.startswith(builtin) for s in systems[:4] + systems[-1:])
    assert len(set(systems[:4])) == 1 and len(set(systems[4:7])) == 1

    outcomes = runtime.store.prompts.turn_outcomes()
    assert (outcomes[0].turns, outcomes[0].completed) == (3, 3)
    assert (outcomes[1].turns, outcomes[1].completed) == (2, 2)
    users = [m for m in runtime.store.messages.of_topic(topic) if m.role == "user"]
    assert [runtime.store.prompts.turn_version(m.id) for m in users] == [0, 0, 1, 1, 0]


def test_a_set_version_is_the_stable_prefix_of_every_request(loop, scripted_server, workspace):
    runtime = loop.runtime
    runtime.prompts.set(TERSE)
    (workspace / "notes.txt").write_text("hello", encoding="utf-8")
    scripted_server.push(
        Reply(tool_calls=[ToolCallSpec("toolkit_file", {"action": "read", "path": "notes.txt"})]),
        Reply(text="It says hello."),
        Reply(text="Done."),
    )
    first = loop.run(turn(runtime, "read notes.txt"))
    loop.run(turn(runtime, "thanks", first[-1].topic_id))

    systems = [system_text(r) for r in turn_requests(scripted_server)]
    assert len(systems) == 3 and len(set(systems)) == 1
    assert systems[0].startswith(TERSE + "\n\nEnvironment:")
    assert builtin_guidelines("full") not in systems[0]


def test_evolve_refuses_a_revision_that_drops_the_rules(loop, scripted_server):
    runtime = loop.runtime
    runtime.memory.add("Prefer tables for comparisons", category="preference")
    scripted_server.on(is_evolve, Reply(text="<think>short is good</think>Be nice."))
    scripted_server.push(Reply(tool_calls=[tool_call(action="evolve")]), Reply(text="No."))

    events = loop.run(turn(runtime, "evolve your prompt"))
    result = next(e for e in events if isinstance(e, ToolResult))
    assert not result.ok
    assert "the model's revision was refused" in result.error
    assert "toolkit_find_tools" in result.error
    assert runtime.store.prompts.newest() == []


def test_evolve_needs_evidence(loop, scripted_server):
    scripted_server.push(Reply(tool_calls=[tool_call(action="evolve")]), Reply(text="Fine."))
    events = loop.run(turn(loop.runtime, "evolve your prompt"))
    result = next(e for e in events if isinstance(e, ToolResult))
    assert not result.ok and "nothing to learn from yet" in result.error
    assert "no evaluations, lessons" in result.error
    assert not any(is_evolve(r) for r in scripted_server.requests)


class Recent:
    """A repository of the evaluations branch as far as evolve uses it."""

    def __init__(self, records: list) -> None:
        self.records = records

    def recent(self, limit: int) -> list:
        return self.records[:limit]


def test_evolve_learns_from_evaluations_and_lessons_when_the_store_has_them(loop, scripted_server):
    runtime = loop.runtime
    store = runtime.store
    store.evaluations = Recent(  # type: ignore[attr-defined]
        [{"outcome": "failed", "quality": 2, "summary": "edited without reading the file"}]
    )
    store.lessons = Recent(  # type: ignore[attr-defined]
        [{"category": "tools", "what_went_wrong": "guessed a path", "instead": "glob first"}]
    )
    scripted_server.on(is_evolve, Reply(text=BRITISH))

    proposal = loop.run(runtime.prompts.evolve(runtime.cheap_llm, note="weekly"))

    asked = next(r for r in scripted_server.requests if is_evolve(r))["messages"][1]["content"]
    assert "outcome: failed; quality: 2; summary: edited without reading the file" in asked
    assert "what_went_wrong: guessed a path; instead: glob first" in asked
    assert asked.startswith("Current instructions:\n" + builtin_guidelines("full"))
    assert proposal.evidence.counts()["evaluations"] == 1 and proposal.evidence.unavailable == ()
    assert (proposal.version.status, proposal.version.note) == ("proposed", "weekly")
    assert proposal.diff.startswith("--- version 0\n+++ version 1")


def test_set_accept_rollback_count_as_writing(loop):
    spec = loop.runtime.toolkit.get("toolkit_prompt_evolve")
    assert spec is not None
    writes = {a: spec.mutates_with({"action": a}) for a in ("list", "current", "evolve", "diff")}
    assert not any(writes.values())
    assert all(spec.mutates_with({"action": a}) for a in ("set", "accept", "rollback"))
