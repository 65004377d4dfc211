"""The decorators that make a method a step of a Flow: ``@start``, ``@listen``, ``@router``, and
the triggers ``or_`` and ``and_``.

A step runs when its trigger fires. Every finished step fires its own name; a router also fires
the label it returns. ``listen(x)`` takes a step (the method, or its name) or a router label.
``or_(a, b)`` runs the step when the first of them fires; the others, when they were already
under way by then, do not run it again (a later pass through a loop does). ``and_(a, b)`` runs
it once all of them have fired, then waits for all of them again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from .errors import FlowError

F = TypeVar("F", bound=Callable[..., Any])
STEP_ATTRIBUTE = "__flow_step__"


@dataclass(frozen=True)
class Trigger:
    """What makes a step run: any of ``names`` (``or``) or all of them (``and``)."""

    mode: Literal["or", "and"]
    names: tuple[str, ...]


Source = Callable[..., Any] | str | Trigger
"""A step (method or name), a router label, or an ``or_``/``and_`` of them."""


@dataclass(frozen=True)
class StepSpec:
    """What a decorator says of a method. ``labels`` is None when a router did not name them."""

    kind: Literal["start", "listen", "router"]
    trigger: Trigger | None = None
    labels: tuple[str, ...] | None = None


def name_of(source: Callable[..., Any] | str) -> str:
    if isinstance(source, str):
        if not source:
            raise FlowError("a trigger name is empty")
        return source
    name = getattr(source, "__name__", None)
    if not isinstance(name, str):
        raise FlowError(f"a trigger is a step, its name or a router label, not {source!r}")
    return name


def trigger_of(source: Source) -> Trigger:
    if isinstance(source, Trigger):
        return source
    return Trigger("or", (name_of(source),))


def _joined(mode: Literal["or", "and"], sources: tuple[Callable[..., Any] | str, ...]) -> Trigger:
    if not sources:
        raise FlowError(f"{mode}_() needs at least one step or label")
    if any(isinstance(source, Trigger) for source in sources):
        raise FlowError(f"{mode}_() takes steps and labels, not another or_()/and_()")
    return Trigger(mode, tuple(dict.fromkeys(name_of(source) for source in sources)))


def or_(*sources: Callable[..., Any] | str) -> Trigger:
    """Run the step when the first of ``sources`` (steps, router labels) fires."""
    return _joined("or", sources)


def and_(*sources: Callable[..., Any] | str) -> Trigger:
    """Run the step once every one of ``sources`` has finished."""
    return _joined("and", sources)


def _mark(spec: StepSpec) -> Callable[[F], F]:
    def mark(method: F) -> F:
        if getattr(method, STEP_ATTRIBUTE, None) is not None:
            raise FlowError(f"{getattr(method, '__name__', method)!r} has two step decorators")
        setattr(method, STEP_ATTRIBUTE, spec)
        return method

    return mark


def start(on: Source | None = None) -> Callable[[F], F]:
    """A step that runs when the flow starts (and again when ``on`` fires, if given)."""
    return _mark(StepSpec("start", None if on is None else trigger_of(on)))


def listen(on: Source) -> Callable[[F], F]:
    """A step that runs when ``on`` fires."""
    return _mark(StepSpec("listen", trigger_of(on)))


def router(on: Source, *, labels: Iterable[str] | None = None) -> Callable[[F], F]:
    """A step that runs when ``on`` fires and returns a label (a str, or None for none) that
    triggers the steps listening to it. ``labels`` names them for the diagram; without it
    they are read from the method's ``return "..."`` statements."""
    named = None if labels is None else tuple(labels)
    return _mark(StepSpec("router", trigger_of(on), named))


def spec_of(method: Any) -> StepSpec | None:
    spec = getattr(method, STEP_ATTRIBUTE, None)
    return spec if isinstance(spec, StepSpec) else None
