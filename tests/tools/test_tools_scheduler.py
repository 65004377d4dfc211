"""toolkit_scheduler end to end: through the registry and the executor, on a real runtime."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from tea_agent_mini.config import load_config
from tea_agent_mini.runtime import Runtime
from tea_agent_mini.scheduler.service import TaskService, start_scheduler, stop_scheduler
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.executor import ToolExecutor
from tea_agent_mini.toolkit.registry import Toolkit
from tea_agent_mini.types import ToolCall
from tests.fakes.scripted_server import Reply

TOOL = "toolkit_scheduler"


@pytest.fixture
def toolkit():
    loaded = Toolkit.load(["scheduler"])
    assert loaded.load_errors == {} and loaded.names() == [TOOL]
    return loaded


def make_call(executor: ToolExecutor):
    async def call(**arguments):
        return await executor.run(ToolCall("c1", TOOL, json.dumps(arguments)))

    return call


def with_tool(toolkit, body, approval="auto"):
    """Run ``await body(call, runtime)`` with the tool on a fresh runtime."""

    async def main():
        runtime = Runtime(load_config())
        config = runtime.config
        ctx = ToolContext(
            config.workspace, config.home, store=runtime.store, runtime=runtime, approval=approval
        )
        try:
            return await body(make_call(ToolExecutor(toolkit, ctx)), runtime)
        finally:
            await stop_scheduler(runtime)
            await runtime.aclose()

    return asyncio.run(main())


@pytest.fixture
def shell_config(write_config, workspace: Path) -> Path:
    return write_config({"agent": {"workspace": str(workspace)}})


def test_every_action_end_to_end(shell_config, toolkit, workspace: Path):
    async def body(call, runtime):
        seen = {}
        seen["test"] = await call(action="test", schedule="daily:02:00", tz="UTC", count=3)
        seen["add"] = await call(
            action="add", name="nightly", schedule="daily:02:00", tz="UTC",
            command="echo hello > out.txt; cat out.txt", timeout=20,
        )  # fmt: skip
        seen["list"] = await call(action="list")
        seen["update"] = await call(action="update", id="nightly", schedule="hourly:30")
        seen["disable"] = await call(action="disable", id=1)
        seen["enable"] = await call(action="enable", id="1")
        seen["empty"] = await call(action="history", id="nightly")
        seen["run_now"] = await call(action="run_now", id="nightly")
        seen["history"] = await call(action="history", id="nightly", count=5)
        seen["delete"] = await call(action="delete", id="nightly")
        seen["none"] = await call(action="list")
        return seen

    seen = with_tool(toolkit, body)
    for name, result in seen.items():
        assert result.ok, (name, result.error)
    out = {name: result.output for name, result in seen.items()}
    assert out["test"].startswith("daily:02:00 tz=UTC = every day at 02:00 (UTC); next 3")
    assert len(re.findall(r"^  \d{4}-\d\d-\d\d 02:00:00 UTC", out["test"], re.M)) == 3
    assert out["add"].startswith("Added:\n#1 nightly [shell, enabled] daily:02:00 tz=UTC")
    assert "command: echo hello > out.txt; cat out.txt" in out["add"]
    assert out["list"].startswith("1 task(s):\n#1 nightly")
    assert "hourly:30 tz=UTC (every hour at :30 (UTC))" in out["update"]
    assert "[shell, disabled]" in out["disable"] and "[shell, enabled]" in out["enable"]
    assert out["empty"] == "Task #1 nightly has not run yet."
    assert out["run_now"].startswith("Ran #1 nightly:\nrun #1 ok")
    assert "exit code 0" in out["run_now"] and "      hello" in out["run_now"]
    assert (workspace / "out.txt").read_text() == "hello\n"
    assert out["history"].startswith("Last 1 run(s) of #1 nightly, newest first:\nrun #1 ok")
    assert out["delete"] == "Deleted task #1 nightly and its run history."
    assert out["none"] == "No scheduled tasks."


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"action": "add", "name": "x", "schedule": "daily:9", "command": "true"}, "not HH:MM"),
        ({"action": "add", "name": "x", "schedule": "0 9 * * *", "command": "true"}, "cron:0 9"),
        ({"action": "add", "name": "x", "schedule": "hourly:00"}, "needs a command"),
        ({"action": "test", "schedule": "cron:0 0 30 2 *"}, "can never fire"),
        ({"action": "update", "name": "y"}, "update needs the task's id"),
        ({"action": "run_now", "id": 42}, "no task with id or name '42'"),
        ({"action": "history", "id": "ghost"}, "no task with id or name 'ghost'"),
    ],
)
def test_mistakes_come_back_as_readable_errors(shell_config, toolkit, arguments, message):
    async def body(call, runtime):
        return await call(**arguments)

    result = with_tool(toolkit, body)
    assert not result.ok and message in result.error


def test_only_changes_count_as_mutating_and_read_only_mode_allows_reading(shell_config, toolkit):
    spec = toolkit.get(TOOL)
    reading = ("list", "history", "test")
    assert not any(spec.mutates_with({"action": action}) for action in reading)
    changing = ("add", "update", "delete", "enable", "disable", "run_now")
    assert all(spec.mutates_with({"action": action}) for action in changing)

    async def body(call, runtime):
        listed = await call(action="list")
        added = await call(action="add", name="x", schedule="hourly:00", command="true")
        return listed, added

    listed, added = with_tool(toolkit, body, approval="never")
    assert listed.ok and listed.output == "No scheduled tasks."
    assert not added.ok and "read-only mode" in added.error


@pytest.mark.parametrize("with_scheduler", [True, False])
def test_run_now_runs_a_prompt_task_on_the_scheduler_or_on_its_own(
    model_config, scripted_server, toolkit, with_scheduler, monkeypatch
):
    if with_scheduler:  # the run must go through the started scheduler, not around it

        async def detached(self, task_id):
            raise AssertionError("ran detached although a scheduler is running")

        monkeypatch.setattr(TaskService, "_run_detached", detached)
    scripted_server.on(lambda request: not request.get("tools"), Reply(text="background"))
    scripted_server.push(Reply(text="Good morning!"))

    async def body(call, runtime):
        if with_scheduler:
            runner = await start_scheduler(runtime)
            assert runtime.scheduler is runner
        added = await call(action="add", name="greet", schedule="daily:07:00", prompt="Greet me")
        ran = await call(action="run_now", id="greet")
        task = runtime.store.tasks.find("greet")
        history = runtime.store.messages.of_topic(task.topic_id)
        return added, ran, [m.text for m in history]

    added, ran, texts = with_tool(toolkit, body)
    assert added.ok and "[prompt, enabled]" in added.output and "prompt: Greet me" in added.output
    assert ran.ok, ran.error
    assert "run #1 ok" in ran.output and "      Good morning!" in ran.output
    assert texts == ["Greet me", "Good morning!"]
