"""TaskExecutor for real: shell commands in the workspace, prompt turns against the scripted
model, notifications; driven through the runner as the scheduler drives it."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tea_agent_mini.config import load_config
from tea_agent_mini.runtime import Runtime
from tea_agent_mini.scheduler.execute import TaskExecutor
from tea_agent_mini.scheduler.runner import SchedulerRunner
from tea_agent_mini.scheduler.service import TaskService
from tea_agent_mini.store.tasks import OUTPUT_LIMIT
from tea_agent_mini.toolkit.notices import NOTICES_KEY
from tests.fakes.script import without_context_block
from tests.fakes.scripted_server import Reply, ToolCallSpec
from tests.scheduler.scheduler_helpers import FakeClock, utc


@pytest.fixture
def shell_config(write_config, workspace: Path) -> Path:
    return write_config({"agent": {"workspace": str(workspace)}})


def run_task(add: dict, times: int = 1, clock: FakeClock | None = None):
    """Add a task, run it ``times`` times through the runner; (runs oldest first, task)."""

    async def main():
        runtime = Runtime(load_config())
        try:
            service = TaskService(runtime.store, runtime=runtime, clock=clock)
            task = service.add(add.pop("name", "job"), add.pop("schedule", "daily:09:00"), **add)
            runner = SchedulerRunner(runtime.store, TaskExecutor(runtime), clock)
            runs = [await runner.run_now(task.id) for _ in range(times)]
            return runs, runtime.store.tasks.get(task.id), runtime
        finally:
            await runtime.aclose()

    return asyncio.run(main())


def test_a_shell_task_runs_in_the_workspace_and_records_exit_code_and_output(
    shell_config, workspace: Path
):
    (workspace / "data.txt").write_text("one\ntwo\n")
    command = "wc -l < data.txt; echo err >&2; touch ran.flag"
    (run,), task, _ = run_task({"command": command})
    assert run.status == "ok" and run.exit_code == 0 and run.error is None
    assert run.output.split() == ["2", "err"]
    assert (workspace / "ran.flag").exists()
    assert task.last_status == "ok" and task.topic_id is None


@pytest.mark.parametrize(
    "command, status, exit_code, error",
    [
        ("echo partial; exit 3", "failed", 3, "exit code 3"),
        ("sleep 30", "timeout", None, "killed: idle timeout"),
    ],
)
def test_failing_and_hanging_commands(shell_config, command, status, exit_code, error):
    (run,), _, _ = run_task({"command": command, "timeout": 1})
    assert run.status == status
    assert exit_code is None or run.exit_code == exit_code
    assert run.error is not None and run.error.startswith(error)


def test_long_output_is_capped_keeping_head_and_tail(shell_config):
    command = "echo FIRST; yes 0123456789 | head -c 100000; echo; echo LAST"
    (run,), _, _ = run_task({"command": command})
    assert run.status == "ok"
    assert len(run.output) <= OUTPUT_LIMIT + 200
    assert run.output.startswith("FIRST") and run.output.rstrip().endswith("LAST")
    assert "omitted" in run.output


def test_the_deny_list_applies_when_the_command_was_changed_behind_the_service(shell_config):
    async def main():
        runtime = Runtime(load_config())
        try:
            task = TaskService(runtime.store).add("wipe", "daily:09:00", command="echo safe")
            runtime.store.tasks.update(task.id, command="rm -rf ~")
            runner = SchedulerRunner(runtime.store, TaskExecutor(runtime))
            return await runner.run_now(task.id)
        finally:
            await runtime.aclose()

    run = asyncio.run(main())
    assert run.status == "failed" and "deny-list" in (run.error or "")


def test_a_prompt_task_runs_real_turns_in_its_own_session(model_config, scripted_server):
    # follow-up jobs after a turn (titles, summaries) send no tools: keep them off the script
    scripted_server.on(lambda request: not request.get("tools"), Reply(text="background"))
    scripted_server.push(
        Reply(tool_calls=[ToolCallSpec("toolkit_exec", {"command": "echo 41"})]),
        Reply(text="The answer is 42."),
        Reply(text="Still 42."),
    )
    runs, task, runtime = run_task({"name": "daily check", "prompt": "What is the answer?"}, 2)
    first, second = runs
    assert first.status == "ok" and first.output == "The answer is 42."
    assert second.status == "ok" and second.output == "Still 42."
    assert task.topic_id and first.topic_id == second.topic_id == task.topic_id

    async def read():
        fresh = Runtime(load_config())  # what the UI would read later
        try:
            topic = fresh.store.topics.get(task.topic_id)
            return topic, fresh.store.messages.of_topic(task.topic_id)
        finally:
            await fresh.aclose()

    topic, history = asyncio.run(read())
    assert topic.title == "Task: daily check"
    assert [m.role for m in history] == ["user", "assistant", "tool", "assistant"] + [
        "user",
        "assistant",
    ]
    assert history[0].text == "What is the answer?"
    assert "41" in history[2].text
    assert history[3].text == "The answer is 42." and history[-1].text == "Still 42."
    # the second run's turn saw the first one's answer: it is one continuing session
    assert any(
        r["messages"][-1]["role"] == "user"
        and without_context_block(r["messages"][-1]["content"]) == "What is the answer?"
        and {"role": "assistant", "content": "The answer is 42."} in r["messages"]
        for r in scripted_server.requests
    )


def test_a_prompt_task_whose_session_was_deleted_gets_a_new_one(model_config, scripted_server):
    async def main():
        runtime = Runtime(load_config())
        try:
            task = TaskService(runtime.store).add("ask", "daily:09:00", prompt="hello?")
            runner = SchedulerRunner(runtime.store, TaskExecutor(runtime))
            first = await runner.run_now(task.id)
            runtime.store.topics.delete(first.topic_id)
            second = await runner.run_now(task.id)
            return first, second, runtime.store.tasks.get(task.id)
        finally:
            await runtime.aclose()

    first, second, task = asyncio.run(main())
    assert first.status == second.status == "ok" and second.output == "echo: hello?"
    assert second.topic_id != first.topic_id and task.topic_id == second.topic_id


def test_a_prompt_task_without_a_model_fails_with_the_config_message(shell_config):
    (run,), _, _ = run_task({"prompt": "hello?"})
    assert run.status == "failed"
    assert run.error.startswith("cannot start the turn:") and "model_name" in run.error


def test_a_prompt_turn_that_fails_is_recorded_with_its_error(model_config, scripted_server):
    scripted_server.push(Reply(status=400, error_message="model exploded"))
    (run,), _, _ = run_task({"prompt": "hello?"})
    assert run.status == "failed" and run.error.startswith("upstream:")
    assert run.topic_id is not None


def test_a_finished_run_notifies_as_a_saved_notice_without_a_desktop(
    shell_config, monkeypatch, tmp_path
):
    empty = tmp_path / "no-binaries"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # no notify-send: the notice is saved for the UI
    clock = FakeClock(utc("2026-01-05 09:00"))
    (run,), task, _ = run_task({"command": "echo backed up", "notify": True}, clock=clock)
    assert run.status == "ok"

    async def notices():
        runtime = Runtime(load_config())
        try:
            return runtime.store.state.get("topic:default", NOTICES_KEY)
        finally:
            await runtime.aclose()

    (notice,) = asyncio.run(notices())
    assert notice["title"] == "Task job: ok" and notice["message"] == "backed up"
    assert notice["urgency"] == "normal"
