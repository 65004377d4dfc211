"""Staying inside the budget: trimming order, never over the limit, calibration, the hard retry."""

from __future__ import annotations

import asyncio

import pytest

from tea_agent_mini.config import load_config
from tea_agent_mini.context.budget import TRIM_STEPS, ContextWindow, fit_window, hard_target
from tea_agent_mini.context.builder import ContextInputs, build_window
from tea_agent_mini.context.history import PLACEHOLDER_PREFIX
from tea_agent_mini.context.records import TopicSummary, TurnPair
from tea_agent_mini.llm.tokens import TokenCalibrator, estimate_messages_tokens
from tea_agent_mini.runtime import Runtime
from tea_agent_mini.terms import keyword_terms
from tea_agent_mini.types import Done, Message, Notice, ToolCall
from tests.context.context_helpers import (
    answer_background,
    assert_consistent,
    counting_echo,
    provider_tokens,
    turn_requests,
)
from tests.fakes.script import without_context_block
from tests.fakes.scripted_server import Reply

ORDER = [name for name, _ in TRIM_STEPS]
TOOLS_TOKENS = 300


def history_with_tools(turns: int = 14, output_chars: int = 3000) -> list[Message]:
    """Finished turns, each reading a file, then a current turn waiting on a large tool result."""
    messages: list[Message] = []
    next_id = iter(range(1, 10_000))
    for i in range(turns):
        call = ToolCall(f"c{i}", "toolkit_file", '{"action": "read", "filename": "f.txt"}')
        messages += [
            Message(role="user", content=f"question {i} about the parser", id=next(next_id)),
            Message(
                role="assistant", tool_calls=(call,), reasoning="let me look", id=next(next_id)
            ),
            Message(
                role="tool", tool_call_id=f"c{i}", content=f"{i}" * output_chars, id=next(next_id)
            ),
            Message(role="assistant", content=f"answer {i} " * 40, id=next(next_id)),
        ]
    call = ToolCall("now", "toolkit_file", '{"action": "read", "filename": "big.txt"}')
    messages += [
        Message(role="user", content="summarise big.txt about the parser", id=next(next_id)),
        Message(role="assistant", tool_calls=(call,), reasoning="read it", id=next(next_id)),
        Message(role="tool", tool_call_id="now", content="B" * 20_000, id=next(next_id)),
    ]
    return messages


def pairs() -> list[TurnPair]:
    texts = [  # decreasingly relevant to the current message
        "question about big.txt and the parser",
        "question 1 about big.txt and the parser",
        "question 2 about the parser tokenizer lexer big.txt",
    ]
    return [
        TurnPair(
            user_message_id=i + 1,
            user_text=text,
            answer_text="a long answer " * 60,
            thinking="careful thinking " * 10,
            terms=frozenset(keyword_terms(text)),
        )
        for i, text in enumerate(texts)
    ]


def inputs(**kwargs) -> ContextInputs:
    summary = TopicSummary(topic_id="t", content="## Decisions\n" + "- decided things\n" * 400)
    return ContextInputs(
        "SYSTEM PROMPT",
        history_with_tools(),
        pairs=pairs(),
        summary=summary,
        tools_tokens=TOOLS_TOKENS,
        include_reasoning=True,
        **kwargs,
    )


def in_order(trims: list[str]) -> bool:
    positions = [ORDER.index(name) for name in trims]
    return positions == sorted(positions)


def request_tokens(window: ContextWindow) -> int:
    return estimate_messages_tokens(window.render()) + TOOLS_TOKENS


def test_untrimmed_without_a_budget():
    window = build_window(inputs())
    assert window.trims == [] and len(window.pairs) == 3
    assert window.tokens >= request_tokens(window)  # the running estimate is an upper bound


def test_trimming_starts_with_the_least_relevant_pair():
    full = build_window(inputs())
    assert [p.full for p in full.pairs] == [True, True, True]
    window = build_window(inputs(target_tokens=full.tokens - 1))
    assert window.trims == ["drop_pairs"]
    assert [p.pair.user_message_id for p in window.pairs] == [1, 2]  # the weakest went
    assert window.messages == full.messages  # L1 untouched
    assert window.render()[0] == full.render()[0]  # the system prompt too: pairs are context


def tool_output(window: ContextWindow, call_id: str) -> str:
    return next(m["content"] for m in window.render() if m.get("tool_call_id") == call_id)


def test_then_old_tool_outputs_oldest_first():
    full = build_window(inputs())
    assert not tool_output(full, "c12").startswith(PLACEHOLDER_PREFIX)
    assert tool_output(full, "c9").startswith(PLACEHOLDER_PREFIX)  # older than 3 turns
    without_pairs = full.tokens - sum(full._pair_tokens) - full._header_tokens
    window = build_window(inputs(target_tokens=without_pairs - 1))
    assert window.trims == ["drop_pairs", "placeholder_tool_outputs"]
    assert window.pairs == []
    assert tool_output(window, "c12").startswith(PLACEHOLDER_PREFIX)
    assert tool_output(window, "c13") == "13" * 3000
    assert tool_output(window, "now") == "B" * 20_000  # the current turn's output is kept


@pytest.mark.parametrize("target", [12_000, 8000, 5000, 3000, 1500])
def test_tight_budgets_trim_in_order_and_fit(target):
    window = build_window(inputs(target_tokens=target))
    assert in_order(window.trims)
    assert request_tokens(window) <= target
    rendered = window.render()
    assert_consistent(rendered[1:])
    assert rendered[-1]["role"] == "tool" and rendered[-1]["tool_call_id"] == "now"
    users = [m for m in rendered if m["role"] == "user"]
    assert without_context_block(users[-1]["content"]) == "summarise big.txt about the parser"
    if "truncate_last_message" in window.trims and "drop_older_turns" not in window.trims:
        assert len(users) == 5  # old turns went first, down to the last 5 user turns
    if "truncate_long_texts" in window.trims:
        assert not any("reasoning_content" in m for m in rendered)


def test_the_last_message_is_cut_only_at_the_end():
    window = build_window(inputs(target_tokens=2500))
    assert "truncate_last_message" in window.trims
    assert window.trims.index("truncate_last_message") > window.trims.index("drop_old_turns")
    assert len(window.render()[-1]["content"]) < 4096


def test_the_current_question_outlives_older_turns():
    history = []
    for i in range(8):
        history += [
            Message(role="user", content=f"old question {i}", id=2 * i + 1),
            Message(role="assistant", content="x" * 2000, id=2 * i + 2),
        ]
    question = "Q" * 3000
    history.append(Message(role="user", content=question, id=99))
    window = build_window(ContextInputs("S", history, target_tokens=1200))
    assert window.trims == ["drop_old_turns", "drop_older_turns"]
    assert window.render()[1:] == [{"role": "user", "content": question}]


def test_a_window_that_cannot_fit_reports_it():
    window = ContextWindow("S" * 40_000, messages=[{"role": "user", "content": "hi"}])
    assert fit_window(window, 1000) is False
    assert window.render()[-1]["role"] == "user"


def test_calibration_tightens_the_budget():
    calibrator = TokenCalibrator()
    calibrator.observe(1000, 2000)  # the provider counts twice what we estimate
    plain = build_window(inputs(max_tokens=10_000))
    calibrated = build_window(inputs(max_tokens=10_000, calibrator=calibrator))
    assert request_tokens(plain) <= 8000
    assert request_tokens(calibrated) <= 4000 < request_tokens(plain)


def test_hard_target_halves_the_history_part():
    assert hard_target(20_000, 0, fixed_tokens=4000) == 4000 + 8000
    assert hard_target(20_000, 10_000, fixed_tokens=4000) == 4000 + 2000
    assert hard_target(3000, 0, fixed_tokens=3000) == 3000 + 512


def test_context_error_retries_once_with_a_harder_trim(model_config, scripted_server):
    answer_background(scripted_server)
    too_long = Reply(status=400, error_message="the request exceeds the available context size")
    scripted_server.push(too_long, Reply(text="fits now"))

    async def go():
        runtime = Runtime(load_config())
        try:
            topic = runtime.store.topics.create().id
            for i in range(12):
                runtime.store.messages.add(topic, Message(role="user", content=f"q{i}"))
                runtime.store.messages.add(
                    topic, Message(role="assistant", content=f"long answer {i} " * 600)
                )
            session = runtime.session(topic)
            return [e async for e in session.run_turn("and now?")]
        finally:
            await runtime.aclose()

    events = asyncio.run(go())
    assert any(isinstance(e, Notice) and e.kind == "trim" for e in events)
    assert isinstance(events[-1], Done) and events[-1].text == "fits now"
    first, second = turn_requests(scripted_server)
    first_size = estimate_messages_tokens(first["messages"])
    assert estimate_messages_tokens(second["messages"]) <= first_size * 0.6
    assert second["messages"][-1]["role"] == "user"
    assert without_context_block(second["messages"][-1]["content"]) == "and now?"
    assert_consistent(second["messages"][1:])


def test_reported_prompt_tokens_calibrate_the_estimates(model_config, scripted_server):
    answer_background(scripted_server)
    scripted_server.on(lambda request: True, counting_echo)

    async def go():
        runtime = Runtime(load_config())
        try:
            session = runtime.session()
            for text in ("one", "two"):
                async for _ in session.run_turn(text):
                    pass
            return runtime.token_calibrator, session.last_context_tokens
        finally:
            await runtime.aclose()

    calibrator, last = asyncio.run(go())
    assert calibrator.samples == 2
    real = provider_tokens(turn_requests(scripted_server)[-1])
    # the calibrated estimate of the last request lands near what the provider counted
    assert abs(last - real) <= real * 0.15
