"""The steps of a Flow class and who listens to whom, read once from its decorated methods."""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from .decorators import Trigger, spec_of
from .errors import FlowError


@dataclass(frozen=True)
class Step:
    """A step of a flow. ``labels`` are a router's labels; ``open_labels`` says it may return
    others too (a label that is not written as a literal)."""

    name: str
    kind: Literal["start", "listen", "router"]
    trigger: Trigger | None
    takes_value: bool
    labels: tuple[str, ...] = ()
    open_labels: bool = False


class FlowGraph:
    """The steps of one Flow class, in the order they are defined (base classes first)."""

    def __init__(self, flow: str, steps: list[Step]) -> None:
        self.flow = flow
        self.steps = {step.name: step for step in steps}
        self.starts = [step.name for step in steps if step.kind == "start"]
        self.routers = [step for step in steps if step.kind == "router"]
        self._listeners: dict[str, list[Step]] = {}
        for step in steps:
            for name in step.trigger.names if step.trigger else ():
                self._listeners.setdefault(name, []).append(step)
        self._check()

    @classmethod
    def of(cls, flow_class: type) -> FlowGraph:
        methods: dict[str, Any] = {}
        for klass in reversed(flow_class.__mro__):
            for name, value in vars(klass).items():
                if spec_of(value) is not None:
                    methods.pop(name, None)  # an override takes the place of the original
                    methods[name] = value
        return cls(flow_class.__name__, [step_of(name, method) for name, method in methods.items()])

    def listeners(self, event: str) -> list[Step]:
        """The steps whose trigger names ``event`` (a step's name or a router's label)."""
        return self._listeners.get(event, [])

    def labels(self) -> set[str]:
        return {label for router in self.routers for label in router.labels}

    def _check(self) -> None:
        if not self.starts:
            raise FlowError(f"{self.flow} has no @start() step")
        known = set(self.steps) | self.labels()
        guessing = any(router.open_labels for router in self.routers)
        for step in self.steps.values():
            for name in step.trigger.names if step.trigger else ():
                if name not in known and not guessing:
                    raise FlowError(
                        f"{self.flow}.{step.name} listens to {name!r}, which is no step of "
                        "the flow and no label a router returns"
                    )


def step_of(name: str, method: Callable[..., Any]) -> Step:
    spec = spec_of(method)
    assert spec is not None
    labels: tuple[str, ...] = spec.labels or ()
    open_labels = False
    if spec.kind == "router" and spec.labels is None:
        labels, open_labels = returned_labels(method)
    return Step(
        name=name,
        kind=spec.kind,
        trigger=spec.trigger,
        takes_value=takes_value(name, method),
        labels=labels,
        open_labels=open_labels,
    )


def takes_value(name: str, method: Callable[..., Any]) -> bool:
    """Whether the step takes the value that triggered it (its one parameter after self)."""
    parameters = list(inspect.signature(method).parameters.values())[1:]
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    required = [p for p in parameters if p.default is p.empty and p.kind in positional]
    keyword = [p for p in parameters if p.kind == p.KEYWORD_ONLY and p.default is p.empty]
    if len(required) > 1 or keyword:
        raise FlowError(f"step {name!r} takes more than one value: a step takes none or one")
    return bool(required) or any(p.kind in positional for p in parameters)


def returned_labels(method: Callable[..., Any]) -> tuple[tuple[str, ...], bool]:
    """The string literals a router returns, and whether it may return anything else."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(method)))
    except (OSError, TypeError, SyntaxError):
        return (), True
    labels: list[str] = []
    open_labels = False
    for node in own_returns(tree.body[0]):
        values = [node.value]
        while values:
            value = values.pop(0)
            if isinstance(value, ast.IfExp):
                values += [value.body, value.orelse]
            elif isinstance(value, ast.Constant) and isinstance(value.value, str):
                labels.append(value.value)
            elif not (value is None or (isinstance(value, ast.Constant) and value.value is None)):
                open_labels = True
    return tuple(dict.fromkeys(labels)), open_labels


def own_returns(function: ast.stmt) -> list[ast.Return]:
    """The return statements of ``function`` itself, not of functions defined inside it."""
    found: list[ast.Return] = []
    stack: list[ast.AST] = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            found.append(node)
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            stack.extend(ast.iter_child_nodes(node))
    found.sort(key=lambda node: (node.lineno, node.col_offset))
    return found
