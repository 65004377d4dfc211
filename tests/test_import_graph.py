"""The package's import graph: no cycles between its parts, each part imports only layers below.

A *part* is a top-level subpackage (``store``, ``toolkit`` ...) or a top-level module
(``config``, ``runtime`` ...). The graph is read from the source with ``ast``: imports at module
level and inside functions both count. Two kinds are left out, because they never make one part
load another: imports under ``if TYPE_CHECKING:`` (they are for the type checker only) and the
``__main__`` entry modules (nothing imports them). Tools are loaded by name from
``toolkit/manifest.py``, which is data, so the framework never imports a tool family.

ARCHITECTURE.md ("Layers") explains the order. A new part must be placed in ``LAYERS``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = "tea_agent_mini"
PACKAGE_DIR = Path(__file__).resolve().parents[1] / PACKAGE

# Lowest first. A part may import parts of lower layers only, never its own layer or above.
LAYERS: list[set[str]] = [
    {"_version", "_lazy", "errors", "terms", "vectors", "private", "policy"},  # import nothing
    {"types", "redact", "config_values"},
    {"config"},
    {"store", "llm", "skills", "shell"},
    {"memory", "export"},
    {"toolkit", "evaluation"},  # the tool framework; learning from work
    {"mcp", "context", "home_sync"},
    {"agent"},
    {"runtime"},  # the composition root
    {"scheduler", "facade", "flows"},  # they run turns on a Runtime; flows through a Protocol
    {"tools"},  # the tool families
    {"server"},
    {"cli"},
    {PACKAGE},  # the lazy public facade, tea_agent_mini/__init__.py
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE_DIR.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def part_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else PACKAGE


def is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imported_names(tree: ast.AST, module: str, is_package: bool) -> Iterator[tuple[str, int]]:
    """Dotted names imported anywhere in ``tree`` outside ``if TYPE_CHECKING:`` blocks; for
    ``from X import y`` both ``X`` and ``X.y`` (y may be a module)."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".") if is_package else module.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            yield base, node.lineno
            for alias in node.names:
                yield f"{base}.{alias.name}", node.lineno
        stack.extend(ast.iter_child_nodes(node))


def package_modules() -> dict[str, Path]:
    return {
        module_name(path): path
        for path in PACKAGE_DIR.rglob("*.py")
        if "__pycache__" not in path.parts and path.stem != "__main__"
    }


def part_edges() -> dict[tuple[str, str], list[str]]:
    """(importer part, imported part) -> the imports that make the edge, as ``module:line``."""
    modules = package_modules()
    edges: dict[tuple[str, str], list[str]] = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for name, line in imported_names(tree, module, path.name == "__init__.py"):
            if name != PACKAGE and not name.startswith(PACKAGE + "."):
                continue
            while name not in modules:  # X.y where y is a name, not a module
                name = name.rpartition(".")[0]
            source, target = part_of(module), part_of(name)
            where = f"{module}:{line}"
            found = edges.setdefault((source, target), []) if source != target else []
            if where not in found:
                found.append(where)
    return edges


EDGES = part_edges()


def layer_of(part: str) -> int:
    for number, layer in enumerate(LAYERS):
        if part in layer:
            return number
    raise AssertionError(f"{part} is in no layer: add it to LAYERS (and to ARCHITECTURE.md)")


def test_every_part_has_a_layer():
    parts = {part_of(module) for module in package_modules()}
    placed = set().union(*LAYERS)
    assert parts - placed == set(), "parts missing from LAYERS"
    assert placed - parts == set(), "LAYERS names parts that do not exist"


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One cycle of ``graph`` as [a, b, ..., a], or [] when there is none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        path.append(node)
        for following in sorted(graph.get(node, ())):
            if state.get(following) == 1:
                return path[path.index(following) :] + [following]
            if following not in state:
                found = visit(following)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return []


def test_no_cycles_between_parts():
    graph: dict[str, set[str]] = {}
    for source, target in EDGES:
        graph.setdefault(source, set()).add(target)
    cycle = find_cycle(graph)
    steps = zip(cycle, cycle[1:], strict=False)
    witnesses = [f"{a} -> {b}: {EDGES[a, b][0]}" for a, b in steps]
    assert not cycle, "import cycle: " + "; ".join(witnesses)


@pytest.mark.parametrize("edge", sorted(EDGES), ids=lambda edge: f"{edge[0]}->{edge[1]}")
def test_imports_point_down_the_layers(edge):
    source, target = edge
    assert layer_of(target) < layer_of(source), (
        f"{source} (layer {layer_of(source)}) imports {target} (layer {layer_of(target)}): "
        f"{', '.join(EDGES[edge][:3])}"
    )


def test_the_graph_reader_sees_function_level_imports_and_skips_type_checking():
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from tea_agent_mini.runtime import Runtime\n"
        "else:\n    import tea_agent_mini.errors\n"
        "def f():\n    from ..store import state\n"
    )
    names = {name for name, _ in imported_names(ast.parse(source), f"{PACKAGE}.x.y", False)}
    assert f"{PACKAGE}.store.state" in names and f"{PACKAGE}.errors" in names
    assert not any("runtime" in name for name in names)
