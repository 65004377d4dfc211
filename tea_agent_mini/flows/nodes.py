"""The nodes of a Workflow, one record per kind."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

NodeFn = Callable[..., Any]
"""Called with the WorkflowContext; sync or async."""


@dataclass(frozen=True)
class Task:
    name: str
    fn: NodeFn
    kind: Literal["task"] = "task"


@dataclass(frozen=True)
class Condition:
    name: str
    fn: NodeFn
    branches: Mapping[str, str] = field(default_factory=dict)
    kind: Literal["condition"] = "condition"


@dataclass(frozen=True)
class Loop:
    name: str
    body: str
    until: NodeFn
    max_times: int
    kind: Literal["loop"] = "loop"


@dataclass(frozen=True)
class Parallel:
    name: str
    children: tuple[str, ...]
    kind: Literal["parallel"] = "parallel"


@dataclass(frozen=True)
class Wait:
    name: str
    seconds: float | None = None
    until: NodeFn | None = None
    timeout: float | None = None
    every: float = 0.05
    kind: Literal["wait"] = "wait"


@dataclass(frozen=True)
class End:
    name: str
    kind: Literal["end"] = "end"


Node = Task | Condition | Loop | Parallel | Wait | End
