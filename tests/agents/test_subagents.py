"""Subagents through a scripted model: concurrency and order, whitelists, depth, cancel, usage,
async mode, budgets, and the events a parent relays."""

from __future__ import annotations

import asyncio
import threading

import pytest

from tea_agent_mini.config import load_config
from tea_agent_mini.runtime import Runtime
from tea_agent_mini.types import ChildEvent, Done, ToolCallStart, ToolResult
from tests.fakes.script import Reply, ToolCallSpec


def system_text(request: dict) -> str:
    first = request["messages"][0]
    return first["content"] if first["role"] == "system" else ""


def last_user(request: dict) -> str:
    users = [m for m in request["messages"] if m["role"] == "user"]
    content = users[-1]["content"] if users else ""
    if isinstance(content, list):
        return " ".join(part.get("text", "") for part in content)
    return content


def is_child(name: str):
    return lambda request: (
        f"You are the {name}" in system_text(request)
        or (name == "worker" and "You are a worker" in system_text(request))
    )


def tool_messages(request: dict) -> list[dict]:
    return [m for m in request["messages"] if m["role"] == "tool"]


def subagent_call(task: str, agent: str = "explorer", **extra) -> ToolCallSpec:
    return ToolCallSpec("toolkit_subagent", {"task": task, "agent": agent, **extra})


async def turn(runtime: Runtime, text: str, topic_id: str | None = None) -> list:
    session = runtime.session(topic_id)
    return [event async for event in session.run_turn(text)]


class OneLoop:
    """A runtime whose whole life (turns, then aclose) runs on one event loop, as in the CLI."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.runtime = Runtime(load_config())

    def run(self, coro):
        return self.loop.run_until_complete(coro)

    def close(self) -> None:
        self.run(self.runtime.aclose())
        left = [task for task in asyncio.all_tasks(self.loop) if not task.done()]
        for task in left:  # as asyncio.run does
            task.cancel()
        self.run(_settle(left))
        self.run(self.loop.shutdown_asyncgens())
        self.loop.close()


async def _settle(tasks: list) -> None:
    await asyncio.gather(*tasks, return_exceptions=True)


@pytest.fixture
def loop(model_config):
    one = OneLoop()
    yield one
    one.close()


@pytest.fixture
def runtime(loop):
    return loop.runtime


def test_three_subagents_in_one_reply_run_at_once_and_answer_in_call_order(
    loop, runtime, scripted_server
):
    together = threading.Barrier(3, timeout=20)  # only passes if all three ask at once

    def child(request: dict) -> Reply:
        if tool_messages(request):
            return Reply(text="unused")
        together.wait()
        task = last_user(request)
        return Reply(text=f"found {task.split()[-1]}", prompt_tokens=100, completion_tokens=10)

    scripted_server.on(is_child("explorer"), child)
    scripted_server.push(
        Reply(
            tool_calls=[
                subagent_call("look for alpha"),
                subagent_call("look for beta"),
                subagent_call("look for gamma"),
            ],
            prompt_tokens=50,
            completion_tokens=5,
        ),
        Reply(text="All three found.", prompt_tokens=60, completion_tokens=5),
    )

    events = loop.run(turn(runtime, "explore three things"))

    done = events[-1]
    assert isinstance(done, Done) and done.text == "All three found."
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [r.ok for r in results] == [True, True, True]
    assert [r.output.splitlines()[-1] for r in results] == [
        "found alpha",
        "found beta",
        "found gamma",
    ]
    # the children's tokens count toward the parent's turn
    assert done.usage.prompt_tokens == 50 + 60 + 3 * 100
    children = runtime.store.topics.children(done.topic_id)
    assert [c.agent for c in children] == ["explorer"] * 3
    assert all(c.source == "subagent" for c in children)
    relayed = [e for e in events if isinstance(e, ChildEvent)]
    assert {e.topic_id for e in relayed} == {c.id for c in children}
    assert {e.call_id for e in relayed} == {
        e.call_id for e in events if isinstance(e, ToolCallStart)
    }
    assert sum(isinstance(e.event, Done) for e in relayed) == 3


def test_a_childs_requests_carry_its_prompt_and_only_its_tools(loop, runtime, scripted_server):
    scripted_server.on(is_child("explorer"), Reply(text="nothing to see"))
    scripted_server.push(Reply(tool_calls=[subagent_call("check")]), Reply(text="ok"))
    loop.run(turn(runtime, "go"))
    child = next(r for r in scripted_server.requests if is_child("explorer")(r))
    offered = [t["function"]["name"] for t in child["tools"]]
    assert offered == ["toolkit_glob", "toolkit_grep", "toolkit_file", "toolkit_git"]
    assert "You are the explorer" in system_text(child)
    assert last_user(child).endswith("check")


def test_a_child_cannot_call_tools_outside_its_list_nor_start_subagents(
    loop, runtime, scripted_server, workspace
):
    answers = iter(
        [
            Reply(tool_calls=[ToolCallSpec("toolkit_exec", {"command": "touch made.txt"})]),
            Reply(tool_calls=[subagent_call("recurse", agent="worker")]),
            Reply(text="could not"),
        ]
    )
    scripted_server.on(is_child("explorer"), lambda request: next(answers))
    scripted_server.push(Reply(tool_calls=[subagent_call("try things")]), Reply(text="done"))
    events = loop.run(turn(runtime, "go"))
    inner = [e.event for e in events if isinstance(e, ChildEvent)]
    refusals = [e.error for e in inner if isinstance(e, ToolResult)]
    assert "toolkit_exec is not one of the explorer subagent's tools" in refusals[0]
    assert "toolkit_subagent is not one of the explorer subagent's tools" in refusals[1]
    assert not (workspace / "made.txt").exists()


def test_a_worker_child_may_not_start_subagents_either(loop, runtime, scripted_server):
    answers = iter([Reply(tool_calls=[subagent_call("deeper")]), Reply(text="stopped")])
    scripted_server.on(is_child("worker"), lambda request: next(answers))
    scripted_server.push(
        Reply(tool_calls=[subagent_call("work", agent="worker")]), Reply(text="done")
    )
    events = loop.run(turn(runtime, "go"))
    inner = [e.event for e in events if isinstance(e, ChildEvent)]
    refusal = next(e for e in inner if isinstance(e, ToolResult))
    assert not refusal.ok and "toolkit_subagent is not one of" in refusal.error


def test_an_unknown_identity_lists_the_available_ones(loop, runtime, scripted_server):
    scripted_server.push(Reply(tool_calls=[subagent_call("x", agent="wizard")]), Reply(text="done"))
    events = loop.run(turn(runtime, "go"))
    result = next(e for e in events if isinstance(e, ToolResult))
    assert not result.ok
    assert "no subagent identity 'wizard'" in result.error
    assert "explorer" in result.error and "worker" in result.error


def test_a_failed_child_returns_its_error_as_the_result(loop, runtime, scripted_server):
    scripted_server.on(is_child("explorer"), Reply(status=400, error_message="model exploded"))
    scripted_server.push(Reply(tool_calls=[subagent_call("fail")]), Reply(text="noted"))
    events = loop.run(turn(runtime, "go"))
    result = next(e for e in events if isinstance(e, ToolResult))
    assert not result.ok and "the subagent failed" in result.error
    assert "model exploded" in result.error
    assert isinstance(events[-1], Done)


def test_cancelling_the_parent_stops_its_children(loop, runtime, scripted_server):
    asked = threading.Event()

    def slow(request: dict) -> Reply:
        asked.set()
        return Reply(text="late", delay=30)

    scripted_server.on(is_child("explorer"), slow)
    scripted_server.push(Reply(tool_calls=[subagent_call("slow work")]))

    async def go():
        session = runtime.session()

        async def consume():
            async for _ in session.run_turn("go"):
                pass

        task = asyncio.create_task(consume())
        await asyncio.to_thread(asked.wait, 10)
        await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return session.topic_id

    parent = loop.run(go())
    (child,) = runtime.store.topics.children(parent)
    last = runtime.store.messages.of_topic(child.id)[-1]
    assert last.role == "assistant" and last.status == "stopped"
    parent_tool = [m for m in runtime.store.messages.of_topic(parent) if m.role == "tool"]
    assert parent_tool and parent_tool[-1].status == "stopped"


def test_async_mode_returns_at_once_and_the_answer_reaches_the_inbox(
    loop, runtime, scripted_server
):
    release = threading.Event()

    def child(request: dict) -> Reply:
        release.wait(10)
        return Reply(text="background answer")

    scripted_server.on(is_child("researcher"), child)
    scripted_server.push(
        Reply(tool_calls=[subagent_call("find out", agent="researcher", mode="async")]),
        Reply(text="started it"),
    )

    async def go():
        events = await turn(runtime, "go")
        release.set()
        for _ in range(200):
            if not runtime.subagents.running():
                break
            await asyncio.sleep(0.05)
        return events

    events = loop.run(go())
    result = next(e for e in events if isinstance(e, ToolResult))
    assert result.ok and "in the background" in result.output
    topic = events[-1].topic_id
    (message,) = runtime.store.inbox.read(f"topic:{topic}")
    assert message.kind == "result" and "background answer" in message.text
    assert message.data["ok"] is True


def test_the_turns_token_budget_for_subagents_is_enforced(scripted_server, write_config, workspace):
    write_config(
        {
            "main_model": {
                "api_key": "sk-test",
                "api_url": scripted_server.base_url,
                "model_name": "scripted-model",
            },
            "agent": {"workspace": str(workspace), "subagents": {"turn_tokens": 500}},
        }
    )
    scripted_server.on(
        is_child("explorer"), Reply(text="big", prompt_tokens=600, completion_tokens=10)
    )
    scripted_server.push(
        Reply(tool_calls=[subagent_call("first")]),
        Reply(tool_calls=[subagent_call("second")]),
        Reply(text="done"),
    )
    one = OneLoop()
    runtime = one.runtime
    try:
        events = one.run(turn(runtime, "go"))
        children = runtime.store.topics.children(events[-1].topic_id)
    finally:
        one.close()
    results = [e for e in events if isinstance(e, ToolResult)]
    assert "used 610 tokens, the limit is 500" in results[0].error
    assert "agent.subagents.turn_tokens" in results[1].error
    assert len(children) == 1


def test_msg_lists_agents_and_the_children_of_this_conversation(loop, runtime, scripted_server):
    scripted_server.on(is_child("explorer"), Reply(text="seen"))
    scripted_server.push(
        Reply(tool_calls=[subagent_call("peek")]),
        Reply(tool_calls=[ToolCallSpec("toolkit_subagent_msg", {"action": "list"})]),
        Reply(text="listed"),
    )
    events = loop.run(turn(runtime, "go"))
    listing = [e for e in events if isinstance(e, ToolResult)][-1].output
    assert "- explorer:" in listing and "- worker:" in listing
    assert "explorer finished: explorer: peek" in listing


def test_messages_travel_between_a_parent_and_its_child(loop, runtime, scripted_server):
    answers = iter(
        [
            Reply(
                tool_calls=[
                    ToolCallSpec(
                        "toolkit_subagent_msg",
                        {"action": "send", "to": "parent", "text": "halfway there"},
                    )
                ]
            ),
            Reply(text="finished"),
        ]
    )
    scripted_server.on(is_child("worker"), lambda request: next(answers))
    scripted_server.push(
        Reply(tool_calls=[subagent_call("work", agent="worker")]),
        Reply(tool_calls=[ToolCallSpec("toolkit_subagent_msg", {"action": "check_inbox"})]),
        Reply(text="read it"),
    )
    events = loop.run(turn(runtime, "go"))
    inbox = [e for e in events if isinstance(e, ToolResult)][-1]
    assert "halfway there" in inbox.output
    (child,) = runtime.store.topics.children(events[-1].topic_id)
    assert inbox.output.startswith(f"From topic:{child.id} (message):")  # who sent it


def test_parallel_subtasks_split_run_and_combine(loop, runtime, scripted_server):
    split = lambda request: "Split the task below" in last_user(request)  # noqa: E731
    combine = lambda request: "Several workers each did part" in last_user(request)  # noqa: E731
    scripted_server.on(split, Reply(text='["count the py files", "count the md files"]'))
    scripted_server.on(combine, Reply(text="3 py files and 1 md file."))
    scripted_server.on(
        is_child("worker"),
        lambda request: Reply(
            text="did: count the py files"
            if "count the py files" in last_user(request)
            else "did: count the md files"
        ),
    )
    scripted_server.push(
        Reply(
            tool_calls=[
                ToolCallSpec("toolkit_parallel_subtasks", {"task": "count files by type", "n": 2})
            ]
        ),
        Reply(text="Counted."),
    )
    events = loop.run(turn(runtime, "count files by type"))
    result = next(e for e in events if isinstance(e, ToolResult))
    assert result.ok, result.error
    assert "## Subtask 1: count the py files" in result.output
    assert "did: count the py files" in result.output
    assert "did: count the md files" in result.output
    assert result.output.endswith("## Combined answer\n3 py files and 1 md file.")
    assert len(runtime.store.topics.children(events[-1].topic_id)) == 2


def test_a_childs_writes_go_through_the_parents_approval(scripted_server, write_config, workspace):
    write_config(
        {
            "main_model": {
                "api_key": "sk-test",
                "api_url": scripted_server.base_url,
                "model_name": "scripted-model",
            },
            "agent": {"workspace": str(workspace), "approval": "ask"},
        }
    )
    write = ToolCallSpec(
        "toolkit_file", {"action": "write", "filename": "note.txt", "content": "hi"}
    )
    answers = iter([Reply(tool_calls=[write]), Reply(text="wrote it")])
    scripted_server.on(is_child("worker"), lambda request: next(answers))
    scripted_server.push(
        Reply(tool_calls=[subagent_call("write a note", agent="worker")]), Reply(text="ok")
    )
    asked: list[str] = []

    def approve(name: str, arguments: str) -> bool:
        asked.append(name)
        return False

    one = OneLoop()
    try:

        async def go():
            session = one.runtime.session(approve=approve)
            return [event async for event in session.run_turn("note")]

        events = one.run(go())
    finally:
        one.close()
    assert asked == ["toolkit_file"]
    refused = [e.event for e in events if isinstance(e, ChildEvent)]
    assert any(isinstance(e, ToolResult) and "declined" in (e.error or "") for e in refused)
    assert not (workspace / "note.txt").exists()


def test_at_most_max_parallel_children_run_at_once(scripted_server, write_config, workspace):
    write_config(
        {
            "main_model": {
                "api_key": "sk-test",
                "api_url": scripted_server.base_url,
                "model_name": "scripted-model",
            },
            "agent": {"workspace": str(workspace), "subagents": {"max_parallel": 1}},
        }
    )
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}

    def child(request: dict) -> Reply:
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        threading.Event().wait(0.05)
        with lock:
            state["now"] -= 1
        return Reply(text="one")

    scripted_server.on(is_child("explorer"), child)
    scripted_server.push(
        Reply(tool_calls=[subagent_call("a"), subagent_call("b"), subagent_call("c")]),
        Reply(text="done"),
    )
    one = OneLoop()
    try:
        events = one.run(turn(one.runtime, "go"))
    finally:
        one.close()
    assert [e.ok for e in events if isinstance(e, ToolResult)] == [True, True, True]
    assert state["peak"] == 1
