"""Memory upkeep after turns: hourly decay, daily model-driven adjustment and reflection."""

from __future__ import annotations

import asyncio

from tea_agent_mini.config import ModelConfig
from tea_agent_mini.context.upkeep import DECAY_EVERY, REFLECT_EVERY, TurnUpkeep
from tea_agent_mini.llm.client import OpenAIChatClient
from tea_agent_mini.memory.manager import MemoryManager
from tea_agent_mini.memory.model import Priority
from tea_agent_mini.store import Store

DAY = 86400.0
START = 1_800_000_000.0


def test_decay_runs_hourly_and_reflection_daily(tmp_path, scripted_server):
    clock = [START]

    async def scenario(store):
        llm = OpenAIChatClient(ModelConfig(api_url=scripted_server.base_url, model_name="m"))
        try:
            memory = MemoryManager(store, cheap_llm=llm, clock=lambda: clock[0])
            memory.add("Always run the linter before committing", priority=Priority.CRITICAL)
            upkeep = TurnUpkeep(store, llm, memory, clock=lambda: clock[0])
            assert await upkeep.maintain_memory() == ["decay", "reflect"]
            assert await upkeep.maintain_memory() == []  # nothing is due again at once
            first_day_requests = len(scripted_server.requests)

            clock[0] += 31 * DAY  # old enough for CRITICAL -> HIGH, and a day has passed
            assert await upkeep.maintain_memory() == ["decay", "reflect"]
            assert memory.matching()[0].priority == Priority.HIGH
            assert len(scripted_server.requests) > first_day_requests

            clock[0] += DECAY_EVERY  # an hour later: decay only
            assert DECAY_EVERY < REFLECT_EVERY
            assert await upkeep.maintain_memory() == ["decay"]
        finally:
            await llm.aclose()

    with Store.open(tmp_path / "chat.db") as store:
        asyncio.run(scenario(store))


def test_without_a_cheap_model_only_decay_runs(tmp_path):
    with Store.open(tmp_path / "chat.db") as store:
        memory = MemoryManager(store, clock=lambda: START)
        upkeep = TurnUpkeep(store, None, memory, clock=lambda: START)
        assert asyncio.run(upkeep.maintain_memory()) == ["decay"]
