"""toolkit_memory end to end: through the registry and the executor, on a real store."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from tea_agent_mini.store import Store
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.executor import ToolExecutor
from tea_agent_mini.toolkit.registry import Toolkit
from tea_agent_mini.types import ToolCall


@pytest.fixture
def store(tmp_path):
    with Store.open(tmp_path / "chat.db") as opened:
        yield opened


@pytest.fixture
def call(store, tmp_path):
    toolkit = Toolkit.load(["memory"])
    assert toolkit.load_errors == {} and toolkit.names() == ["toolkit_memory"]
    ctx = ToolContext(workspace=tmp_path, home=tmp_path, store=store, topic_id="topic-1")
    executor = ToolExecutor(toolkit, ctx)

    def run(**arguments):
        return asyncio.run(executor.run(ToolCall("c1", "toolkit_memory", json.dumps(arguments))))

    return run


def memory_id(text):
    return int(re.search(r"#(\d+)", text).group(1))


def test_add_list_search_forget(call, store):
    added = call(action="add", content="The user prefers dark mode", category="preference",
                 priority="HIGH", tags=["ui", "editor"])  # fmt: skip
    assert added.ok, added.error
    assert added.output.startswith("Remembered: #")
    assert "[HIGH preference] The user prefers dark mode (tags: ui, editor)" in added.output
    first = memory_id(added.output)
    assert store.memories.get(first).source_topic == "topic-1"

    second = call(action="add", content="Deploys go to a Raspberry Pi", priority=2)
    assert second.ok and "[MEDIUM general]" in second.output
    dup = call(action="add", content="the user prefers  dark mode")
    assert dup.ok and dup.output.startswith("Already remembered: #" + str(first))

    listing = call(action="list")
    assert listing.ok
    lines = listing.output.splitlines()
    assert lines[0] == "2 of 2 memories (strongest first):"
    assert lines[1].startswith(f"#{first} [HIGH preference]")
    assert call(action="list", priority="MEDIUM").output.count("\n") == 1
    assert call(action="list", category="fact").output == "No memories match those filters."
    assert f"#{first}" in call(action="list", tags="ui").output

    found = call(action="search", query="dark mode editor")
    assert found.ok and found.output.splitlines()[1].startswith(f"#{first} ")
    assert "(score " in found.output
    close = call(action="semantic_search", query="raspberry deployment", limit=1)
    assert close.ok and "Deploys go to a Raspberry Pi" in close.output

    forgotten = call(action="forget", id=first)
    assert forgotten.ok and forgotten.output == f"Forgot memory #{first}."
    assert store.memories.get(first) is None
    again = call(action="forget", id=first)
    assert not again.ok and f"no memory #{first}" in again.error


def test_pin_unpin_and_stats(call):
    memory = memory_id(call(action="add", content="Never force-push", priority=0).output)
    pinned = call(action="pin", id=memory)
    assert pinned.ok and pinned.output.startswith("Pinned") and "pinned)" in pinned.output
    unpinned = call(action="unpin", id=str(memory))
    assert unpinned.ok and unpinned.output.startswith("Unpinned")
    call(action="add", content="Call the plumber", category="reminder", expires_in_days=3)
    stats = call(action="stats")
    assert stats.ok
    assert "Active memories: 2 (pinned 0)" in stats.output
    assert "By priority: CRITICAL 1, HIGH 0, MEDIUM 1, LOW 0" in stats.output
    assert "By category: general 1, reminder 1" in stats.output
    assert "keyword search: fts5" in stats.output and "local-hash-256" in stats.output


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"action": "add"}, "add needs content"),
        ({"action": "add", "content": "x", "priority": "URGENT"}, "priority 'URGENT'"),
        ({"action": "add", "content": "x", "expires_in_days": 0}, "positive"),
        ({"action": "add", "content": "x" * 2001}, "under 2000"),
        ({"action": "search"}, "needs a query"),
        ({"action": "forget"}, "needs the id"),
        ({"action": "pin", "id": 42}, "no memory #42"),
        ({"action": "remember"}, "must be one of"),
        ({"action": "add", "content": "x", "category": "hobby"}, "must be one of"),
    ],
)
def test_mistakes_come_back_as_readable_errors(call, arguments, message):
    result = call(**arguments)
    assert not result.ok and message in result.error


def test_empty_store_answers(call):
    assert call(action="list").output == "No memories yet."
    assert call(action="search", query="anything").output == "No memory found matching the query."


def test_without_a_store_the_tool_says_so(tmp_path):
    from tea_agent_mini.errors import ToolError
    from tea_agent_mini.tools.memory import toolkit_memory

    ctx = ToolContext(workspace=tmp_path, home=tmp_path)
    with pytest.raises(ToolError, match="not available"):
        toolkit_memory(ctx, action="list")
