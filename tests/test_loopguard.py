"""The loop guard, fed with results from the real executor where the wording matters."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tea_agent_mini.agent.loopguard import LoopGuard, is_call_error
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.executor import ToolExecutor
from tea_agent_mini.toolkit.registry import Toolkit
from tea_agent_mini.types import ToolCall, ToolResult


def ok(name: str = "toolkit_gettime") -> ToolResult:
    return ToolResult("c", name, ok=True, output="fine")


def failed(error: str, name: str = "toolkit_file") -> ToolResult:
    return ToolResult("c", name, ok=False, error=error)


@pytest.fixture
def executor(workspace: Path, tea_home: Path) -> ToolExecutor:
    toolkit = Toolkit.load(["files.files", "system"])
    return ToolExecutor(toolkit, ToolContext(workspace=workspace, home=tea_home))


def execute(executor: ToolExecutor, name: str, arguments: str) -> ToolResult:
    return asyncio.run(executor.run(ToolCall("c1", name, arguments)))


def test_three_identical_successful_calls_stop_the_turn():
    guard = LoopGuard()
    for _ in range(2):
        guard.record(ok(), "{}")
    assert guard.verdict() is None
    guard.record(ok(), "{ }")  # the same arguments, spelled differently
    assert guard.verdict() == (
        "Stopped: toolkit_gettime was called 3 times in a row with the same arguments. "
        "Its result will not change by asking again."
    )


def test_a_different_call_or_different_arguments_start_over():
    guard = LoopGuard()
    guard.record(ok(), '{"a": 1, "b": 2}')
    guard.record(ok(), '{"b": 2, "a": 1}')
    guard.record(ok(), '{"a": 1}')
    guard.record(ok("toolkit_os_info"), "{}")
    guard.record(ok(), "{}")
    assert guard.verdict() is None


def test_a_failing_tool_gets_three_tries_and_the_stop_names_the_error_and_the_fix():
    guard = LoopGuard()
    error = "'missing.txt' does not exist in the workspace"
    guard.record(failed(error), '{"action": "read", "filename": "missing.txt"}')
    guard.record(failed(error), '{"action": "read", "filename": "missing.txt"}')
    assert guard.verdict() is None  # a tool may fail once for a passing reason
    guard.record(failed(error), '{"action": "read", "filename": "missing.txt"}')
    verdict = guard.verdict()
    assert verdict is not None
    assert verdict.startswith("Stopped: toolkit_file failed 3 times in a row")
    assert f"Last error: {error}" in verdict
    assert "Instead: change the arguments or take another approach" in verdict


def test_a_success_in_between_resets_the_failures():
    guard = LoopGuard()
    guard.record(failed("timeout", "toolkit_web_fetch"), "{}")
    guard.record(ToolResult("c", "toolkit_web_fetch", ok=True), "{}")
    guard.record(failed("timeout", "toolkit_web_fetch"), "{}")
    verdict = guard.verdict()
    assert verdict is not None and "was called 3 times" in verdict  # not "failed 3 times"


def test_an_unknown_tool_twice_is_enough(executor):
    guard = LoopGuard()
    guard.record(execute(executor, "write_file", '{"filename": "a"}'), '{"filename": "a"}')
    assert guard.verdict() is None
    guard.record(execute(executor, "write_file", '{"filename": "a"}'), '{"filename": "a"}')
    verdict = guard.verdict()
    assert verdict is not None
    assert verdict.startswith("Stopped: write_file failed 2 times in a row")
    assert "Did you mean: toolkit_file?" in verdict
    assert verdict.endswith("Instead: call a tool by one of the exact names the error suggests.")


def test_a_missing_action_twice_stops_with_the_valid_call(executor):
    guard = LoopGuard()
    arguments = '{"filename": "a.txt", "content": "x", "recursive": true}'
    for _ in range(2):
        guard.record(execute(executor, "toolkit_file", arguments), arguments)
    verdict = guard.verdict()
    assert verdict is not None and "failed 2 times" in verdict
    example = verdict.split("Instead: send the call with an action, e.g. ", 1)[1]
    assert json.loads(example)["action"] in ("read", "write", "append")


def test_arguments_the_tool_refuses_twice_are_enough(executor):
    guard = LoopGuard()
    arguments = '{"action": "read", "filename": "a", "colour": "red"}'
    for _ in range(2):
        guard.record(execute(executor, "toolkit_file", arguments), arguments)
    verdict = guard.verdict()
    assert verdict is not None and "unexpected parameter(s) 'colour'" in verdict
    assert verdict.endswith("Instead: change the arguments as the error says.")


def test_a_long_error_is_shortened():
    guard = LoopGuard()
    error = "unknown tool 'x'. " + "word " * 200
    for _ in range(2):
        guard.record(failed(error, "x"), "{}")
    verdict = guard.verdict()
    assert verdict is not None and len(verdict) < 400 and "... Instead:" in verdict


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("toolkit_nope", "{}"),
        ("toolkit_file", "[1, 2"),
        ("toolkit_file", '"just text"'),
        ("toolkit_file", '{"action": "read", "filename": "a", "colour": "red"}'),
        ("toolkit_file", '{"action": "shred", "filename": "a"}'),
        ("toolkit_file", '{"action": "read", "filename": 5}'),
        ("toolkit_file", '{"filename": "a", "content": "x", "recursive": true}'),
        ("toolkit_gettime", '{"timezone": 5}'),
    ],
)
def test_the_executors_words_for_a_wrong_call_are_recognised(executor, name, arguments):
    result = execute(executor, name, arguments)
    assert not result.ok and result.error is not None
    assert is_call_error(result.error), result.error


def test_a_tool_failing_on_its_own_is_not_a_wrong_call(executor):
    result = execute(executor, "toolkit_file", '{"action": "read", "filename": "missing.txt"}')
    assert not result.ok and result.error is not None
    assert not is_call_error(result.error)
