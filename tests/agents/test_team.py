"""The team through a scripted model: spawn, a message round trip, statuses, broadcast,
shutdown, plan approval, refused names, the lead's tools, and a round trip across a restart."""

from __future__ import annotations

import asyncio
import threading

import pytest

from tea_agent_mini.agent.team import LEAD, TeamError, TeammateExists, UnknownTeammate
from tea_agent_mini.types import Done, ToolResult
from tests.agents.test_subagents import OneLoop, last_user, system_text, turn
from tests.fakes.script import Reply, ToolCallSpec
from tests.pg import home_store


def is_mate(name: str):
    return lambda request: f"You are {name}, a teammate" in system_text(request)


def sent(request: dict) -> str:
    """The teammate's turn message without the context block before it."""
    return last_user(request).rsplit("</context>\n\n", 1)[-1]


def said(request: dict) -> str:
    """The last line of the teammate's turn message (the text of the last message to it)."""
    return last_user(request).splitlines()[-1]


def answering(name: str):
    return lambda request: Reply(text=f"{name} on: {said(request)}")


async def collect(team, address: str, count: int, timeout: float = 10) -> list:
    """The next ``count`` messages of ``address``, read as they arrive."""
    got: list = []
    while len(got) < count:
        assert await team.wait_for([address], timeout), f"{address} got {got}"
        got += await asyncio.to_thread(team.store.inbox.read, address)
    return got


async def until(check, timeout: float = 10) -> None:
    for _ in range(int(timeout / 0.02)):
        if await asyncio.to_thread(check):
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the condition never held")


@pytest.fixture
def loop(model_config):
    one = OneLoop()
    yield one
    one.close()


@pytest.fixture
def runtime(loop):
    return loop.runtime


def test_a_message_to_a_teammate_is_answered_in_the_leads_inbox(loop, runtime, scripted_server):
    scripted_server.on(is_mate("alice"), answering("alice"))
    team = runtime.team

    async def go():
        member = await team.spawn("alice", "reviewer", "Review what you are sent.")
        await team.message(LEAD, "alice", "check parser.py")
        return member, await collect(team, LEAD, 1)

    member, (answer,) = loop.run(go())
    assert member.status == "idle" and member.role == "reviewer" and member.agent is None
    assert answer.sender == "alice" and answer.kind == "message"
    assert answer.text == "alice on: check parser.py"
    assert answer.data["ok"] is True and answer.data["in_reply_to"]
    topic = runtime.store.topics.get(member.topic_id)
    assert topic.source == "subagent" and topic.agent is None
    prompt = runtime.store.topics.system_prompt(member.topic_id)
    assert "Your role: reviewer." in prompt and "Review what you are sent." in prompt
    request = next(r for r in scripted_server.requests if is_mate("alice")(r))
    assert sent(request) == "[message from lead]\ncheck parser.py"
    offered = {tool["function"]["name"] for tool in request["tools"]}
    assert {"toolkit_send_message", "toolkit_read_inbox", "toolkit_list_teammates"} <= offered
    assert not offered & {"toolkit_spawn_teammate", "toolkit_broadcast", "toolkit_subagent"}
    assert runtime.store.inbox.unread_count("alice") == 0


def test_a_teammate_is_working_during_its_turn_and_idle_after(loop, runtime, scripted_server):
    asked, release = threading.Event(), threading.Event()

    def slow(request: dict) -> Reply:
        asked.set()
        release.wait(10)
        return Reply(text="done")

    scripted_server.on(is_mate("alice"), slow)
    team, mates = runtime.team, runtime.store.teammates

    async def go():
        await team.spawn("alice", "worker", "")
        seen = [mates.get("alice").status]
        await team.message(LEAD, "alice", "work")
        await asyncio.to_thread(asked.wait, 10)
        seen.append(mates.get("alice").status)
        release.set()
        await collect(team, LEAD, 1)
        await until(lambda: mates.get("alice").status == "idle")
        return seen

    assert loop.run(go()) == ["idle", "working"]


def test_a_broadcast_reaches_every_running_teammate(loop, runtime, scripted_server):
    for name in ("alice", "bob", "carol"):
        scripted_server.on(is_mate(name), answering(name))
    team = runtime.team

    async def go():
        for name in ("alice", "bob", "carol"):
            await team.spawn(name, "member", "")
        await team.shutdown("carol")
        await collect(team, LEAD, 1)  # carol's shutdown response
        await until(lambda: "carol" not in team.live())
        reached = await team.broadcast(LEAD, "stand-up in five")
        return reached, await collect(team, LEAD, 2)

    reached, answers = loop.run(go())
    assert reached == ["alice", "bob"]
    assert sorted(a.text for a in answers) == [
        "alice on: stand-up in five",
        "bob on: stand-up in five",
    ]
    heads = [sent(r).splitlines()[0] for r in scripted_server.requests if is_mate("bob")(r)]
    assert heads == ["[broadcast from lead to the team]"]


def test_a_shutdown_request_is_answered_and_the_teammate_stops(loop, runtime, scripted_server):
    team = runtime.team

    async def go():
        await team.spawn("alice", "member", "")
        assert await team.shutdown("alice") is True
        (response,) = await collect(team, LEAD, 1)
        await until(lambda: not team.live())
        return response

    response = loop.run(go())
    assert response.kind == "shutdown_response" and response.sender == "alice"
    assert runtime.store.teammates.get("alice").status == "shutdown"
    assert not [r for r in scripted_server.requests if is_mate("alice")(r)]  # no turn for it
    with pytest.raises(UnknownTeammate):
        loop.run(team.shutdown("nobody"))
    # spawned again, it works in the same topic
    scripted_server.on(is_mate("alice"), answering("alice"))

    async def again():
        member = await team.spawn("alice")
        await team.message(LEAD, "alice", "back?")
        return member, await collect(team, LEAD, 1)

    member, (answer,) = loop.run(again())
    assert member.status == "idle" and answer.text == "alice on: back?"


@pytest.mark.parametrize("name", ["Alice", "al ice", "9lives", "", "lead", "a" * 41, "x/y"])
def test_invalid_names_are_refused(loop, runtime, name):
    with pytest.raises(TeamError, match="is not valid"):
        loop.run(runtime.team.spawn(name, "member", ""))
    assert runtime.store.teammates.all() == []


def test_a_name_clash_with_a_running_teammate_is_refused(loop, runtime):
    team = runtime.team
    loop.run(team.spawn("alice", "member", ""))
    with pytest.raises(TeammateExists, match="already running"):
        loop.run(team.spawn("alice", "other", ""))
    with pytest.raises(TeamError, match="needs a role"):
        loop.run(team.spawn("bob", "  ", ""))
    with pytest.raises(TeamError, match="no subagent identity 'wizard'"):
        loop.run(team.spawn("carol", "member", "", agent="wizard"))
    assert [m.name for m in team.members()] == ["alice"]
    assert len(runtime.store.topics.recent(limit=10, include_archived=True)) == 1

    async def at_once():
        return await asyncio.gather(
            team.spawn("dave", "member", ""),
            team.spawn("dave", "member", ""),
            return_exceptions=True,
        )

    results = loop.run(at_once())
    assert sum(isinstance(result, TeammateExists) for result in results) == 1
    assert team.live() == ["alice", "dave"]
    assert len(runtime.store.topics.recent(limit=10, include_archived=True)) == 2


def test_messages_are_checked(loop, runtime):
    team = runtime.team
    loop.run(team.spawn("alice", "member", ""))
    with pytest.raises(UnknownTeammate):
        loop.run(team.message(LEAD, "nobody", "hello"))
    with pytest.raises(TeamError, match="empty"):
        loop.run(team.message(LEAD, "alice", "  "))
    with pytest.raises(TeamError, match="kind must be"):
        loop.run(team.message(LEAD, "alice", "hi", "shutdown_request"))
    with pytest.raises(TeamError, match="approve or reject"):
        loop.run(team.message(LEAD, "alice", "maybe later", "plan_approval"))
    with pytest.raises(TeamError, match='goes to "lead"'):
        loop.run(team.message("alice", "alice", "my plan", "plan_approval"))


def test_a_plan_goes_to_the_lead_and_the_verdict_reaches_the_teammate(
    loop, runtime, scripted_server
):
    turns = iter(
        [
            Reply(
                tool_calls=[
                    ToolCallSpec(
                        "toolkit_send_message",
                        {"to": "lead", "text": "Plan: rename x to y", "kind": "plan_approval"},
                    )
                ]
            ),
            Reply(text="waiting for approval"),
            Reply(text="renamed"),
        ]
    )
    scripted_server.on(is_mate("alice"), lambda request: next(turns))
    team = runtime.team

    async def go():
        await team.spawn("alice", "refactorer", "")
        await team.message(LEAD, "alice", "tidy the names")
        first = await collect(team, LEAD, 2)
        await team.message(LEAD, "alice", "approve, go ahead", "plan_approval")
        return first, await collect(team, LEAD, 1)

    first, (done,) = loop.run(go())
    plan, answer = first
    assert (plan.kind, plan.sender, plan.text) == ("plan_approval", "alice", "Plan: rename x to y")
    assert answer.text == "waiting for approval" and done.text == "renamed"
    last = [r for r in scripted_server.requests if is_mate("alice")(r)][-1]
    assert "[lead approved your plan]\napprove, go ahead" in last_user(last)
    # the plan waits in the lead's records with its verdict
    verdict = runtime.store.inbox.recent("alice", limit=1)[0]
    assert verdict.data == {"approved": True}


def test_a_reply_is_not_answered_back_to_its_sender(loop, runtime, scripted_server):
    alice = iter(
        [
            Reply(
                tool_calls=[
                    ToolCallSpec("toolkit_send_message", {"to": "bob", "text": "what is 2+2?"})
                ]
            ),
            Reply(text="asked bob"),
            Reply(text="bob says 4"),
        ]
    )
    scripted_server.on(is_mate("alice"), lambda request: next(alice))
    scripted_server.on(is_mate("bob"), Reply(text="4"))
    team = runtime.team

    async def go():
        await team.spawn("alice", "asker", "")
        await team.spawn("bob", "answerer", "")
        await team.message(LEAD, "alice", "find out 2+2")
        got = await collect(team, LEAD, 2)
        await until(lambda: all(m.status == "idle" for m in team.members()))
        return got

    got = loop.run(go())
    assert [m.text for m in got] == ["asked bob", "bob says 4"]
    assert len([r for r in scripted_server.requests if is_mate("bob")(r)]) == 1
    last = [r for r in scripted_server.requests if is_mate("alice")(r)][-1]
    assert "[answer from bob]\n4" in last_user(last)


def test_the_lead_runs_the_team_with_its_tools(loop, runtime, scripted_server):
    scripted_server.on(is_mate("alice"), answering("alice"))
    scripted_server.push(
        Reply(
            tool_calls=[
                ToolCallSpec(
                    "toolkit_spawn_teammate",
                    {"name": "alice", "role": "reviewer", "prompt": "Be brief."},
                )
            ]
        ),
        Reply(tool_calls=[ToolCallSpec("toolkit_send_message", {"to": "alice", "text": "hi"})]),
        Reply(tool_calls=[ToolCallSpec("toolkit_read_inbox", {"wait": 10})]),
        Reply(tool_calls=[ToolCallSpec("toolkit_list_teammates", {})]),
        Reply(text="alice answered"),
    )
    events = loop.run(turn(runtime, "build a team"))
    assert isinstance(events[-1], Done)
    results = [e for e in events if isinstance(e, ToolResult)]
    assert all(r.ok for r in results), [r.error for r in results]
    assert "From alice (message):\nalice on: hi" in results[2].output
    assert "- alice [idle] reviewer (0 unread)" in results[3].output
    (member,) = runtime.team.members()
    assert runtime.store.topics.get(member.topic_id).parent_id == events[-1].topic_id


def test_a_teammate_may_not_spawn_teammates_nor_broadcast(loop, runtime, scripted_server):
    calls = iter(
        [
            Reply(
                tool_calls=[
                    ToolCallSpec(
                        "toolkit_spawn_teammate", {"name": "b", "role": "r", "prompt": ""}
                    ),
                    ToolCallSpec("toolkit_broadcast", {"text": "hello all"}),
                ]
            ),
            Reply(text="could not"),
        ]
    )
    scripted_server.on(is_mate("alice"), lambda request: next(calls))
    team = runtime.team

    async def go():
        await team.spawn("alice", "member", "", agent="explorer")
        await team.message(LEAD, "alice", "grow the team")
        return await collect(team, LEAD, 1)

    (answer,) = loop.run(go())
    assert answer.text == "could not"
    request = next(r for r in scripted_server.requests if is_mate("alice")(r))
    offered = {t["function"]["name"] for t in request["tools"]}
    assert {"toolkit_send_message", "toolkit_read_inbox", "toolkit_grep"} <= offered
    assert not offered & {"toolkit_spawn_teammate", "toolkit_broadcast", "toolkit_exec"}
    tools = [
        m for m in runtime.store.messages.of_topic(answer.data["topic_id"]) if m.role == "tool"
    ]
    assert len(tools) == 2 and all("not one of" in m.text for m in tools), tools
    assert [m.name for m in team.members()] == ["alice"]


def test_the_tools_and_the_chat_name_the_lead_as_the_team_does():
    from tea_agent_mini.cli import team as chat_team
    from tea_agent_mini.tools import team as team_tools

    assert team_tools.LEAD == chat_team.LEAD == LEAD


def test_a_round_trip_across_a_restart(model_config, scripted_server, tea_home):
    scripted_server.on(is_mate("alice"), answering("alice"))
    first = OneLoop()
    try:
        team = first.runtime.team

        async def before():
            member = await team.spawn("alice", "reviewer", "Remember what you are told.")
            await team.message(LEAD, "alice", "the code word is teal")
            return member, await collect(team, LEAD, 1)

        member, (answer,) = first.run(before())
        assert answer.text == "alice on: the code word is teal"
    finally:
        first.close()
    store = home_store(tea_home)
    try:
        assert store.teammates.get("alice").status == "offline"
        store.teammates.set_status("alice", "idle")  # as a process that crashed leaves it
    finally:
        store.close()

    second = OneLoop()
    try:
        team = second.runtime.team
        (listed,) = team.members()
        assert listed.status == "offline" and listed.topic_id == member.topic_id

        async def after():
            await team.message(LEAD, "alice", "what was the code word?")  # while offline
            unread = team.member("alice").unread
            revived = await team.spawn("alice")
            return unread, revived, await collect(team, LEAD, 1)

        unread, revived, (reply,) = second.run(after())
    finally:
        second.close()
    assert unread == 1
    assert revived.topic_id == member.topic_id and revived.role == "reviewer"
    assert reply.text == "alice on: what was the code word?"
    last = [r for r in scripted_server.requests if is_mate("alice")(r)][-1]
    history = " ".join(str(m.get("content")) for m in last["messages"])
    assert "the code word is teal" in history and "alice on: the code word is teal" in history
