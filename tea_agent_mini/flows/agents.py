"""How a step reaches an agent: the ``AgentRunner`` it is given, and a handle per agent name.

The runner is anything with ``async run(agent, task, *, context="")`` returning a reply with
``text``, ``ok``, ``error``, ``topic_id``, ``prompt_tokens`` and ``completion_tokens`` (the
runtime's subagent dispatcher is one: pass ``agents=runtime.subagents``, or ``runtime=``). The
flows never import the runtime; the agents' identities (analyst, coder, tester, reviewer, your
own) are the runner's business, and their names pass through unchanged.
"""

from __future__ import annotations

import asyncio
from typing import Any, Protocol

from .errors import FlowError
from .trace import Trace

TASK_PREVIEW = 200


class AgentReply(Protocol):
    """What one agent run returns."""

    @property
    def text(self) -> str: ...
    @property
    def ok(self) -> bool: ...
    @property
    def error(self) -> str | None: ...
    @property
    def topic_id(self) -> str | None: ...
    @property
    def prompt_tokens(self) -> int: ...
    @property
    def completion_tokens(self) -> int: ...


class AgentRunner(Protocol):
    """Runs a named agent on a task."""

    async def run(self, agent: str, task: str, *, context: str = "") -> AgentReply: ...


def runner_of(agents: AgentRunner | None, runtime: object | None) -> AgentRunner | None:
    """``agents``, else the ``subagents`` of ``runtime`` (duck-typed), else None."""
    if agents is not None:
        return agents
    if runtime is None:
        return None
    runner = getattr(runtime, "subagents", None)
    if runner is None or not callable(getattr(runner, "run", None)):
        raise FlowError(f"runtime= has no subagents to run agents with ({type(runtime).__name__})")
    return runner


class AgentHandle:
    """One agent, as a step sees it: ``await self.agent("reviewer").run("check this")``.

    Each run is a span of the trace (agent, task preview, ok, tokens, topic). A reply that is
    not ``ok`` is returned, not raised: the step decides what a failed agent means.
    """

    def __init__(
        self,
        name: str,
        runner: AgentRunner | None,
        trace: Trace,
        loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        if runner is None:
            raise FlowError(
                f"no agents to run {name!r} with: pass agents= (an AgentRunner) or runtime= "
                "to the flow"
            )
        self.name = name
        self._runner = runner
        self._trace = trace
        self._loop = loop

    async def run(self, task: str, context: str = "") -> AgentReply:
        preview = task if len(task) <= TASK_PREVIEW else task[: TASK_PREVIEW - 1] + "…"
        with self._trace.span("agent", self.name, task=preview) as span:
            reply = await self._runner.run(self.name, task, context=context)
            span.ok = bool(reply.ok)
            span.error = reply.error
            span.detail.update(reply_detail(reply))
        return reply

    def run_sync(self, task: str, context: str = "") -> AgentReply:
        """``run`` from a synchronous step (those run in worker threads, off the flow's loop)."""
        if self._loop is None or in_event_loop():
            raise FlowError(f"agent {self.name!r}: run_sync works only inside a synchronous step")
        future = asyncio.run_coroutine_threadsafe(self.run(task, context), self._loop)
        return future.result()


def in_event_loop() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def reply_detail(reply: AgentReply) -> dict[str, Any]:
    detail: dict[str, Any] = {
        "topic_id": reply.topic_id,
        "prompt_tokens": reply.prompt_tokens,
        "completion_tokens": reply.completion_tokens,
    }
    tool_calls = getattr(reply, "tool_calls", None)  # a richer reply may say what tools ran
    if isinstance(tool_calls, int | list):
        detail["tool_calls"] = tool_calls if isinstance(tool_calls, int) else len(tool_calls)
    return detail
