"""Tool usage from the stored tool messages: calls, failures and time per tool, and the tools
that follow one another.

    stats = tool_stats(store.messages.tool_runs(since))
    pairs = frequent_pairs(store.messages.tool_runs(since))
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..store.messages import ToolRun

__all__ = ["Pair", "ToolStats", "frequent_pairs", "tool_stats"]

FAILED = frozenset({"failed"})  # "stopped" was the user's doing, not the tool's


@dataclass
class ToolStats:
    """How one tool was used over the window."""

    name: str
    calls: int = 0
    failures: int = 0
    seconds: float = 0.0  # total run time of the calls that recorded one
    timed: int = 0  # calls that recorded a duration

    @property
    def average(self) -> float:
        return self.seconds / self.timed if self.timed else 0.0

    @property
    def failure_rate(self) -> float:
        return self.failures / self.calls if self.calls else 0.0

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "calls": self.calls,
            "failures": self.failures,
            "failure_rate": round(self.failure_rate, 3),
            "avg_seconds": round(self.average, 3),
            "total_seconds": round(self.seconds, 3),
        }


@dataclass(frozen=True)
class Pair:
    """Two tools called one right after the other in the same topic, and how often."""

    first: str
    then: str
    count: int


def tool_stats(runs: Iterable[ToolRun]) -> list[ToolStats]:
    """Per tool, most called first (ties by name)."""
    by_name: dict[str, ToolStats] = {}
    for run in runs:
        stats = by_name.setdefault(run.name, ToolStats(run.name))
        stats.calls += 1
        stats.failures += run.status in FAILED
        if run.duration is not None:
            stats.seconds += max(0.0, float(run.duration))
            stats.timed += 1
    return sorted(by_name.values(), key=lambda s: (-s.calls, s.name))


def frequent_pairs(runs: Sequence[ToolRun], minimum: int = 3, limit: int = 10) -> list[Pair]:
    """Consecutive calls of two different tools in one topic, seen at least ``minimum``
    times: candidates for a combined tool or a skill. ``runs`` in call order per topic."""
    counts: Counter[tuple[str, str]] = Counter()
    for before, after in zip(runs, runs[1:], strict=False):
        if before.topic_id == after.topic_id and before.name != after.name:
            counts[before.name, after.name] += 1
    common = [(pair, n) for pair, n in counts.most_common() if n >= minimum]
    return [Pair(first, then, n) for (first, then), n in common[:limit]]
