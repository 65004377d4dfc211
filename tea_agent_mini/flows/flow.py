"""``Flow``: steps as methods, joined by ``@start``, ``@listen`` and ``@router``, sharing a typed
state, checkpointed after every step.

    @dataclass
    class ReviewState:
        draft: str = ""

    class Review(Flow[ReviewState]):
        @start()
        async def write(self):
            self.state.draft = (await self.agent("coder").run("write x")).text

        @router(write)
        def judge(self):
            return "ok" if "x" in self.state.draft else "redo"

        @listen("ok")
        def publish(self): ...

    run = Review(agents=runner).kickoff()       # or: await Review(...).kickoff_async()

Synchronous steps run in worker threads (``self.agent(...).run_sync`` reaches an agent from
there); asynchronous ones on the flow's loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar, get_args, get_origin

from .agents import AgentHandle, AgentRunner, runner_of
from .checkpoints import Checkpoints
from .engine import FlowEngine
from .errors import FlowError
from .graph import FlowGraph, Step
from .journal import Journal, call_user, run_to_end
from .records import FlowRun, Pending
from .state import apply_inputs, check_state_type, new_state, state_from_json

StateT = TypeVar("StateT")
MAX_STEPS = 100


class Flow(Generic[StateT]):
    """A flow of steps. Subclass it as ``Flow[YourState]`` (a dataclass whose fields all have
    defaults) or plain ``Flow`` (the state is a dict). ``name`` names its checkpoint folder."""

    name: ClassVar[str] = ""
    state_type: ClassVar[type] = dict
    _flow_graph: ClassVar[FlowGraph]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for base in getattr(cls, "__orig_bases__", ()):  # Flow[X], or a generic flow's Sub[X]
            origin, arguments = get_origin(base), get_args(base)
            if not (isinstance(origin, type) and issubclass(origin, Flow) and arguments):
                continue
            if not isinstance(arguments[0], TypeVar):
                cls.state_type = check_state_type(arguments[0])
        if "name" not in vars(cls):
            cls.name = cls.__name__

    def __init__(
        self,
        *,
        agents: AgentRunner | None = None,
        runtime: object | None = None,
        checkpoint_dir: Path | str | None = None,
        max_steps: int = MAX_STEPS,
    ) -> None:
        if max_steps < 1:
            raise FlowError(f"max_steps must be at least 1, not {max_steps}")
        self.state: StateT = new_state(self.state_type)
        self.max_steps = max_steps
        self._runner = runner_of(agents, runtime)
        self._checkpoints = Checkpoints(checkpoint_dir)
        self._journal: Journal | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    def graph(cls) -> FlowGraph:
        """The steps and their triggers (read once per class). Raises FlowError."""
        if "_flow_graph" not in vars(cls):  # not a base class's graph
            cls._flow_graph = FlowGraph.of(cls)
        return cls._flow_graph

    @classmethod
    def mermaid(cls) -> str:
        """The flow as a Mermaid ``flowchart TD``."""
        from .mermaid import flow_chart

        return flow_chart(cls.graph())

    @property
    def run_id(self) -> str | None:
        """The id of the run under way or last made (None before the first kickoff)."""
        return self._journal.run.run_id if self._journal else None

    def agent(self, name: str) -> AgentHandle:
        """The agent ``name`` (analyst, coder, tester, reviewer, or one of yours) for a step."""
        if self._journal is None:
            raise FlowError(f"self.agent({name!r}) works inside a step, once the flow runs")
        return AgentHandle(name, self._runner, self._journal.trace, self._loop)

    def kickoff(
        self, inputs: Mapping[str, Any] | None = None, *, resume: str | None = None
    ) -> FlowRun:
        """Run the flow to its end (``asyncio.run`` around :meth:`kickoff_async`)."""
        return run_to_end(self.kickoff_async(inputs, resume=resume))

    async def kickoff_async(
        self, inputs: Mapping[str, Any] | None = None, *, resume: str | None = None
    ) -> FlowRun:
        """Run the flow: from its start steps, or with ``resume`` (a run id or ``"last"``) from
        where that run stopped, its finished steps not run again. ``inputs`` set state fields
        first (over the saved state when resuming).

        Raises StepFailed when a step raises (the run is saved, failed, and can be resumed),
        RunNotFound when there is no such run to resume, FlowError for a malformed flow.
        """
        graph = self.graph()
        if resume is None:
            self.state = new_state(self.state_type)
            apply_inputs(self.state, inputs or {})
            starts = [Pending(name) for name in graph.starts]
            journal = Journal.begin(self._checkpoints, self.name, "flow", self.state, starts)
        else:
            journal = Journal.resume(self._checkpoints, self.name, resume)
            try:
                self.state = state_from_json(self.state_type, journal.run.state)
            except FlowError as exc:
                where = self._checkpoints.path(self.name, journal.run.run_id)
                raise FlowError(f"cannot resume from {where}: {exc}") from exc
            journal.run.state = self.state
            apply_inputs(self.state, inputs or {})
            journal.save()
        self._journal, self._loop = journal, asyncio.get_running_loop()
        await FlowEngine(graph, journal, self._invoke, self.max_steps).drive()
        return journal.completed()

    async def _invoke(self, step: Step, value: Any) -> Any:
        arguments = (value,) if step.takes_value else ()
        return await call_user(getattr(self, step.name), *arguments)
