"""The flows' errors: a flow that is malformed, failed, or cannot resume."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import TeaAgentError

if TYPE_CHECKING:
    from .records import FlowRun


class FlowError(TeaAgentError):
    """A flow or workflow cannot be built, a step failed, or a checkpoint cannot be read."""


class RunNotFound(FlowError, LookupError):
    """No checkpoint holds the run asked for."""


class StepFailed(FlowError):
    """A step raised; ``run`` is the failed run (saved: resume it by ``run.run_id``)."""

    def __init__(self, message: str, *, run: FlowRun, step: str) -> None:
        super().__init__(message)
        self.run = run
        self.step = step
