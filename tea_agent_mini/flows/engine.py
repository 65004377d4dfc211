"""Running a Flow's steps: each step starts as soon as its trigger fires, concurrently with the
steps already running; every finished step is checkpointed with what is still due.

When a step fails, the steps running beside it are cancelled and go back into the pending list
with it, so a resumed run starts them again and never repeats a step that finished.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from .errors import FlowError, StepFailed
from .graph import FlowGraph, Step
from .journal import Journal
from .records import Pending, StepRecord

Invoke = Callable[[Step, Any], Awaitable[Any]]
"""Calls one step of the flow object with the value that triggered it."""


class FlowEngine:
    def __init__(self, graph: FlowGraph, journal: Journal, invoke: Invoke, max_steps: int) -> None:
        self.graph = graph
        self.journal = journal
        self.invoke = invoke
        self.max_steps = max_steps

    async def drive(self) -> None:
        """Run the run's pending steps and all they trigger, until nothing is left. Raises
        StepFailed."""
        running: dict[asyncio.Task[StepRecord], Pending] = {}
        queue = list(self.journal.run.pending)
        begun = 0
        try:
            while queue or running:
                while queue:
                    if begun == self.max_steps:
                        raise self._too_many(queue, running)
                    item = queue.pop(0)
                    running[asyncio.create_task(self._one(item))] = item
                    begun += 1
                done, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                failure = self._collect([t for t in running if t in done], running, queue)
                if failure is not None:
                    item, exc = failure
                    raise self.journal.failed(item.step, exc, [item, *running.values(), *queue])
        except asyncio.CancelledError as exc:
            pending = [*running.values(), *queue]
            await _cancel(running)
            self.journal.failed(pending[0].step if pending else "", exc, pending)
            raise
        finally:
            await _cancel(running)

    def _collect(
        self,
        done: list[asyncio.Task[StepRecord]],
        running: dict[asyncio.Task[StepRecord], Pending],
        queue: list[Pending],
    ) -> tuple[Pending, BaseException] | None:
        """Record the finished steps in the order they started; the first failure, if any."""
        failure = None
        for task in done:
            item = running.pop(task)
            exc = task.exception()
            if exc is not None:
                failure = failure or (item, exc)
                continue
            record = task.result()
            queue.extend(self._fired(item, record.output))
            self.journal.finished(record, [*running.values(), *queue])
        return failure

    async def _one(self, item: Pending) -> StepRecord:
        step = self.graph.steps.get(item.step)
        if step is None:  # a checkpoint of an older version of the flow
            raise FlowError(f"{self.graph.flow} has no step {item.step!r}")

        async def call() -> Any:
            output = await self.invoke(step, item.value)
            if step.kind == "router" and not (output is None or isinstance(output, str)):
                raise FlowError(f"router {step.name!r} returned {output!r}, not a label (str)")
            return output

        return await self.journal.step(step.name, item.trigger, call)

    def _fired(self, item: Pending, output: Any) -> list[Pending]:
        """The steps that ``item`` finishing with ``output`` makes due, in definition order."""
        step = self.graph.steps[item.step]
        events = [step.name]
        if step.kind == "router" and output is not None:
            events.append(output)
        finish = len(self.journal.run.steps) + 1  # this finish's number: the cause it passes on
        due = []
        for event in events:
            for listener in self.graph.listeners(event):
                if self._opens(listener, event, item.cause, finish):
                    due.append(Pending(listener.name, output, event, finish))
        return due

    def _opens(self, listener: Step, event: str, cause: int, finish: int) -> bool:
        """Whether ``event`` runs ``listener``. An and_ waits until all its names have fired.
        An or_ of several runs once for the first of them: the others fired by steps that were
        already due when it ran (caused by the same finish or an earlier one) are absorbed."""
        trigger = listener.trigger
        assert trigger is not None
        run = self.journal.run
        if trigger.mode == "and":
            seen = run.joins.setdefault(listener.name, [])
            if event not in seen:
                seen.append(event)
            if not set(trigger.names) <= set(seen):
                return False
            del run.joins[listener.name]
        elif len(trigger.names) > 1:
            if cause <= run.fired.get(listener.name, -1):
                return False
            run.fired[listener.name] = finish
        return True

    def _too_many(
        self, queue: list[Pending], running: dict[asyncio.Task[StepRecord], Pending]
    ) -> StepFailed:
        exc = FlowError(
            f"{self.graph.flow} ran {self.max_steps} steps and wants more: a router loop that "
            "never ends? (raise max_steps if it is meant to run longer)"
        )
        return self.journal.failed(queue[0].step, exc, [*queue, *running.values()])


async def _cancel(running: dict[asyncio.Task[StepRecord], Pending]) -> None:
    for task in running:
        task.cancel()
    if running:
        await asyncio.gather(*running, return_exceptions=True)
    running.clear()
