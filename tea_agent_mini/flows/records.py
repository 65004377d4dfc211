"""The record of one run, as kept in memory and in its checkpoint file.

A ``FlowRun`` says what ran (the finished steps with their outputs, in order), what is still to
run (the pending triggers), the shared state and the trace. Outputs, values and state must be
JSON to survive a checkpoint; anything else is saved as its ``str()``.
"""

from __future__ import annotations

import dataclasses
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Literal

from .errors import FlowError
from .trace import Span, Trace

Status = Literal["running", "completed", "failed"]
STATUSES = ("running", "completed", "failed")


@dataclass
class StepRecord:
    """A finished step: its name, what it returned, and what made it run."""

    name: str
    output: Any = None
    trigger: str | None = None
    started: float = 0.0
    finished: float = 0.0


@dataclass
class Pending:
    """A step that is due: its name, the value it will be given, what triggered it, and the
    number of the finished step that made it due (0: the start)."""

    step: str
    value: Any = None
    trigger: str | None = None
    cause: int = 0


@dataclass
class FlowRun:
    """One run of a flow or workflow. ``output`` is what the last finished step returned."""

    run_id: str
    flow: str
    kind: Literal["flow", "workflow"] = "flow"
    status: Status = "running"
    started: float = field(default_factory=time.time)
    finished: float | None = None
    state: Any = None
    steps: list[StepRecord] = field(default_factory=list)
    pending: list[Pending] = field(default_factory=list)
    joins: dict[str, list[str]] = field(default_factory=dict)
    fired: dict[str, int] = field(default_factory=dict)
    output: Any = None
    error: str | None = None
    failed_step: str | None = None
    trace: Trace = field(default_factory=Trace)

    @property
    def step_names(self) -> list[str]:
        return [step.name for step in self.steps]

    def summary(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "flow": self.flow,
            "kind": self.kind,
            "status": self.status,
            "started": self.started,
            "finished": self.finished,
            "steps": len(self.steps),
            "error": self.error,
        }

    def to_json(self) -> dict[str, Any]:
        """The record as JSON data (a dataclass state as its fields)."""
        state = self.state
        if dataclasses.is_dataclass(state) and not isinstance(state, type):
            state = dataclasses.asdict(state)
        return {
            **self.summary(),
            "state": jsonable(state),
            "steps": [jsonable(vars(step)) for step in self.steps],
            "pending": [jsonable(vars(pending)) for pending in self.pending],
            "joins": self.joins,
            "fired": self.fired,
            "output": jsonable(self.output),
            "failed_step": self.failed_step,
            "trace": jsonable(self.trace.to_json()),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FlowRun:
        """Raises FlowError when ``data`` is not a run record."""
        try:
            run = cls(
                run_id=str(data["run_id"]),
                flow=str(data["flow"]),
                kind=data.get("kind", "flow"),
                status=data["status"],
                started=float(data["started"]),
                finished=data.get("finished"),
                state=data.get("state"),
                steps=[StepRecord(**step) for step in data.get("steps", [])],
                pending=[Pending(**pending) for pending in data.get("pending", [])],
                joins={str(k): list(v) for k, v in data.get("joins", {}).items()},
                fired={str(k): int(v) for k, v in data.get("fired", {}).items()},
                output=data.get("output"),
                error=data.get("error"),
                failed_step=data.get("failed_step"),
                trace=Trace([Span.from_json(span) for span in data.get("trace", [])]),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise FlowError(f"not a flow run record ({exc!r})") from exc
        if run.status not in STATUSES:
            raise FlowError(f"not a flow run record (status {run.status!r})")
        return run


def new_run_id() -> str:
    """Sortable by creation time to the second, unique by its random tail."""
    return time.strftime("%Y%m%d-%H%M%S") + "-" + uuid.uuid4().hex[:8]


def jsonable(value: Any) -> Any:
    """``value`` if it is JSON data, else the same with every foreign leaf as its ``str()``."""
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        pass
    try:
        return json.loads(json.dumps(value, default=str))
    except ValueError:  # a value that contains itself
        return str(value)
