"""Judging a finished task: heuristics (the floor), the cheap model's verdict, and the fallback
when the model fails or answers nonsense; then through a real turn, on the background worker."""

from __future__ import annotations

import asyncio

import pytest

from tea_agent_mini.config import load_config
from tea_agent_mini.errors import UpstreamError
from tea_agent_mini.evaluation.evaluator import heuristic_verdict, judge, parse_verdict
from tea_agent_mini.evaluation.facts import ToolRun, TurnFacts
from tea_agent_mini.runtime import Runtime
from tea_agent_mini.types import Completion
from tests.fakes.background import answer_background, is_evaluation
from tests.fakes.scripted_server import Reply, ToolCallSpec


def facts(*runs: tuple[str, str], answer="Done.", status="completed", **extra) -> TurnFacts:
    return TurnFacts(
        topic_id="t",
        user_message_id=1,
        user_text="make data.csv",
        runs=tuple(ToolRun(name, state, "boom" if state != "ok" else "") for name, state in runs),
        answer=answer,
        status=status,
        iterations=extra.pop("iterations", len(runs) + 1),
        **extra,
    )


class FakeModel:
    model = "fake"

    def __init__(self, answer: str | Exception) -> None:
        self.answer = answer
        self.asked: list[list[dict]] = []

    async def complete(self, messages, tools=None, **params):
        self.asked.append(messages)
        if isinstance(self.answer, Exception):
            raise self.answer
        return Completion(content=self.answer)

    def stream(self, messages, tools=None, **params):  # pragma: no cover - never streamed
        raise NotImplementedError


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        (facts(("toolkit_file", "ok")), ("success", 5)),
        (facts(*[("toolkit_exec", "ok")] * 4, iterations=6), ("success", 4)),
        (facts(("toolkit_file", "failed"), ("toolkit_file", "ok")), ("partial", 3)),
        (facts(("toolkit_file", "ok"), ("toolkit_exec", "failed")), ("failed", 2)),
        (facts(("toolkit_exec", "failed"), ("toolkit_exec", "failed")), ("failed", 1)),
        (facts(("toolkit_exec", "ok"), finish_reason="loop", status="stopped"), ("failed", 1)),
        (facts(("toolkit_exec", "ok"), finish_reason="max_iterations"), ("failed", 1)),
        (facts(("toolkit_exec", "stopped"), status="stopped", answer=""), ("failed", 1)),
        (facts(("toolkit_file", "ok"), answer=""), ("partial", 2)),
    ],
)
def test_heuristics_judge_from_what_the_turn_did(case, expected):
    verdict = heuristic_verdict(case)
    assert (verdict.outcome, verdict.quality, verdict.source) == (*expected, "heuristic")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"outcome": "partial", "quality": 3, "reason": "slow"}', ("partial", 3, "slow")),
        ('```json\n{"outcome": "success", "quality": "5"}\n```', ("success", 5, "")),
        (
            '<think>hmm</think>Verdict: {"evaluation": {"outcome": "failed", "quality": 9}}',
            ("failed", 5, ""),
        ),
        ("{outcome: 'succeeded', quality: 4.4, reason: 'ok',}", ("success", 4, "ok")),
    ],
)
def test_the_models_answer_is_read_leniently(text, expected):
    verdict = parse_verdict(text)
    assert verdict is not None
    assert (verdict.outcome, verdict.quality, verdict.reason) == expected


@pytest.mark.parametrize(
    "text", ["", "great job!", '{"outcome": "meh", "quality": 3}', '{"outcome": "success"}']
)
def test_an_unusable_answer_is_no_verdict(text):
    assert parse_verdict(text) is None


def test_the_model_judges_and_sees_the_tools_and_errors():
    model = FakeModel('{"outcome": "partial", "quality": 3, "reason": "needed a retry"}')
    case = facts(("toolkit_file", "failed"), ("toolkit_file", "ok"))
    verdict = asyncio.run(judge(model, case))
    assert (verdict.outcome, verdict.quality, verdict.source) == ("partial", 3, "model")
    prompt = model.asked[0][1]["content"]
    assert "toolkit_file (failed), toolkit_file (ok)" in prompt and "toolkit_file: boom" in prompt


@pytest.mark.parametrize("answer", [UpstreamError("503 from the model"), "I think it went fine"])
def test_a_failing_or_rambling_model_falls_back_to_heuristics(answer):
    case = facts(("toolkit_exec", "failed"), ("toolkit_exec", "ok"))
    verdict = asyncio.run(judge(FakeModel(answer), case))
    assert (verdict.outcome, verdict.quality, verdict.source) == ("partial", 3, "heuristic")


def test_a_stopped_turn_stays_failed_whatever_the_model_says():
    model = FakeModel('{"outcome": "success", "quality": 5, "reason": "looks fine"}')
    case = facts(("toolkit_exec", "ok"), finish_reason="max_iterations")
    verdict = asyncio.run(judge(model, case))
    assert (verdict.outcome, verdict.quality) == ("failed", 2)


# ---- through a turn --------------------------------------------------------------------------


def run_turn(text: str):
    async def go():
        runtime = Runtime(load_config())
        try:
            session = runtime.session()
            events = [e async for e in session.run_turn(text)]
            await runtime.background.drain()
            return session.topic_id, events, runtime.store.evaluations.recent(10)
        finally:
            await runtime.aclose()

    return asyncio.run(go())


def test_a_turn_with_tools_is_evaluated_by_the_model_in_the_background(
    model_config, scripted_server, workspace
):
    answer_background(scripted_server, verdict='{"outcome": "success", "quality": 4}')
    scripted_server.push(
        Reply(tool_calls=[ToolCallSpec("toolkit_file", {"action": "read", "filename": "x.txt"})]),
        Reply(
            tool_calls=[
                ToolCallSpec(
                    "toolkit_file", {"action": "write", "filename": "x.txt", "content": "hi"}
                )
            ]
        ),
        Reply(text="Created x.txt.", prompt_tokens=90, completion_tokens=6),
    )
    topic_id, _, found = run_turn("make x.txt say hi")
    (evaluation,) = found
    assert (evaluation.topic_id, evaluation.outcome, evaluation.quality) == (topic_id, "success", 4)
    assert evaluation.source == "model" and evaluation.user_text == "make x.txt say hi"
    assert evaluation.tools == ("toolkit_file", "toolkit_file")
    assert (evaluation.tool_calls, evaluation.errors, evaluation.iterations) == (2, 1, 3)
    assert evaluation.prompt_tokens >= 90 and "toolkit_file" in evaluation.error_text
    assert len([r for r in scripted_server.requests if is_evaluation(r)]) == 1


def test_without_a_verdict_the_heuristics_judge_and_a_plain_answer_is_not_a_task(
    model_config, scripted_server, workspace
):
    scripted_server.on(is_evaluation, Reply(status=500, error_message="no verdicts"))
    scripted_server.push(
        Reply(tool_calls=[ToolCallSpec("toolkit_file", {"action": "list", "filename": "."})]),
        Reply(text="Nothing there."),
    )
    _, _, found = run_turn("what is in the workspace?")
    (evaluation,) = found
    assert (evaluation.outcome, evaluation.quality, evaluation.source) == (
        "success",
        5,
        "heuristic",
    )
    _, _, found = run_turn("hello there")  # no tools: no evaluation
    assert len(found) == 1
