"""Flows and workflows drawn as Mermaid ``flowchart TD`` text.

Flow: start steps are stadiums, routers diamonds, other steps boxes; a router's edges carry the
label they are taken on (dotted when the label was not found among its ``return "..."``
statements, only guessed); ``and_`` goes through a small ``and`` circle, ``or_`` is an edge from
each of its steps. Workflow: tasks are boxes, conditions diamonds, loops hexagons, parallels
subroutines, waits parallelograms, ends stadiums; dotted edges lead to the nodes a loop or a
parallel runs inside itself.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from .graph import FlowGraph, Step

if TYPE_CHECKING:
    from .workflow import Workflow

RESERVED = {"end", "graph", "subgraph", "flowchart", "style", "class", "classdef", "click"}
SHAPES = {
    "start": '(["{}"])',
    "router": '{{"{}"}}',
    "listen": '["{}"]',
    "task": '["{}"]',
    "condition": '{{"{}"}}',
    "loop": '{{{{"{}"}}}}',
    "parallel": '[["{}"]]',
    "wait": '[/"{}"/]',
    "end": '(["{}"])',
    "join": '(("{}"))',
}


class Ids:
    """Mermaid node ids for names: the name where it is a plain word, else a safe variant."""

    def __init__(self) -> None:
        self._ids: dict[str, str] = {}

    def __call__(self, name: str) -> str:
        if name not in self._ids:
            safe = re.sub(r"\W", "_", name, flags=re.ASCII) or "node"
            if safe.lower() in RESERVED or safe[0].isdigit():
                safe = f"n_{safe}"
            while safe in self._ids.values():
                safe += "_"
            self._ids[name] = safe
        return self._ids[name]


def node(ids: Ids, name: str, shape: str, text: str | None = None) -> str:
    shown = (name if text is None else text).replace('"', "#quot;")
    return f"    {ids(name)}{SHAPES[shape].format(shown)}"


def label(text: str) -> str:
    return "|" + text.replace('"', "#quot;").replace("|", "#124;") + "|"


def flow_chart(graph: FlowGraph) -> str:
    ids = Ids()
    lines = ["flowchart TD"]
    lines += [node(ids, step.name, step.kind) for step in graph.steps.values()]
    for step in graph.steps.values():
        if step.trigger is None:
            continue
        target = ids(step.name)
        if step.trigger.mode == "and":
            join = f"{step.name} and"  # a space: no step can have this name
            lines.append(node(ids, join, "join", "and"))
            lines.append(f"    {ids(join)} --> {target}")
            target = ids(join)
        for name in step.trigger.names:
            lines += [
                f"    {source} {arrow} {target}" for source, arrow in sources(graph, ids, name)
            ]
    return "\n".join(lines) + "\n"


def sources(graph: FlowGraph, ids: Ids, name: str) -> list[tuple[str, str]]:
    """Where an edge for the trigger ``name`` starts, and its arrow (with the label if any)."""
    if name in graph.steps:
        return [(ids(name), "-->")]
    claimed: list[Step] = [router for router in graph.routers if name in router.labels]
    guessed = [router for router in graph.routers if router.open_labels] if not claimed else []
    return [(ids(r.name), "-->" + label(name)) for r in claimed] + [
        (ids(r.name), "-.->" + label(name)) for r in guessed
    ]


def workflow_chart(workflow: Workflow) -> str:
    from .workflow import Condition, Loop, Parallel

    ids = Ids()
    lines = ["flowchart TD"]
    lines += [node(ids, item.name, item.kind) for item in workflow.nodes.values()]
    for item in workflow.nodes.values():
        source = ids(item.name)
        if isinstance(item, Condition):
            lines += [
                f"    {source} -->{label(key)} {ids(to)}" for key, to in item.branches.items()
            ]
        elif isinstance(item, Loop):
            lines.append(f"    {source} -.->|repeat| {ids(item.body)}")
        elif isinstance(item, Parallel):
            lines += [f"    {source} -.-> {ids(child)}" for child in item.children]
        following = workflow.edges.get(item.name)
        if following is not None:
            lines.append(f"    {source} --> {ids(following)}")
    return "\n".join(lines) + "\n"
