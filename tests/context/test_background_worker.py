"""The background worker, and what a finished turn leaves for it: title, L2/L3, memory."""

from __future__ import annotations

import asyncio
import logging

from tea_agent_mini.agent.background import BackgroundWorker
from tea_agent_mini.config import load_config
from tea_agent_mini.context.records import ContextRecords
from tea_agent_mini.context.summary import RING_KEEP, RING_LIMIT
from tea_agent_mini.runtime import Runtime
from tea_agent_mini.types import Done
from tests.context.context_helpers import (
    add_turn,
    answer_background,
    is_extraction,
    is_summary,
    is_title,
    turn_requests,
)
from tests.fakes.scripted_server import Reply

# ---- the worker alone ------------------------------------------------------------------------


def test_jobs_run_in_order_and_failures_stay_inside(caplog):
    ran: list[str] = []

    async def ok(name: str):
        await asyncio.sleep(0)
        ran.append(name)

    async def broken():
        raise ValueError("boom")

    async def go():
        worker = BackgroundWorker()
        worker.submit("a", lambda: ok("a"))
        worker.submit("broken", broken)
        worker.submit("b", lambda: ok("b"))
        assert worker.pending == 3
        assert await worker.drain() is True
        await worker.aclose()
        return worker.stats

    with caplog.at_level(logging.WARNING, logger="tea_agent_mini.agent.background"):
        stats = asyncio.run(go())
    assert ran == ["a", "b"]
    assert (stats.submitted, stats.done, stats.failed) == (3, 2, 1)
    assert "background job broken failed" in caplog.text


def test_a_job_over_its_time_cap_is_stopped():
    async def go():
        worker = BackgroundWorker(time_cap=0.05)
        stopped = asyncio.Event()

        async def forever():
            try:
                await asyncio.Event().wait()
            finally:
                stopped.set()

        worker.submit("forever", forever)
        worker.submit("later", lambda: asyncio.sleep(5), time_cap=10)  # the worker's cap wins
        await worker.drain()
        await worker.aclose()
        return worker.stats, stopped.is_set()

    stats, stopped = asyncio.run(go())
    assert stopped and stats.timed_out == 2 and stats.done == 0


def test_drain_with_a_timeout_and_a_full_queue():
    async def go():
        worker = BackgroundWorker(max_queued=1)
        gate = asyncio.Event()
        worker.submit("wait", gate.wait)
        await asyncio.sleep(0)  # the worker takes the first job
        assert worker.submit("queued", gate.wait) is True
        assert worker.submit("dropped", gate.wait) is False
        assert await worker.drain(timeout=0.01) is False
        gate.set()
        assert await worker.drain() is True
        await worker.aclose()
        return worker.stats

    stats = asyncio.run(go())
    assert (stats.done, stats.dropped) == (2, 1)


def test_the_worker_restarts_on_a_new_event_loop():
    worker = BackgroundWorker()
    ran: list[int] = []

    async def one_loop(n: int):
        async def job():
            ran.append(n)

        worker.submit(f"job{n}", job)
        await worker.drain()

    asyncio.run(one_loop(1))
    asyncio.run(one_loop(2))
    assert ran == [1, 2]
    asyncio.run(worker.aclose())  # from a third loop: nothing left to wait for
    assert worker.pending == 0


# ---- after a turn ----------------------------------------------------------------------------


def run_turns(texts, *, prepare=None, background_cap=None):
    """Run turns on one topic, drain the worker, return (events, runtime state snapshot)."""

    async def go():
        runtime = Runtime(load_config())
        try:
            if background_cap is not None:
                runtime.background.time_cap = background_cap
            session = runtime.session()
            if prepare is not None:
                prepare(runtime, session.topic_id)
            events = []
            for text in texts:
                events.append([e async for e in session.run_turn(text)])
            await runtime.background.drain()
            records = ContextRecords(runtime.store.db)
            return events, {
                "title": runtime.store.topics.get(session.topic_id).title,
                "pairs": records.pairs(session.topic_id),
                "summary": records.summary(session.topic_id),
                "memories": [m.content for m in runtime.memory.matching()],
                "stats": runtime.background.stats,
            }
        finally:
            await runtime.aclose()

    return asyncio.run(go())


def test_title_is_set_in_the_background(model_config, scripted_server):
    answer_background(scripted_server, title='"Fixing the Parser."')
    scripted_server.push(Reply(text="Sure, let's fix it."))
    events, state = run_turns(["please help me fix my parser"])
    assert isinstance(events[0][-1], Done)
    assert state["title"] == "Fixing the Parser"
    assert len([r for r in scripted_server.requests if is_title(r)]) == 1
    assert len(state["pairs"]) == 1  # the L2 record of the turn


def test_title_falls_back_to_the_first_words(model_config, scripted_server):
    scripted_server.on(is_title, Reply(status=400, error_message="no titles today"))
    _, state = run_turns(["one two three four five six seven eight nine ten"])
    assert state["title"] == "one two three four five six seven eight"


def test_memory_is_extracted_after_a_turn(model_config, scripted_server):
    memories = (
        '```json\n{"memories": [{"content": "The user prefers tabs", "kind": "preference"}]}\n```'
    )
    answer_background(scripted_server, memories=memories)
    events, state = run_turns(["remember: I prefer tabs over spaces"])
    assert isinstance(events[0][-1], Done)
    assert state["memories"] == ["The user prefers tabs"]
    extraction = next(r for r in scripted_server.requests if is_extraction(r))
    assert "I prefer tabs over spaces" in extraction["messages"][1]["content"]


def fill_ring(count: int):
    def prepare(runtime, topic_id):
        for i in range(count):
            add_turn(runtime.store, topic_id, f"old question {i}", f"old answer {i}")

    return prepare


def test_a_failing_summary_does_not_break_the_turn(model_config, scripted_server, caplog):
    scripted_server.on(is_summary, Reply(status=400, error_message="summaries are broken"))
    with caplog.at_level(logging.WARNING):
        events, state = run_turns(["a new question"], prepare=fill_ring(RING_LIMIT))
    assert isinstance(events[0][-1], Done) and events[0][-1].text == "echo: a new question"
    assert len(state["pairs"]) == RING_LIMIT + 1  # the raw pairs are kept meanwhile
    summary = state["summary"]
    assert summary.content == "" and summary.failures == 1 and summary.retry_at > 0
    assert "summaries are broken" in summary.last_error
    assert "summary of topic" in caplog.text


def test_a_slow_summary_is_stopped_and_retried_later(model_config, scripted_server):
    scripted_server.on(is_summary, Reply(text="## Decisions\n- too late", delay=1.0))
    events, state = run_turns(
        ["first", "second"], prepare=fill_ring(RING_LIMIT), background_cap=0.2
    )
    assert [type(turn[-1]) for turn in events] == [Done, Done]
    assert state["stats"].timed_out == 1  # the second turn found the attempt still leased
    assert len(state["pairs"]) == RING_LIMIT + 2
    assert state["summary"].content == "" and state["summary"].retry_at > 0
    assert len([r for r in scripted_server.requests if is_summary(r)]) == 1


def test_a_full_ring_is_folded_into_the_summary(model_config, scripted_server):
    answer_background(scripted_server)
    events, state = run_turns(["a new question"], prepare=fill_ring(RING_LIMIT))
    assert isinstance(events[0][-1], Done)
    assert len(state["pairs"]) == RING_KEEP
    summary = state["summary"]
    assert summary.pairs_covered == RING_LIMIT + 1 - RING_KEEP
    assert "## Open items" in summary.content
    request = next(r for r in scripted_server.requests if is_summary(r))
    assert "old question 0" in request["messages"][1]["content"]
    assert "old question 45" not in request["messages"][1]["content"]  # kept in the ring
    assert len(turn_requests(scripted_server)) == 1
