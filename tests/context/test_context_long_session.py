"""Long sessions stay inside the budget: 300 turns through the store and the context builder, and
a shorter run of real turns through the Session API."""

from __future__ import annotations

import asyncio

from tea_agent_mini.config import load_config
from tea_agent_mini.context.budget import BUDGET_FILL
from tea_agent_mini.context.history import RECENT_TURNS
from tea_agent_mini.context.records import ContextRecords
from tea_agent_mini.context.summary import RING_LIMIT
from tea_agent_mini.context.upkeep import TurnUpkeep
from tea_agent_mini.llm.tokens import estimate_messages_tokens, estimate_tools_tokens
from tea_agent_mini.runtime import Runtime
from tea_agent_mini.types import Done
from tests.context.context_helpers import (
    SUMMARY_TEXT,
    add_turn,
    answer_background,
    assert_consistent,
    counting_echo,
    is_background,
    is_summary,
    provider_tokens,
    turn_requests,
)

SUBJECTS = ["parser", "database", "web server", "scheduler", "memory", "exporter"]


def config(scripted_server, write_config, workspace, max_context_tokens: int):
    write_config(
        {
            "main_model": {
                "api_key": "sk-test-key-0000",
                "api_url": scripted_server.base_url,
                "model_name": "scripted-model",
                "max_context_tokens": max_context_tokens,
            },
            "agent": {"workspace": str(workspace)},
        }
    )


def last_user(messages: list[dict]) -> str:
    """The current user message, where the context block (summary included) travels."""
    return next(m["content"] for m in reversed(messages) if m["role"] == "user")


def question(i: int) -> str:
    subject = SUBJECTS[i % len(SUBJECTS)]
    return f"Turn {i}: please improve the {subject} module, file src/{subject}.py. " + (
        "Details follow. " * (10 + i % 40)
    )


def test_300_turns_stay_in_budget_and_gain_a_summary(scripted_server, write_config, workspace):
    max_tokens = 6_000
    config(scripted_server, write_config, workspace, max_tokens)
    answer_background(scripted_server)

    async def go():
        runtime = Runtime(load_config())
        try:
            session = runtime.session()
            topic, store = session.topic_id, runtime.store
            upkeep = TurnUpkeep(store, runtime.cheap_llm)
            history, sizes, summaries_seen = [], [], 0
            for i in range(300):
                output = f"contents of src/{i}.py\n" * 300 if i % 3 == 0 else None
                history += add_turn(
                    store,
                    topic,
                    question(i),
                    f"Done with turn {i}. " * 30,
                    tool_output=output,
                    path=f"src/{SUBJECTS[i % len(SUBJECTS)]}.py",
                    call_id=f"call{i}",
                )
                await upkeep.history(topic)
                session.turn_context = None  # each iteration stands for a new turn
                messages = await asyncio.to_thread(runtime.build_context, session, history)
                tools = estimate_tools_tokens(session.tools_for(history))
                sizes.append(estimate_messages_tokens(messages) + tools)
                assert_consistent(messages[1:])
                assert sum(m["role"] == "user" for m in messages) <= RECENT_TURNS
                assert ContextRecords(store.db).count(topic) <= RING_LIMIT
                summaries_seen += "Summary of the earlier conversation" in last_user(messages)
            return sizes, summaries_seen, messages, ContextRecords(store.db).summary(topic)
        finally:
            await runtime.aclose()

    sizes, summaries_seen, last, summary = asyncio.run(go())
    assert max(sizes) <= max_tokens * BUDGET_FILL
    assert max(sizes) > max_tokens * BUDGET_FILL * 0.7  # near the budget, and within it
    assert summaries_seen == 300 - RING_LIMIT + 1
    assert summary.pairs_covered >= 250 and SUMMARY_TEXT in last_user(last)
    assert "toolkit_file ×" in last_user(last)  # the tool-chain recap
    summary_requests = [r for r in scripted_server.requests if is_summary(r)]
    assert len(summary_requests) == 9  # at 50 pairs, then every 30 turns
    assert "## Project background" in summary_requests[1]["messages"][1]["content"]


def test_real_turns_never_exceed_the_budget(scripted_server, write_config, workspace):
    max_tokens = 9_000
    config(scripted_server, write_config, workspace, max_tokens)
    scripted_server.on(lambda request: not is_background(request), counting_echo)

    async def go():
        runtime = Runtime(load_config())
        try:
            session = runtime.session()
            done = []
            for i in range(25):
                events = [e async for e in session.run_turn(question(i) * 3)]
                done.append(events[-1])
            await runtime.background.drain()
            records = ContextRecords(runtime.store.db)
            return done, records.count(session.topic_id), runtime.store.topics.get(session.topic_id)
        finally:
            await runtime.aclose()

    done, pairs, topic = asyncio.run(go())
    assert all(isinstance(event, Done) for event in done)
    requests = turn_requests(scripted_server)
    counted = [provider_tokens(r) for r in requests]
    assert max(counted) <= max_tokens
    assert max(counted) > max_tokens * 0.6
    users_in_last = sum(m["role"] == "user" for m in requests[-1]["messages"])
    assert users_in_last < RECENT_TURNS  # old turns were trimmed to fit
    assert pairs == 25 and topic.title == "Scripted title"
