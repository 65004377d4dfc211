"""A call without the ``action`` of a multi-action tool: filled in, or answered with an example."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.callfix import ActionDoc, complete_action
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.executor import ToolExecutor
from tea_agent_mini.toolkit.registry import Toolkit, ToolSpec, tool
from tea_agent_mini.types import ToolCall

NOTES = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["list", "add", "rename", "delete"]},
        "title": {"type": "string", "description": "[add/rename/delete] the note's title"},
        "body": {"type": "string", "description": "[add] the text"},
        "new_title": {"type": "string", "description": "[rename] the new title"},
        "folder": {"type": "string", "description": "where the notes are (default: all)"},
    },
    "required": ["action"],
}


@tool("notes", "Keep notes.", NOTES, mutates=True, mutating_actions=("add", "rename", "delete"))
def notes(ctx, action, title="", body="", new_title="", folder=""):
    return f"{action} {title} {body} {new_title}".strip()


@pytest.fixture(scope="module")
def toolkit() -> Toolkit:
    loaded = Toolkit.load(["files.files", "todo", "git.git", "memory", "dates.lunar"])
    loaded.register(notes.tool_spec)
    return loaded


def spec(toolkit: Toolkit, name: str) -> ToolSpec:
    found = toolkit.get(name)
    assert found is not None
    return found


@pytest.mark.parametrize(
    ("name", "arguments", "action"),
    [
        # the documented parameters leave one action
        ("notes", {"title": "a", "body": "text"}, "add"),
        ("notes", {"title": "a", "new_title": "b"}, "rename"),
        ("notes", {"folder": "work", "new_title": "b"}, "rename"),
        ("toolkit_file", {"path": "src", "recursive": True}, "list"),
        ("toolkit_file", {"filename": "a.txt", "offset": 10}, "read"),
        ("toolkit_git", {"staged": True}, "diff"),
        ("toolkit_todo", {"id": 2, "status": "done"}, "update"),
        ("toolkit_memory", {"content": "The user likes tea"}, "add"),
        # toolkit_file's table: a file name alone is read, with content it is written
        ("toolkit_file", {"filename": "a.txt", "content": "hi"}, "write"),
        ("toolkit_file", {"path": "a.txt", "content": "hi"}, "write"),
        ("toolkit_file", {"filename": "a.txt"}, "read"),
        ("toolkit_file", {"path": "a.txt"}, "read"),
        ("toolkit_todo", {"text": "buy milk"}, "add"),
        # no arguments at all: a harmless listing
        ("toolkit_file", {}, "list"),
        ("toolkit_git", {}, "status"),
        ("toolkit_todo", {}, "list"),
        ("notes", {}, "list"),
        # the action under another key, or null
        ("toolkit_file", {"operation": "append", "filename": "a", "content": "x"}, "append"),
        ("toolkit_file", {"action": None, "filename": "a.txt"}, "read"),
        ("toolkit_file", {"action": "", "path": "a.txt"}, "read"),
    ],
)
def test_the_action_is_filled_in_when_the_arguments_tell(toolkit, name, arguments, action):
    completed, assumed = complete_action(spec(toolkit, name), dict(arguments))
    assert assumed == action
    rest = {k: v for k, v in arguments.items() if k not in ("action", "operation")}
    assert completed == {"action": action, **rest}


@pytest.mark.parametrize(
    ("name", "arguments", "fragments"),
    [
        # a tie nothing breaks: never guessed, least of all a deletion
        ("notes", {"title": "a"}, ["fit add, rename, delete", '{"action": "add", "title": "a"}']),
        ("toolkit_todo", {"id": 2}, ["fit update, remove", '{"action": "update", "id": 2}']),
        ("toolkit_memory", {"id": 3}, ["fit pin, unpin, forget", '{"action": "pin", "id": 3}']),
        ("toolkit_git", {"ref": "HEAD"}, ["fit diff, log, show", '"ref": "HEAD"']),
        (
            "toolkit_lunar",
            {"date": "2024-01-01"},
            ['{"action": "to_lunar", "date": "2024-01-01"}', "(actions: to_lunar, to_solar)"],
        ),
        # no action takes every argument: the one that takes the most
        (
            "toolkit_file",
            {"filename": "a", "content": "x", "recursive": True},
            ["no one action takes all of: content, filename, recursive", '"action": "write"'],
        ),
        # arguments the tool does not have: the example shows what the likeliest action needs
        (
            "toolkit_file",
            {"file_path": "a", "text": "x"},
            ["no parameter file_path, text", '{"action": "read", "filename": "<filename>"}'],
        ),
        # nothing at all, and no harmless action: the required parameters are shown
        ("toolkit_lunar", {}, ['{"action": "to_lunar", "date": "<date>"}']),
    ],
)
def test_otherwise_the_error_shows_a_valid_call(toolkit, name, arguments, fragments):
    with pytest.raises(ToolError) as raised:
        complete_action(spec(toolkit, name), dict(arguments))
    message = str(raised.value)
    assert message.startswith(f"{name}: the call has no 'action'")
    for fragment in fragments:
        assert fragment in message


def test_long_values_are_shortened_in_the_example(toolkit):
    arguments = {"title": "a", "body": "x" * 500, "new_title": "b"}
    with pytest.raises(ToolError) as raised:
        complete_action(spec(toolkit, "notes"), arguments)
    example = json.loads(str(raised.value).split("e.g. ", 1)[1].split(" (actions:")[0])
    assert example["action"] in ("add", "rename") and len(json.dumps(example)) < 120


def test_calls_that_name_the_action_or_tools_without_actions_pass_unchanged(toolkit):
    given = {"action": "write", "filename": "a", "content": "x"}
    assert complete_action(spec(toolkit, "toolkit_file"), given) == (given, None)
    echo = ToolSpec("echo", "", {"type": "object", "properties": {"a": {}}}, func=print)
    assert complete_action(echo, {"a": 1}) == ({"a": 1}, None)


def test_action_doc_reads_the_tags_of_each_parameter():
    doc = ActionDoc.of(NOTES)
    assert doc is not None
    assert doc.actions == ("list", "add", "rename", "delete")
    assert doc.uses["title"] == {"add", "rename", "delete"}
    assert doc.uses["folder"] == frozenset()  # untagged: every action
    assert doc.needs["add"] == ("title", "body")
    optional = {**NOTES, "required": []}
    assert ActionDoc.of(optional) is None


# ---- through the executor ------------------------------------------------------------------


def run(executor: ToolExecutor, arguments: dict, name: str = "toolkit_file"):
    return asyncio.run(executor.run(ToolCall("c1", name, json.dumps(arguments))))


@pytest.fixture
def executor(toolkit, workspace: Path, tea_home: Path) -> ToolExecutor:
    return ToolExecutor(toolkit, ToolContext(workspace=workspace, home=tea_home))


def test_a_write_without_action_writes_and_reports_as_usual(executor, workspace: Path):
    result = run(executor, {"filename": "n.txt", "content": "hello"})
    assert result.ok, result.error
    assert (workspace / "n.txt").read_text() == "hello"
    assert result.output == "created 5 bytes in n.txt"  # no note: the output is the tool's own
    read = run(executor, {"path": "n.txt"})
    assert read.ok and read.output == "hello"


def test_a_failure_after_a_guess_says_which_action_was_assumed(executor, workspace: Path):
    (workspace / "src").mkdir()
    result = run(executor, {"path": "src"})
    assert not result.ok
    assert "is a directory; use action 'list'" in result.error
    assert result.error.endswith("(the call had no 'action'; 'read' was assumed)")


def test_an_ambiguous_call_runs_nothing(executor):
    result = run(executor, {"title": "a"}, name="notes")
    assert not result.ok and "e.g." in result.error


def test_a_guessed_write_still_needs_approval(toolkit, workspace: Path, tea_home: Path):
    context = ToolContext(workspace=workspace, home=tea_home, approval="never")
    result = run(ToolExecutor(toolkit, context), {"filename": "n.txt", "content": "hello"})
    assert not result.ok and "read-only mode" in result.error
    assert not (workspace / "n.txt").exists()
