"""Model-driven upkeep through the scripted model: priority adjustment (one level, at most three
changes, pinned untouched) and reflection (one CRITICAL summary per large category)."""

from __future__ import annotations

import asyncio
import json

import pytest

from tea_agent_mini.config import ModelConfig
from tea_agent_mini.llm.client import OpenAIChatClient
from tea_agent_mini.memory.adjust import REFLECTED_TAG, SUMMARY_TAG
from tea_agent_mini.memory.manager import MemoryManager
from tea_agent_mini.memory.model import Priority
from tea_agent_mini.store import Store
from tests.fakes import Reply

T0 = 1_700_000_000.0


@pytest.fixture
def setup(tmp_path, scripted_server):
    scripted_server.reset()  # these tests script the adjust/reflect answers in the queue
    with Store.open(tmp_path / "chat.db") as store:
        yield MemoryManager(store, clock=lambda: T0), scripted_server


def with_model(manager, server, action):
    """Run ``action(manager with a cheap model)``; the client lives in the one event loop."""

    async def go():
        llm = OpenAIChatClient(ModelConfig(api_url=server.base_url, model_name="cheap"))
        try:
            return await action(MemoryManager(manager.store, cheap_llm=llm, clock=lambda: T0))
        finally:
            await llm.aclose()

    return asyncio.run(go())


def test_adjust_moves_one_level_at_most_three_times(setup):
    manager, server = setup
    add = manager.add
    a = add("alpha is about cooking", priority="LOW").memory
    b = add("bravo is about sailing", priority="MEDIUM").memory
    c = add("charlie is about chess", priority="HIGH").memory
    d = add("delta is about opera", priority="MEDIUM").memory
    pinned = add("echo is about tennis", priority="LOW", pinned=True).memory
    changes = [
        {"id": a.id, "priority": "CRITICAL", "reason": "used daily"},  # LOW -> MEDIUM only
        {"id": pinned.id, "priority": "HIGH"},  # pinned: ignored
        {"id": 9999, "priority": "HIGH"},  # unknown: ignored
        {"id": b.id, "priority": 2},  # unchanged: ignored
        {"id": f"#{c.id}", "priority": "LOW"},  # HIGH -> MEDIUM
        {"id": b.id, "priority": "LOW"},  # MEDIUM -> LOW
        {"id": d.id, "priority": "LOW"},  # a fourth change: beyond the limit
    ]
    server.push(Reply(text="Sure.\n" + json.dumps({"changes": changes})))
    done = with_model(manager, server, lambda m: m.adjust_priorities())
    assert [(x.memory_id, x.old, x.new) for x in done] == [
        (a.id, Priority.LOW, Priority.MEDIUM),
        (c.id, Priority.HIGH, Priority.MEDIUM),
        (b.id, Priority.MEDIUM, Priority.LOW),
    ]
    assert done[0].reason == "used daily"
    get = manager.get
    assert get(a.id).priority == Priority.MEDIUM and get(d.id).priority == Priority.MEDIUM
    assert get(pinned.id).priority == Priority.LOW
    prompt = server.requests[-1]["messages"][1]["content"]
    assert f"id={a.id} priority=LOW" in prompt and "alpha is about cooking" in prompt


def test_adjust_survives_an_unreadable_answer(setup):
    manager, server = setup
    manager.add("something", priority="LOW")
    server.push(Reply(text="I think everything is fine."))
    assert with_model(manager, server, lambda m: m.adjust_priorities()) == []


def test_reflect_summarises_a_large_category(setup):
    manager, server = setup
    prefs = [
        manager.add(text, category="preference", importance=4, tags=["style"]).memory
        for text in (
            "Likes short answers",
            "Prefers bullet lists",
            "Wants code before explanation",
            "Dislikes emojis in replies",
            "Prefers British spelling",
        )
    ]
    manager.add("Lives in Leeds", category="fact")  # a group of one: left alone
    server.push(Reply(text="```\nShort, emoji-free answers in British spelling.\n```"))
    (reflection,) = with_model(manager, server, lambda m: m.reflect())
    summary = reflection.summary
    assert reflection.category == "preference"
    assert summary.content == "Short, emoji-free answers in British spelling."
    assert summary.priority == Priority.CRITICAL and summary.category == "preference"
    assert summary.tags[0] == SUMMARY_TAG and "style" in summary.tags
    assert set(reflection.sources) == {m.id for m in prefs}
    for memory in prefs:
        now = manager.get(memory.id)
        assert now.importance == 2 and REFLECTED_TAG in now.tags
    assert manager.get(summary.id).embedding_model == "local-hash-256"
    assert len(server.requests) == 1
    assert "Prefers bullet lists" in server.requests[0]["messages"][1]["content"]

    # reflected memories are not summarised again
    assert with_model(manager, server, lambda m: m.reflect()) == []
    assert len(server.requests) == 1
