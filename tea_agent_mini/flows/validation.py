"""Whether a Workflow can run: every name known, one start, every path ending at an end node,
no cycles. Each check raises a FlowError that names the node and says what to change."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import FlowError
from .nodes import Condition, End, Loop, Node, Parallel

if TYPE_CHECKING:
    from .workflow import Workflow


def validate(workflow: Workflow) -> str:
    """The start node of ``workflow``. Raises FlowError."""
    name = workflow.name
    if not workflow.nodes:
        raise FlowError(f"workflow {name!r} has no nodes")
    owned = owned_nodes(workflow)
    for source, target in workflow.edges.items():
        for end in (source, target):
            if end not in workflow.nodes:
                raise FlowError(f"{name}: edge {source!r} -> {target!r}: no node {end!r}")
            if end in owned:
                raise FlowError(f"{name}: {end!r} runs inside {owned[end]!r}: it cannot have edges")
    for node in workflow.nodes.values():
        check_leads_on(workflow, node, owned)
    start = start_of(workflow, owned)
    check_acyclic(workflow, start)
    reached = reachable(workflow, start)
    lost = [n for n in workflow.nodes if n not in reached and n not in owned]
    if lost:
        raise FlowError(f"{name}: unreachable from the start {start!r}: {', '.join(lost)}")
    return start


def owned_nodes(workflow: Workflow) -> dict[str, str]:
    """Nodes that a loop or parallel runs -> that loop or parallel (all names checked)."""
    owned: dict[str, str] = {}
    for node in workflow.nodes.values():
        inner: tuple[str, ...] = ()
        if isinstance(node, Loop):
            inner = (node.body,)
        elif isinstance(node, Parallel):
            inner = node.children
        for child in inner:
            what = f"{node.kind} {node.name!r}"
            if child not in workflow.nodes:
                raise FlowError(f"{workflow.name}: {what} runs {child!r}: no such node")
            if isinstance(workflow.nodes[child], Condition | End):
                raise FlowError(
                    f"{workflow.name}: {what} cannot run the {workflow.nodes[child].kind} "
                    f"{child!r}: only tasks, waits, loops and parallels run inside another"
                )
            owned[child] = node.name
    for child in owned:  # a loop whose body is (or holds) the loop itself would never end
        seen, current = {child}, owned[child]
        while current in owned:
            if current in seen:
                raise FlowError(f"{workflow.name}: {current!r} runs inside itself")
            seen.add(current)
            current = owned[current]
    return owned


def check_leads_on(workflow: Workflow, node: Node, owned: dict[str, str]) -> None:
    name, following = workflow.name, workflow.edges.get(node.name)
    if isinstance(node, Condition):
        if following is not None:
            raise FlowError(
                f"{name}: condition {node.name!r} goes where its branches say: remove its "
                f"edge to {following!r}"
            )
        for label, target in node.branches.items():
            if target not in workflow.nodes:
                raise FlowError(
                    f"{name}: condition {node.name!r} branch {label!r}: no node {target!r}"
                )
            if target in owned:
                raise FlowError(
                    f"{name}: {target!r} runs inside {owned[target]!r}: no branch can lead to it"
                )
    elif isinstance(node, End):
        if following is not None:
            raise FlowError(f"{name}: end node {node.name!r} cannot lead on to {following!r}")
    elif following is None and node.name not in owned:
        raise FlowError(
            f"{name}: {node.kind} {node.name!r} leads nowhere: add an edge from it "
            "(to an end node if the run should stop there)"
        )


def successors(workflow: Workflow, name: str) -> list[str]:
    node = workflow.nodes[name]
    if isinstance(node, Condition):
        return list(dict.fromkeys(node.branches.values()))
    following = workflow.edges.get(name)
    return [following] if following is not None else []


def start_of(workflow: Workflow, owned: dict[str, str]) -> str:
    if workflow.start is not None:
        if workflow.start not in workflow.nodes:
            raise FlowError(f"{workflow.name}: the start {workflow.start!r} is no node")
        if workflow.start in owned:
            raise FlowError(
                f"{workflow.name}: the start {workflow.start!r} runs inside "
                f"{owned[workflow.start]!r}"
            )
        return workflow.start
    entered = {target for name in workflow.nodes for target in successors(workflow, name)}
    free = [name for name in workflow.nodes if name not in entered and name not in owned]
    if not free:
        raise FlowError(
            f"{workflow.name}: no start: every node has an edge into it; name one with "
            "Workflow(..., start=)"
        )
    if len(free) > 1:
        raise FlowError(
            f"{workflow.name}: several nodes could be the start ({', '.join(free)}); name one "
            "with Workflow(..., start=)"
        )
    return free[0]


def reachable(workflow: Workflow, start: str) -> set[str]:
    seen, stack = {start}, [start]
    while stack:
        for following in successors(workflow, stack.pop()):
            if following not in seen:
                seen.add(following)
                stack.append(following)
    return seen


def check_acyclic(workflow: Workflow, start: str) -> None:
    """Edges that come back round would run forever: a loop node is how a workflow repeats."""
    done: set[str] = set()
    path: list[str] = []

    def visit(name: str) -> None:
        path.append(name)
        for following in successors(workflow, name):
            if following in path:
                cycle = " -> ".join([*path[path.index(following) :], following])
                raise FlowError(f"{workflow.name}: cycle {cycle}: repeat with a loop node")
            if following not in done:
                visit(following)
        path.pop()
        done.add(name)

    for name in [start, *workflow.nodes]:
        if name not in done:
            visit(name)
