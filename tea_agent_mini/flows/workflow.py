"""``Workflow``: a graph of nodes built as data, for when the shape of the work is known only at
run time (read from a file, chosen by a user).

    wf = Workflow("release")
    wf.task("plan", plan)                       # fn(ctx): sync or async; its return is kept
    wf.condition("ready", is_ready, {"yes": "ship", "no": "stop"})
    wf.loop("fix", "patch", until=tests_pass, max_times=3)   # runs "patch" until tests pass
    wf.task("patch", patch)
    wf.parallel("ship", ["tag", "notes"])       # both at once; their outputs as a dict
    wf.wait("cool", 0.5)                        # seconds, or a predicate fn(ctx) polled
    wf.end("stop")
    wf.edge("plan", "fix"); wf.edge("fix", "ready") ...
    run = wf.kickoff(inputs={"version": "1.2"}, agents=runner)

A node's fn gets a :class:`~tea_agent_mini.flows.workflow_run.WorkflowContext`: ``ctx.state``
(a dict, saved with every checkpoint), ``ctx.outputs`` (what each node returned) and
``ctx.agent(name)``. Nodes that a loop or a parallel runs belong to it: they have no edges.
Every other node leads on (an edge, or a condition's branches) until an end node; repeating
is the loop node's job, so edges may not form a cycle. ``validate()`` checks all of this; the
run and the diagram call it first.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .agents import AgentRunner
from .checkpoints import check_name
from .errors import FlowError
from .journal import run_to_end
from .nodes import Condition, End, Loop, Node, NodeFn, Parallel, Task, Wait
from .records import FlowRun
from .validation import validate
from .workflow_run import run_workflow


class Workflow:
    """Nodes and edges; ``start`` names the first node (default: the one nothing leads to)."""

    def __init__(self, name: str, *, start: str | None = None) -> None:
        self.name = check_name("workflow", name)
        self.start = start
        self.nodes: dict[str, Node] = {}
        self.edges: dict[str, str] = {}

    def _add(self, node: Node) -> str:
        if not node.name:
            raise FlowError(f"{self.name}: a node needs a name")
        if node.name in self.nodes:
            raise FlowError(f"{self.name}: there is a node {node.name!r} already")
        self.nodes[node.name] = node
        return node.name

    def task(self, name: str, fn: NodeFn) -> str:
        return self._add(Task(name, fn))

    def condition(self, name: str, fn: NodeFn, branches: Mapping[str, str]) -> str:
        """``fn(ctx)`` returns a label; the run goes on at ``branches[label]``."""
        if not branches:
            raise FlowError(f"{self.name}: condition {name!r} has no branches")
        return self._add(Condition(name, fn, dict(branches)))

    def loop(self, name: str, body: str, *, until: NodeFn, max_times: int = 10) -> str:
        """Run the node ``body`` until ``until(ctx)`` is true, at most ``max_times`` times."""
        if max_times < 1:
            raise FlowError(f"{self.name}: loop {name!r} needs max_times of at least 1")
        return self._add(Loop(name, body, until, max_times))

    def parallel(self, name: str, nodes: Iterable[str]) -> str:
        children = tuple(nodes)
        if not children:
            raise FlowError(f"{self.name}: parallel {name!r} has no nodes to run")
        return self._add(Parallel(name, children))

    def wait(
        self,
        name: str,
        until: float | NodeFn,
        *,
        timeout: float | None = None,
        every: float = 0.05,
    ) -> str:
        """Wait ``until`` seconds, or until the predicate ``until(ctx)`` is true (checked every
        ``every`` seconds; after ``timeout`` seconds the step fails)."""
        if callable(until):
            return self._add(Wait(name, until=until, timeout=timeout, every=every))
        if until < 0:
            raise FlowError(f"{self.name}: wait {name!r} cannot last {until} seconds")
        return self._add(Wait(name, seconds=float(until)))

    def end(self, name: str) -> str:
        return self._add(End(name))

    def edge(self, source: str, target: str) -> None:
        """After ``source`` comes ``target`` (one edge per node; branch with a condition)."""
        if source in self.edges:
            raise FlowError(f"{self.name}: {source!r} leads to {self.edges[source]!r} already")
        self.edges[source] = target

    def validate(self) -> str:
        """The start node, once the graph is sound. Raises FlowError naming the problem."""
        return validate(self)

    def mermaid(self) -> str:
        from .mermaid import workflow_chart

        self.validate()
        return workflow_chart(self)

    def kickoff(
        self,
        inputs: Mapping[str, Any] | None = None,
        *,
        agents: AgentRunner | None = None,
        runtime: object | None = None,
        checkpoint_dir: Path | str | None = None,
        resume: str | None = None,
    ) -> FlowRun:
        """Run the workflow to its end (``asyncio.run`` around :meth:`kickoff_async`)."""
        coroutine = self.kickoff_async(
            inputs, agents=agents, runtime=runtime, checkpoint_dir=checkpoint_dir, resume=resume
        )
        return run_to_end(coroutine)

    async def kickoff_async(
        self,
        inputs: Mapping[str, Any] | None = None,
        *,
        agents: AgentRunner | None = None,
        runtime: object | None = None,
        checkpoint_dir: Path | str | None = None,
        resume: str | None = None,
    ) -> FlowRun:
        """Run it: ``inputs`` go into ``ctx.state``; ``resume`` (a run id or ``"last"``) goes on
        from where that run stopped. Raises StepFailed, RunNotFound, FlowError."""
        return await run_workflow(
            self,
            inputs or {},
            agents=agents,
            runtime=runtime,
            checkpoint_dir=checkpoint_dir,
            resume=resume,
        )
