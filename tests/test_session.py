"""The turn loop through the public Session API, against the scripted model server."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from tea_agent_mini.config import load_config
from tea_agent_mini.facade import Agent
from tea_agent_mini.runtime import Runtime
from tea_agent_mini.types import (
    Done,
    Error,
    Notice,
    ReasoningDelta,
    TextDelta,
    ToolCallStart,
    ToolResult,
    Usage,
)
from tests.fakes.background import turn_requests
from tests.fakes.script import without_context_block
from tests.fakes.scripted_server import Reply, ToolCallSpec


def run_turn(text: str, topic_id: str | None = None, runtime: Runtime | None = None):
    async def go():
        rt = runtime or Runtime(load_config())
        try:
            session = rt.session(topic_id)
            events = [e async for e in session.run_turn(text)]
            history = rt.store.messages.of_topic(session.topic_id)
            return events, history, session.topic_id
        finally:
            if runtime is None:
                await rt.aclose()

    return asyncio.run(go())


def call(name: str, arguments, call_id: str | None = None) -> ToolCallSpec:
    return ToolCallSpec(name=name, arguments=arguments, id=call_id)


def test_text_turn_streams_and_persists(model_config, scripted_server):
    scripted_server.push(Reply(text="Hello there, friend.", reasoning="User greets me."))
    events, history, _ = run_turn("hi")
    text = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert text == "Hello there, friend."
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "User greets me."
    assert any(isinstance(e, Usage) for e in events)
    done = events[-1]
    assert isinstance(done, Done) and done.text == "Hello there, friend." and done.iterations == 1
    assert [m.role for m in history] == ["user", "assistant"]
    assert history[1].reasoning == "User greets me."
    request = turn_requests(scripted_server)[0]
    assert request["messages"][0]["role"] == "system"
    last = request["messages"][-1]
    assert last["role"] == "user" and without_context_block(last["content"]) == "hi"
    assert last["content"].startswith("<context>\n") and "Local time: " in last["content"]
    assert request["stream"] is True and request["stream_options"] == {"include_usage": True}
    assert any(t["function"]["name"] == "toolkit_file" for t in request["tools"])


def test_multi_step_tool_task(model_config, scripted_server, workspace: Path):
    scripted_server.push(
        Reply(
            tool_calls=[
                call(
                    "toolkit_file", {"action": "write", "filename": "n.txt", "content": "3\n4\n5\n"}
                )
            ]
        ),
        Reply(tool_calls=[call("toolkit_exec", {"command": "wc -l < n.txt"})]),
        Reply(text="The file has 3 lines."),
    )
    events, history, _ = run_turn("write n.txt and count its lines")
    assert (workspace / "n.txt").read_text() == "3\n4\n5\n"
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [r.name for r in results] == ["toolkit_file", "toolkit_exec"]
    assert all(r.ok for r in results), results
    assert "3" in results[1].output
    assert events[-1].text == "The file has 3 lines." and events[-1].iterations == 3
    roles = [m.role for m in history]
    assert roles == ["user", "assistant", "tool", "assistant", "tool", "assistant"]
    # The model saw the tool output in its next request.
    third = turn_requests(scripted_server)[2]["messages"]
    assert third[-1]["role"] == "tool" and "3" in third[-1]["content"]
    assert third[-2]["tool_calls"][0]["function"]["name"] == "toolkit_exec"


def test_parallel_safe_calls_keep_their_order(model_config, scripted_server, workspace: Path):
    (workspace / "a.py").write_text("alpha = 1\n")
    (workspace / "b.md").write_text("beta\n")
    scripted_server.push(
        Reply(
            tool_calls=[
                call("toolkit_glob", {"pattern": "*.py"}, "c1"),
                call("toolkit_grep", {"pattern": "beta"}, "c2"),
                call("toolkit_glob", {"pattern": "*.md"}, "c3"),
            ]
        ),
        Reply(text="done"),
    )
    events, history, _ = run_turn("look around")
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [r.call_id for r in results] == ["c1", "c2", "c3"]
    assert "a.py" in results[0].output and "b.md" in results[1].output
    assert [m.tool_call_id for m in history if m.role == "tool"] == ["c1", "c2", "c3"]


def test_write_outside_workspace_is_refused(model_config, scripted_server, tmp_path: Path):
    target = tmp_path / "outside.txt"
    scripted_server.push(
        Reply(
            tool_calls=[
                call("toolkit_file", {"action": "write", "filename": str(target), "content": "x"})
            ]
        ),
        Reply(
            tool_calls=[
                call(
                    "toolkit_file",
                    {"action": "write", "filename": "../outside.txt", "content": "x"},
                )
            ]
        ),
        Reply(text="I cannot write there."),
    )
    events, _, _ = run_turn("write outside")
    results = [e for e in events if isinstance(e, ToolResult)]
    assert len(results) == 2 and not any(r.ok for r in results)
    assert all("outside the workspace" in r.error for r in results)
    assert not target.exists()


def test_sloppy_tool_arguments_are_repaired(model_config, scripted_server, workspace: Path):
    sloppy = "```json\n{'action': 'write', 'filename': 'r.txt', 'content': 'repaired',}\n```"
    scripted_server.push(Reply(tool_calls=[call("toolkit_file", sloppy)]), Reply(text="ok"))
    events, _, _ = run_turn("write r.txt")
    assert (workspace / "r.txt").read_text() == "repaired"
    assert [e.ok for e in events if isinstance(e, ToolResult)] == [True]


def test_unrepairable_arguments_become_a_readable_tool_error(model_config, scripted_server):
    scripted_server.push(Reply(tool_calls=[call("toolkit_file", "[1, 2")]), Reply(text="sorry"))
    events, history, _ = run_turn("go")
    result = next(e for e in events if isinstance(e, ToolResult))
    assert not result.ok and "JSON object" in result.error
    assert history[2].role == "tool" and history[2].content.startswith("Error:")


def test_tool_calls_printed_as_text_are_executed(model_config, scripted_server, workspace):
    scripted_server.push(
        Reply(
            tool_calls=[
                call(
                    "toolkit_file", {"action": "write", "filename": "t.txt", "content": "from text"}
                )
            ],
            tool_calls_as_text=True,
        ),
        Reply(text="written"),
    )
    events, history, _ = run_turn("write t.txt")
    assert (workspace / "t.txt").read_text() == "from text"
    assert any(isinstance(e, Notice) and e.kind == "text_tools" for e in events)
    assert history[1].tool_calls and history[1].tool_calls[0].name == "toolkit_file"


def test_repeated_failing_call_stops_the_loop(model_config, scripted_server):
    bad = {"action": "read", "filename": "missing.txt"}
    scripted_server.push(*[Reply(tool_calls=[call("toolkit_file", bad)]) for _ in range(5)])
    events, history, _ = run_turn("read it")
    assert any(isinstance(e, Notice) and e.kind == "loop" for e in events)
    assert isinstance(events[-1], Done) and events[-1].finish_reason == "loop"
    assert len(turn_requests(scripted_server)) == 3
    assert history[-2].role == "tool"
    # the stop is recorded for the front ends, with nothing for the model to read
    assert history[-1].role == "assistant" and history[-1].content is None
    assert history[-1].status == "stopped" and history[-1].error == events[-1].text


def test_max_iterations(scripted_server, write_config, workspace):
    model = {"api_url": scripted_server.base_url, "model_name": "scripted-model"}
    write_config({"main_model": model, "agent": {"max_iterations": 2, "workspace": str(workspace)}})
    scripted_server.push(*[Reply(tool_calls=[call("toolkit_gettime", {})]) for _ in range(3)])
    events, _, _ = run_turn("loop")
    assert isinstance(events[-1], Done) and events[-1].finish_reason == "max_iterations"
    assert len(turn_requests(scripted_server)) == 2


def test_upstream_500_twice_then_success(model_config, scripted_server):
    scripted_server.push(Reply(status=500), Reply(status=500), Reply(text="third time lucky"))
    events, _, _ = run_turn("hi")
    assert events[-1].text == "third time lucky"
    assert sum(isinstance(e, Notice) and e.kind == "retry" for e in events) == 2


def test_stream_cut_after_text_is_an_error_not_an_answer(model_config, scripted_server):
    scripted_server.push(Reply(text="This answer will be cut somewhere in the middle", cut_after=4))
    events, history, _ = run_turn("hi")
    assert isinstance(events[-1], Error) and events[-1].kind == "interrupted"
    assert not any(isinstance(e, Done) for e in events)
    # what had arrived is kept as the failed turn's partial answer, with the error
    streamed = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert streamed and [m.role for m in history] == ["user", "assistant"]
    assert history[1].status == "failed" and history[1].content == streamed
    assert history[1].error == events[-1].message


def test_context_too_long_trims_and_retries_once(model_config, scripted_server):
    too_long = Reply(status=400, error_message="the request exceeds the available context size")
    scripted_server.push(too_long, Reply(text="fits now"))
    events, _, _ = run_turn("hi")
    assert any(isinstance(e, Notice) and e.kind == "trim" for e in events)
    assert events[-1].text == "fits now"


def test_agents_md_joins_the_system_prompt(model_config, scripted_server, workspace: Path):
    (workspace / "AGENTS.md").write_text("Always answer in French.")
    run_turn("hi")
    system = turn_requests(scripted_server)[0]["messages"][0]["content"]
    assert "Always answer in French." in system and str(workspace) in system


def test_topic_resumes_after_restart(model_config, scripted_server):
    scripted_server.push(Reply(text="first answer"))
    _, _, topic_id = run_turn("first question")
    scripted_server.push(Reply(text="second answer"))
    _, history, same = run_turn("second question", topic_id=topic_id)
    assert same == topic_id
    assert [m.text for m in history] == [
        "first question",
        "first answer",
        "second question",
        "second answer",
    ]
    sent = [m.get("content") for m in turn_requests(scripted_server)[1]["messages"][1:]]
    assert sent[:2] == ["first question", "first answer"]  # earlier turns without a block
    assert without_context_block(sent[2]) == "second question"


@pytest.mark.parametrize(
    ("reason", "stored"),
    [(None, "cancelled by the user"), ("the server shut down", "the server shut down; the call's")],
)
def test_cancelled_turn_leaves_consistent_history_and_stops_the_command(
    model_config, scripted_server, workspace: Path, reason, stored
):
    command = "echo $$ > pid.txt; sleep 30"
    scripted_server.push(Reply(tool_calls=[call("toolkit_exec", {"command": command})]))

    async def go():
        runtime = Runtime(load_config())
        session = runtime.session()
        started = asyncio.Event()

        async def consume():
            async for event in session.run_turn("sleep"):
                if isinstance(event, ToolCallStart):
                    started.set()

        task = asyncio.create_task(consume())
        await asyncio.wait_for(started.wait(), 10)
        for _ in range(100):  # until the shell has written its pid
            if (workspace / "pid.txt").exists() and (workspace / "pid.txt").read_text():
                break
            await asyncio.sleep(0.05)
        task.cancel(reason)
        with pytest.raises(asyncio.CancelledError):
            await task
        history = runtime.store.messages.of_topic(session.topic_id)
        await runtime.aclose()
        return history

    history = asyncio.run(go())
    assert [m.role for m in history] == ["user", "assistant", "tool", "assistant"]
    assert stored in history[2].content and history[2].status == "stopped"
    outcome = history[3]
    assert outcome.status == "stopped" and outcome.content is None
    assert outcome.error == "the turn was stopped" + (f": {reason}" if reason else "")
    pid = int((workspace / "pid.txt").read_text())
    for _ in range(60):  # the command is killed within a few polls, not after 30 s
        if not _alive(pid):
            break
        time.sleep(0.1)
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ")[-1].startswith("Z"))


def test_agent_facade_runs_a_prompt(model_config, scripted_server, workspace):
    scripted_server.push(Reply(text="42"))
    agent = Agent(workspace=str(workspace))
    assert agent.run("answer?") == "42"
    scripted_server.push(Reply(text="43"))
    assert agent.run("again?") == "43"
    assert len(turn_requests(scripted_server)[1]["messages"]) == 4  # system, user, answer, user


def test_relevant_memories_join_the_context_block(model_config, scripted_server):
    async def go():
        runtime = Runtime(load_config())
        try:
            runtime.memory.add("The user's cat is called Miso", category="fact")
            session = runtime.session()
            return [e async for e in session.run_turn("what is my cat called?")]
        finally:
            await runtime.aclose()

    events = asyncio.run(go())
    assert isinstance(events[-1], Done)
    messages = turn_requests(scripted_server)[0]["messages"]
    assert "Miso" not in messages[0]["content"]  # the system prompt stays the same
    block = messages[-1]["content"].removesuffix("what is my cat called?")
    assert block.startswith("<context>") and "Miso" in block
