"""Running a Workflow: one node after another from the start, each top-level node checkpointed
when it finishes; a resumed run goes on at the node that was due.

A loop or a parallel is one step of the run: a crash inside it runs the whole of it again.
Wait and end nodes pass the output before them on, so a run's output is the last real one.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .agents import AgentHandle, AgentRunner, runner_of
from .checkpoints import Checkpoints
from .errors import FlowError
from .journal import Journal, call_user
from .nodes import Condition, Loop, Node, Parallel, Task, Wait
from .records import FlowRun, Pending
from .trace import Trace

if TYPE_CHECKING:
    from .workflow import Workflow


class WorkflowContext:
    """What a node's fn gets: the shared ``state`` (a dict), every node's ``outputs`` so far,
    the ``run_id`` and ``agent(name)``."""

    def __init__(
        self,
        run: FlowRun,
        runner: AgentRunner | None,
        loop: asyncio.AbstractEventLoop,
    ) -> None:
        self.state: dict[str, Any] = run.state
        self.outputs: dict[str, Any] = {step.name: step.output for step in run.steps}
        self.run_id = run.run_id
        self.last: Any = run.output
        self._runner = runner
        self._trace: Trace = run.trace
        self._loop = loop

    def agent(self, name: str) -> AgentHandle:
        return AgentHandle(name, self._runner, self._trace, self._loop)


async def run_workflow(
    workflow: Workflow,
    inputs: Mapping[str, Any],
    *,
    agents: AgentRunner | None,
    runtime: object | None,
    checkpoint_dir: Path | str | None,
    resume: str | None,
) -> FlowRun:
    start = workflow.validate()
    runner = runner_of(agents, runtime)
    checkpoints = Checkpoints(checkpoint_dir)
    if resume is None:
        state = dict(inputs)
        journal = Journal.begin(checkpoints, workflow.name, "workflow", state, [Pending(start)])
    else:
        journal = Journal.resume(checkpoints, workflow.name, resume)
        if not isinstance(journal.run.state, dict):
            where = checkpoints.path(workflow.name, journal.run.run_id)
            raise FlowError(f"cannot resume from {where}: the saved state is not an object")
        journal.run.state.update(inputs)
        journal.save()
    context = WorkflowContext(journal.run, runner, asyncio.get_running_loop())
    await WorkflowEngine(workflow, journal, context).drive()
    return journal.completed()


class WorkflowEngine:
    def __init__(self, workflow: Workflow, journal: Journal, context: WorkflowContext) -> None:
        self.workflow = workflow
        self.journal = journal
        self.context = context

    async def drive(self) -> None:
        due = self.journal.run.pending[0] if self.journal.run.pending else None
        while due is not None:
            node = self.workflow.nodes.get(due.step)
            if node is None:  # a checkpoint of an older version of the workflow
                exc = FlowError(f"{self.workflow.name} has no node {due.step!r}")
                raise self.journal.failed(due.step, exc, [due])
            try:
                call = functools.partial(self.run_node, node)
                record = await self.journal.step(node.name, due.trigger, call)
            except Exception as exc:
                raise self.journal.failed(node.name, exc, [due]) from exc
            if isinstance(node, Condition):
                following: str | None = node.branches[record.output]
                self.context.outputs[node.name] = record.output  # a label: not the data
            else:
                following = self.workflow.edges.get(node.name)
                self._keep(node.name, record.output)
            due = Pending(following, trigger=node.name) if following else None
            self.journal.finished(record, [due] if due else [])

    def _keep(self, name: str, output: Any) -> None:
        self.context.outputs[name] = output
        self.context.last = output

    async def run_node(self, node: Node) -> Any:
        """What ``node`` returns (a condition: its label)."""
        context = self.context
        if isinstance(node, Task):
            return await call_user(node.fn, context)
        if isinstance(node, Condition):
            label = await call_user(node.fn, context)
            if label not in node.branches:
                choices = ", ".join(map(repr, node.branches))
                raise FlowError(f"condition {node.name!r} returned {label!r}, not one of {choices}")
            return label
        if isinstance(node, Loop):
            return await self._loop(node)
        if isinstance(node, Parallel):
            outputs = await asyncio.gather(*(self._inner(name) for name in node.children))
            return dict(zip(node.children, outputs, strict=True))
        if isinstance(node, Wait):
            await self._wait(node)
        return context.last  # wait and end

    async def _inner(self, name: str, **detail: Any) -> Any:
        """A node run by a loop or a parallel: its own span, its output kept."""
        with self.journal.trace.span("step", name, **detail):
            output = await self.run_node(self.workflow.nodes[name])
        self._keep(name, output)
        return output

    async def _loop(self, node: Loop) -> Any:
        output = None
        for iteration in range(1, node.max_times + 1):
            output = await self._inner(node.body, loop=node.name, iteration=iteration)
            if await call_user(node.until, self.context):
                break
        return output

    async def _wait(self, node: Wait) -> None:
        with self.journal.trace.span("wait", node.name) as span:
            if node.seconds is not None:
                span.detail["seconds"] = node.seconds
                await asyncio.sleep(node.seconds)
                return
            assert node.until is not None
            began = time.monotonic()
            while not await call_user(node.until, self.context):
                if node.timeout is not None and time.monotonic() - began >= node.timeout:
                    raise FlowError(f"wait {node.name!r} gave up after {node.timeout} s")
                await asyncio.sleep(node.every)
            span.detail["waited"] = round(time.monotonic() - began, 3)
