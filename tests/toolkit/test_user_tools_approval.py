"""Self-made tools count as mutating; only the user marks one read-only, in its .json by hand."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.executor import ToolExecutor
from tea_agent_mini.toolkit.registry import Toolkit
from tea_agent_mini.toolkit.usertools import sync_user_tools
from tea_agent_mini.types import ToolCall, ToolResult

SCHEMA = {"type": "object", "properties": {"who": {"type": "string"}}, "required": ["who"]}
CODE = "def greet(ctx, who):\n    return 'hello ' + who\n"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def toolkit() -> Toolkit:
    return Toolkit.load(["selfmade"])


def executor(toolkit: Toolkit, home: Path, workspace: Path, approval: str) -> ToolExecutor:
    asked: list[str] = []

    def approve(name: str, arguments_json: str) -> bool:
        asked.append(name)
        return True

    context = ToolContext(workspace=workspace, home=home, approval=approval, approve=approve)
    context.toolkit = toolkit
    runner = ToolExecutor(toolkit, context)
    runner.asked = asked  # type: ignore[attr-defined]
    return runner


def call(runner: ToolExecutor, name: str, /, **arguments) -> ToolResult:
    return asyncio.run(runner.run(ToolCall(id="c", name=name, arguments=json.dumps(arguments))))


def save(runner: ToolExecutor, **extra) -> ToolResult:
    fields = {"name": "greet", "description": "Greet.", "parameters": SCHEMA, "code": CODE}
    return call(runner, "toolkit_save", **fields, **extra)


def mark_read_only(home: Path, value: object = True) -> None:
    meta_path = home / "tools" / "greet.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    meta["read_only"] = value
    meta_path.write_text(json.dumps(meta), encoding="utf-8")
    info = meta_path.stat()  # past the clock's resolution, so toolkit_reload sees the edit
    os.utime(meta_path, ns=(info.st_atime_ns, info.st_mtime_ns + 2_000_000_000))


def test_the_model_cannot_declare_its_tool_read_only(toolkit, home, workspace):
    runner = executor(toolkit, home, workspace, "auto")
    refused = save(runner, mutates=False)
    assert not refused.ok and "unexpected parameter(s) 'mutates'" in refused.error
    assert not (home / "tools" / "greet.py").exists()
    assert save(runner).ok
    assert toolkit.get("greet").mutates is True
    assert json.loads((home / "tools" / "greet.json").read_text())["read_only"] is False


def test_a_saved_tool_is_refused_under_never_and_asks_under_ask(toolkit, home, workspace):
    assert save(executor(toolkit, home, workspace, "auto")).ok
    never = call(executor(toolkit, home, workspace, "never"), "greet", who="A")
    assert not never.ok and "read-only mode (approval: never)" in never.error
    asking = executor(toolkit, home, workspace, "ask")
    assert call(asking, "greet", who="A").output == "hello A"
    assert asking.asked == ["greet"]  # type: ignore[attr-defined]


def test_an_old_mutates_false_written_by_the_model_is_ignored(toolkit, home, workspace):
    assert save(executor(toolkit, home, workspace, "auto")).ok
    meta_path = home / "tools" / "greet.json"
    meta = json.loads(meta_path.read_text())
    del meta["read_only"]
    meta_path.write_text(json.dumps({**meta, "mutates": False}), encoding="utf-8")
    fresh = Toolkit.load(["selfmade"])
    assert sync_user_tools(fresh, home).loaded == ["greet"]
    assert not call(executor(fresh, home, workspace, "never"), "greet", who="A").ok


def test_the_user_marks_a_tool_read_only_until_the_next_save(toolkit, home, workspace):
    runner = executor(toolkit, home, workspace, "auto")
    assert save(runner).ok
    mark_read_only(home, "yes")  # only a JSON true counts
    assert call(runner, "toolkit_reload").output == "reloaded: greet"
    assert toolkit.get("greet").mutates is True

    mark_read_only(home)
    assert call(runner, "toolkit_reload").output == "reloaded: greet"
    assert call(executor(toolkit, home, workspace, "never"), "greet", who="B").output == "hello B"
    asking = executor(toolkit, home, workspace, "ask")
    assert call(asking, "greet", who="B").ok and asking.asked == []  # type: ignore[attr-defined]

    assert save(runner).ok  # new code the user has not looked at
    assert toolkit.get("greet").mutates is True
    assert not call(executor(toolkit, home, workspace, "never"), "greet", who="C").ok
