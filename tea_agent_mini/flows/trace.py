"""The trace of a run: one span per step, agent call and wait, with its times and outcome.

Spans are appended when they begin, so their order is the order things started; a span still
running has no ``finished`` time. The step a span belongs to comes from a context variable that
the engine sets around each step, so concurrent steps keep their own.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

CURRENT_STEP: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "tea_agent_flow_step", default=None
)


@dataclass
class Span:
    """One timed piece of a run. ``kind`` is step, agent or wait (or your own word)."""

    kind: str
    name: str
    started: float
    finished: float | None = None
    duration: float | None = None
    ok: bool = True
    error: str | None = None
    step: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Span:
        return cls(**data)


class Trace:
    """The spans of one run, in the order they started."""

    def __init__(self, spans: list[Span] | None = None) -> None:
        self.spans: list[Span] = list(spans or [])

    @contextmanager
    def span(self, kind: str, name: str, **detail: Any) -> Iterator[Span]:
        """Time the block as a span; an exception marks it failed (and goes on). The block may
        set ``ok``, ``error`` and ``detail`` on the span it gets."""
        span = Span(kind, name, time.time(), step=CURRENT_STEP.get(), detail=dict(detail))
        self.spans.append(span)
        began = time.perf_counter()
        try:
            yield span
        except BaseException as exc:
            span.ok = False
            span.error = describe(exc)
            raise
        finally:
            span.duration = round(time.perf_counter() - began, 6)
            span.finished = span.started + span.duration

    def to_json(self) -> list[dict[str, Any]]:
        return [span.to_json() for span in self.spans]


def describe(exc: BaseException) -> str:
    """``Type: message`` of an exception, as runs record it."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
