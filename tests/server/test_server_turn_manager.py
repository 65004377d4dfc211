"""The TurnManager on its own (real runtime and scripted model, no HTTP): log retention, idle
eviction, shutdown."""

from __future__ import annotations

import asyncio

import pytest

from tea_agent_mini.config import load_config
from tea_agent_mini.runtime import Runtime
from tea_agent_mini.server.runtimes import RuntimePool
from tea_agent_mini.server.turn_records import ShuttingDown
from tea_agent_mini.server.turns import TurnManager
from tea_agent_mini.types import Done, Error
from tests.fakes.scripted_server import Reply


async def _with_manager(body, **options):
    runtime = Runtime(load_config())
    pool = RuntimePool(runtime)
    manager = TurnManager(pool.open_session, **options)
    try:
        return await body(manager, runtime)
    finally:
        await manager.shutdown()
        await pool.aclose()


async def _run(manager: TurnManager, topic: str, text: str) -> list:
    submission = manager.submit(topic, text)
    return [e async for e in manager.follow(topic, submission.since, turn=submission.item.id)]


def test_log_keeps_only_the_last_turns(model_config, scripted_server):
    async def body(manager, runtime):
        topic = runtime.store.topics.create().id
        for i in range(4):
            entries = await _run(manager, topic, f"message {i}")
            assert isinstance(entries[-1].event, Done)
        kept = [e async for e in manager.follow(topic, 0)]
        ids = [e.id for e in kept]
        assert ids == sorted(ids) and len(set(ids)) == len(ids)
        assert len({e.turn for e in kept}) == 2
        assert kept[-1].event.text == "echo: message 3"

    asyncio.run(_with_manager(body, keep_turns=2))


def test_idle_sessions_are_evicted_beyond_the_limit(model_config, scripted_server):
    async def body(manager, runtime):
        first = runtime.store.topics.create().id
        second = runtime.store.topics.create().id
        await _run(manager, first, "a")
        await _run(manager, second, "b")
        assert [e async for e in manager.follow(first, 0)] == []
        assert [e async for e in manager.follow(second, 0)]

    asyncio.run(_with_manager(body, max_idle_sessions=1))


def test_shutdown_cancels_running_and_queued_turns(model_config, scripted_server):
    scripted_server.push(Reply(text="x" * 80, delay=0.05, chunk_chars=4))

    async def body(manager, runtime):
        topic = runtime.store.topics.create().id
        running = manager.submit(topic, "long")
        queued = manager.submit(topic, "waiting")
        assert queued.position == 1 and manager.busy(topic)
        follower = manager.follow(topic, running.since, turn=queued.item.id)
        await asyncio.sleep(0.2)
        await manager.shutdown()
        entries = [e async for e in follower]
        assert isinstance(entries[-1].event, Error) and entries[-1].event.kind == "cancelled"
        log = {e.turn: e.event async for e in manager.follow(topic, 0)}
        assert isinstance(log[running.item.id], Error)
        assert not manager.busy(topic)
        with pytest.raises(ShuttingDown):
            manager.submit(topic, "too late")

    asyncio.run(_with_manager(body))
