"""Per-task numbers from the proxy's records, and the summary over all tasks.

Only chat requests count. The ``main`` lane is the agent's turn loop; the ``cheap`` lane
(titles, summaries, memory upkeep) is counted apart as background requests and left out of the
first-request size, the cache reuse and the prefix check, which are about the turn.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from .prefix import PrefixStep, prefix_steps
from .proxy import Exchange
from .usage import estimate_prompt_tokens


@dataclass(frozen=True)
class RequestStat:
    """One chat request as the report shows it."""

    lane: str
    session: int
    status: int
    prompt_tokens: int | None
    cached_tokens: int | None
    completion_tokens: int | None
    seconds: float
    error: str | None = None


@dataclass
class Traffic:
    """A task's model traffic."""

    requests: int = 0
    background: int = 0
    first_prompt_tokens: int | None = None
    first_prompt_estimated: bool = False
    reuse_cached: int = 0
    reuse_prompt: int = 0
    failed_requests: int = 0
    prefix: list[PrefixStep] = field(default_factory=list)
    details: list[RequestStat] = field(default_factory=list)

    @property
    def cache_reuse(self) -> float | None:
        """Cached over prompt tokens of turn requests 2..n (None when nothing was reported)."""
        return self.reuse_cached / self.reuse_prompt if self.reuse_prompt else None

    @property
    def prefix_kept(self) -> int:
        return sum(step.extends for step in self.prefix)

    @property
    def prefix_min(self) -> float | None:
        return min((step.fraction for step in self.prefix), default=None)


def _stat(exchange: Exchange, session: int) -> RequestStat:
    return RequestStat(
        lane=exchange.lane,
        session=session,
        status=exchange.status,
        prompt_tokens=exchange.tokens.prompt,
        cached_tokens=exchange.tokens.cached,
        completion_tokens=exchange.tokens.completion,
        seconds=round(exchange.seconds, 3),
        error=exchange.error,
    )


def traffic(sessions: Sequence[Sequence[Exchange]]) -> Traffic:
    """The numbers of one task from its sessions' exchanges (each list in request order)."""
    result = Traffic()
    turn: list[Exchange] = []
    for number, exchanges in enumerate(sessions, start=1):
        chats = [e for e in exchanges if e.is_chat]
        result.details += [_stat(e, number) for e in chats]
        result.failed_requests += sum(e.status != 200 or e.error is not None for e in chats)
        result.background += sum(e.lane != "main" for e in chats)
        main = [e for e in chats if e.lane == "main"]
        result.prefix += prefix_steps([e.body for e in main])
        turn += main
    result.requests = len(turn)
    if turn:
        first = turn[0]
        result.first_prompt_tokens = first.tokens.prompt
        if first.tokens.prompt is None:
            result.first_prompt_tokens = estimate_prompt_tokens(first.body)
            result.first_prompt_estimated = True
    for exchange in turn[1:]:
        if exchange.tokens.prompt is not None and exchange.tokens.cached is not None:
            result.reuse_prompt += exchange.tokens.prompt
            result.reuse_cached += exchange.tokens.cached
    return result


@dataclass
class TaskResult:
    name: str
    passed: bool
    reason: str
    seconds: float
    traffic: Traffic
    exit_codes: list[int | None] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)
    problem: str | None = None  # a timeout or a CLI that printed no JSON


@dataclass(frozen=True)
class Summary:
    tasks: int
    passed: int
    median_first_prompt: float | None
    first_prompt_estimated: bool
    cache_reuse: float | None
    median_seconds: float | None
    total_seconds: float
    prefix_kept: int
    prefix_steps: int

    @property
    def failed(self) -> int:
        return self.tasks - self.passed


def summarize(results: Sequence[TaskResult]) -> Summary:
    firsts = [r.traffic.first_prompt_tokens for r in results]
    known = [value for value in firsts if value is not None]
    cached = sum(r.traffic.reuse_cached for r in results)
    prompt = sum(r.traffic.reuse_prompt for r in results)
    seconds = [r.seconds for r in results]
    return Summary(
        tasks=len(results),
        passed=sum(r.passed for r in results),
        median_first_prompt=statistics.median(known) if known else None,
        first_prompt_estimated=any(r.traffic.first_prompt_estimated for r in results),
        cache_reuse=cached / prompt if prompt else None,
        median_seconds=statistics.median(seconds) if seconds else None,
        total_seconds=sum(seconds),
        prefix_kept=sum(r.traffic.prefix_kept for r in results),
        prefix_steps=sum(len(r.traffic.prefix) for r in results),
    )


def percent(value: float | None) -> str:
    return "n/a" if value is None else f"{round(100 * value)} %"


def summary_line(summary: Summary) -> str:
    first = "n/a"
    if summary.median_first_prompt is not None:
        approx = "~" if summary.first_prompt_estimated else ""
        first = f"{approx}{round(summary.median_first_prompt):,} tokens"
    median = "n/a" if summary.median_seconds is None else f"{summary.median_seconds:.0f} s"
    return (
        f"{summary.tasks} tasks: {summary.passed} passed, {summary.failed} failed; "
        f"median first request {first}; cache reuse {percent(summary.cache_reuse)}; "
        f"{median} median ({summary.total_seconds:.0f} s in all); "
        f"prefix kept {summary.prefix_kept}/{summary.prefix_steps} steps"
    )
