"""Flows for Python users: steps that call agents, joined into a graph, checkpointed after every
step so a crashed run resumes where it stopped, and traced.

- :class:`Flow`: methods as steps, joined by ``@start``, ``@listen``, ``@router`` (with
  ``or_``/``and_``), sharing a typed state;
- :class:`Workflow`: the same as data: task, condition, loop, parallel, wait and end nodes;
- ``self.agent(name)`` / ``ctx.agent(name)``: an agent run through the :class:`AgentRunner`
  given as ``agents=`` (or ``runtime=``, for its subagents);
- ``list_runs`` / ``load_run``: the saved runs (``<home>/flows/<flow>/<run_id>.json``).

Nothing here is imported by ``import tea_agent_mini``.
"""

from __future__ import annotations

from .agents import AgentHandle, AgentReply, AgentRunner
from .checkpoints import list_runs, load_run
from .decorators import Trigger, and_, listen, or_, router, start
from .errors import FlowError, RunNotFound, StepFailed
from .flow import Flow
from .records import FlowRun, Pending, StepRecord
from .trace import Span, Trace
from .workflow import Workflow
from .workflow_run import WorkflowContext

__all__ = [
    "AgentHandle",
    "AgentReply",
    "AgentRunner",
    "Flow",
    "FlowError",
    "FlowRun",
    "Pending",
    "RunNotFound",
    "Span",
    "StepFailed",
    "StepRecord",
    "Trace",
    "Trigger",
    "Workflow",
    "WorkflowContext",
    "and_",
    "list_runs",
    "listen",
    "load_run",
    "or_",
    "router",
    "start",
]
