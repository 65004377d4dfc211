"""The run being made, for both engines (Flow and Workflow): its record, kept on disk after
every finished step, its trace, and how it ends.

Checkpoints are written on the event loop's thread, synchronously: they are small, and writing
them in order is what makes the newest file the newest state.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Literal

from .agents import in_event_loop
from .checkpoints import Checkpoints, check_name
from .errors import FlowError, StepFailed
from .records import FlowRun, Pending, StepRecord, new_run_id
from .trace import CURRENT_STEP, Trace, describe


class Journal:
    """Keeps one ``FlowRun`` up to date, in memory and in its checkpoint file."""

    def __init__(self, checkpoints: Checkpoints, run: FlowRun) -> None:
        self.checkpoints = checkpoints
        self.run = run

    @classmethod
    def begin(
        cls,
        checkpoints: Checkpoints,
        flow: str,
        kind: Literal["flow", "workflow"],
        state: Any,
        due: list[Pending],
    ) -> Journal:
        """A new run, saved at once with ``due`` pending: a crash in its first step resumes."""
        check_name("flow", flow)
        journal = cls(checkpoints, FlowRun(new_run_id(), flow, kind, state=state, pending=due))
        journal.save()
        return journal

    @classmethod
    def resume(cls, checkpoints: Checkpoints, flow: str, run_id: str) -> Journal:
        """The saved run, ready to go on (its ``state`` still the saved JSON data)."""
        run = checkpoints.load(flow, run_id)
        run.status, run.finished, run.error, run.failed_step = "running", None, None, None
        return cls(checkpoints, run)

    @property
    def trace(self) -> Trace:
        return self.run.trace

    async def step(
        self, name: str, trigger: str | None, call: Callable[[], Awaitable[Any]]
    ) -> StepRecord:
        """Run one step as a span of the trace; what it raises goes on unchanged."""
        started = time.time()
        with self.trace.span("step", name, trigger=trigger):
            token = CURRENT_STEP.set(name)  # the spans inside say they belong to this step
            try:
                output = await call()
            finally:
                CURRENT_STEP.reset(token)
        return StepRecord(name, output, trigger, started, time.time())

    def finished(self, record: StepRecord, pending: list[Pending]) -> None:
        self.run.steps.append(record)
        self.run.output = record.output
        self.run.pending = list(pending)
        self.save()

    def failed(self, step: str, exc: BaseException, pending: list[Pending]) -> StepFailed:
        """Record the failure and say so; the caller raises what this returns."""
        self.run.status = "failed"
        self.run.finished = time.time()
        self.run.error = describe(exc)
        self.run.failed_step = step
        self.run.pending = list(pending)
        self.save()
        what = exc if isinstance(exc, FlowError) else self.run.error
        return StepFailed(
            f"{self.run.flow}: step {step!r} failed: {what} (run {self.run.run_id}; "
            "kickoff(resume=...) goes on from this step)",
            run=self.run,
            step=step,
        )

    def completed(self) -> FlowRun:
        self.run.status = "completed"
        self.run.finished = time.time()
        self.run.pending = []
        self.save()
        return self.run

    def save(self) -> None:
        self.checkpoints.save(self.run)


def run_to_end(coroutine: Coroutine[Any, Any, FlowRun]) -> FlowRun:
    """``asyncio.run(coroutine)``: the synchronous kickoff, for code outside an event loop."""
    if in_event_loop():
        coroutine.close()
        raise FlowError("kickoff() cannot run inside an event loop: await kickoff_async()")
    return asyncio.run(coroutine)


async def call_user(function: Callable[..., Any], *arguments: Any) -> Any:
    """Call a step's function: a coroutine function on the loop, any other in a worker thread
    (so a blocking step does not stop the others); an awaitable it returns is awaited."""
    if inspect.iscoroutinefunction(function):
        return await function(*arguments)
    result = await asyncio.to_thread(function, *arguments)
    if inspect.isawaitable(result):
        result = await result
    return result
