"""The verdict on a finished task: outcome (success, partial, failed) and quality 1-5.

Heuristics are the floor and the fallback: a turn that was stopped (cancelled, failed, ended by
the loop guard or the iteration limit) failed; errors the turn recovered from make it partial;
errors it did not recover from make it a failure. With a cheap model the verdict is asked of it
as strict JSON (repaired leniently); an unusable answer or a failed call falls back to the
heuristics, and a stopped turn stays a failure whatever the model says.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import LLMError
from ..llm.repair import JSONRepairError, repair_json
from ..store.evaluations import OUTCOMES, Evaluation

if TYPE_CHECKING:
    from ..types import ChatModel
    from .facts import TurnFacts

__all__ = [
    "EVALUATE_PROMPT",
    "Verdict",
    "evaluation_of",
    "heuristic_verdict",
    "judge",
    "model_verdict",
    "parse_verdict",
]

log = logging.getLogger(__name__)

REQUEST_CHARS = 1500
ANSWER_CHARS = 1500
MAX_ERROR_LINES = 6
QUICK_ITERATIONS = 3  # a success in this many model calls or fewer is a 5

EVALUATE_PROMPT = """\
You judge how well an AI assistant completed one task. Answer with JSON only:
{"outcome": "success", "quality": 4, "reason": "one sentence"}
outcome: success (the user got what they asked for), partial (part of it, or only after \
avoidable mistakes), failed (not done, wrong, or stopped).
quality: 1 (useless) to 5 (excellent, direct, no wasted steps).
reason: why, in one short sentence naming the decisive fact."""

_THINK = re.compile(r"<think(?:ing)?>.*?(?:</think(?:ing)?>|\Z)", re.S | re.I)


@dataclass(frozen=True)
class Verdict:
    outcome: str
    quality: int
    reason: str
    source: str  # heuristic or model


def heuristic_verdict(facts: TurnFacts) -> Verdict:
    """The verdict from what the turn did, without a model."""
    if facts.stopped:
        why = facts.finish_reason if facts.finish_reason in ("loop", "max_iterations") else None
        what = {
            "loop": "the loop guard stopped it",
            "max_iterations": f"it hit the iteration limit ({facts.iterations})",
        }.get(why or "", f"the turn ended {facts.status or 'early'}")
        return Verdict("failed", 1, f"No answer: {what}.", "heuristic")
    calls, errors = len(facts.runs), facts.errors
    if calls and errors == calls:
        return Verdict("failed", 1, f"Every tool call failed ({errors}).", "heuristic")
    if errors and not facts.recovered:
        return Verdict("failed", 2, f"{errors} of {calls} tool calls failed.", "heuristic")
    if errors:
        return Verdict(
            "partial", 3, f"Recovered after {errors} failed tool call(s) of {calls}.", "heuristic"
        )
    if not facts.answer.strip() or facts.finish_reason == "length":
        return Verdict("partial", 2, "The answer is empty or was cut off.", "heuristic")
    quality = 5 if facts.iterations <= QUICK_ITERATIONS else 4
    return Verdict(
        "success", quality, f"Done in {facts.iterations} step(s) without errors.", "heuristic"
    )


def evaluate_messages(facts: TurnFacts) -> list[dict[str, Any]]:
    """The chat messages asking the model for a verdict on the turn."""
    tools = ", ".join(f"{r.name} ({r.status})" for r in facts.runs) or "none"
    errors = "\n".join(f"- {line}" for line in facts.error_lines[:MAX_ERROR_LINES]) or "none"
    task = (
        f"Request:\n{_clip(facts.user_text, REQUEST_CHARS)}\n\n"
        f"Tools used in order: {tools}\n"
        f"Errors:\n{errors}\n"
        f"Model calls: {facts.iterations}; tokens: {facts.prompt_tokens + facts.completion_tokens}"
        f"\n\nFinal answer:\n{_clip(facts.answer, ANSWER_CHARS) or '(none)'}"
    )
    return [{"role": "system", "content": EVALUATE_PROMPT}, {"role": "user", "content": task}]


async def model_verdict(llm: ChatModel, facts: TurnFacts) -> Verdict | None:
    """The cheap model's verdict; None when the call fails or the answer is unusable."""
    try:
        completion = await llm.complete(evaluate_messages(facts))
    except LLMError as exc:
        log.info("evaluation by the model failed (%s); using heuristics", exc)
        return None
    return parse_verdict(completion.content)


def parse_verdict(text: str) -> Verdict | None:
    """A verdict from the model's answer (fenced, wrapped or loose JSON); None when it lacks an
    outcome or a quality."""
    cleaned = _THINK.sub("", text or "").strip()
    if not cleaned:
        return None
    try:
        value = repair_json(cleaned)
    except (JSONRepairError, RecursionError):
        return None
    if isinstance(value, dict) and isinstance(value.get("evaluation"), dict):
        value = value["evaluation"]
    if not isinstance(value, dict):
        return None
    outcome = str(value.get("outcome") or "").strip().lower()
    outcome = {"succeeded": "success", "successful": "success", "fail": "failed"}.get(
        outcome, outcome
    )
    quality = value.get("quality")
    if isinstance(quality, str) and quality.strip().isdigit():
        quality = int(quality.strip())
    if (
        outcome not in OUTCOMES
        or not isinstance(quality, (int, float))
        or isinstance(quality, bool)
    ):
        return None
    reason = " ".join(str(value.get("reason") or "").split())[:500]
    return Verdict(outcome, max(1, min(5, round(quality))), reason, "model")


async def judge(llm: ChatModel | None, facts: TurnFacts) -> Verdict:
    """The model's verdict when it gives one, else the heuristics'; a stopped turn failed."""
    floor = heuristic_verdict(facts)
    if llm is None:
        return floor
    verdict = await model_verdict(llm, facts)
    if verdict is None:
        return floor
    if facts.stopped and verdict.outcome != "failed":
        return Verdict("failed", min(verdict.quality, 2), verdict.reason or floor.reason, "model")
    return verdict


def evaluation_of(facts: TurnFacts, verdict: Verdict) -> Evaluation:
    """The record of a judged turn (``store.evaluations.add`` stores it)."""
    return Evaluation(
        topic_id=facts.topic_id,
        user_message_id=facts.user_message_id,
        outcome=verdict.outcome,
        quality=verdict.quality,
        source=verdict.source,
        user_text=facts.user_text,
        tools=facts.tools,
        reason=verdict.reason,
        iterations=facts.iterations,
        tool_calls=len(facts.runs),
        errors=facts.errors,
        error_text="\n".join(facts.error_lines[:MAX_ERROR_LINES]),
        prompt_tokens=facts.prompt_tokens,
        completion_tokens=facts.completion_tokens,
        finish_reason=facts.finish_reason,
    )


def _clip(text: str, limit: int) -> str:
    text = (text or "").strip()
    return text if len(text) <= limit else text[: limit - 12] + " ... [cut]"
