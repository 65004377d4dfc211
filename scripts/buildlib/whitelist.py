"""Which bundled tool modules the mini wheel carries, read from the source by AST (never imported).

``hatch_build.py`` loads this file by path inside the build backend, so it imports only the
standard library and nothing from its own package.

A *tool module* is a module under ``tea_agent_mini/tools/`` (at any depth) that defines at least
one ``@tool(...)`` function; it is named by its dotted path relative to that package
(``"files.edit"``; a package by its folder, for the tools of its ``__init__.py``). Support
modules (the patch engine, the deny-list …) define none and always ship. A tool module ships
only when ``manifest.SHIPPED`` names it; an EXCLUDED name may be a whole subpackage.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PACKAGE = "tea_agent_mini"
TOOLS_DIR = "tea_agent_mini/tools"
MANIFEST_PATH = "tea_agent_mini/toolkit/manifest.py"
NOT_LISTED = "a tool module that manifest.SHIPPED does not name"


class WhitelistError(Exception):
    """The manifest cannot be read."""


@dataclass(frozen=True)
class ToolDecl:
    """One ``@tool(...)`` found in the source."""

    name: str
    requires: tuple[str, ...]
    path: str
    lineno: int


@dataclass
class ToolModule:
    """A module or subpackage under the tools package."""

    name: str
    entry: str  # path relative to the root: "pkg/tools/x/y.py", or "pkg/tools/x/" for a package
    files: list[str] = field(default_factory=list)
    tools: list[ToolDecl] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    decorators: int = 0  # @tool(...) uses found, including ones that could not be read

    @property
    def is_tool_module(self) -> bool:
        return self.decorators > 0


@dataclass(frozen=True)
class Manifest:
    shipped: dict[str, str]
    excluded: dict[str, str]


def read_manifest(root: Path) -> Manifest:
    """SHIPPED and EXCLUDED from ``manifest.py``; both must be literal ``dict[str, str]``."""
    path = root / MANIFEST_PATH
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, SyntaxError) as exc:
        raise WhitelistError(f"{MANIFEST_PATH}: cannot read it: {exc}") from exc
    values = _module_constants(tree)
    found = {}
    for key in ("SHIPPED", "EXCLUDED"):
        value = values.get(key)
        if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()
        ):
            raise WhitelistError(f"{MANIFEST_PATH}: {key} must be a literal dict of str -> str")
        found[key] = value
    return Manifest(shipped=found["SHIPPED"], excluded=found["EXCLUDED"])


def discover_modules(root: Path) -> dict[str, ToolModule]:
    """Every module and subpackage under the tools package, by dotted name relative to it, with
    the tools each declares (a subpackage: those of its ``__init__.py``; its entry is the whole
    folder, so that excluding it leaves out everything in it)."""
    tools = root / TOOLS_DIR
    modules: dict[str, ToolModule] = {}
    sources = sorted(p for p in tools.rglob("*.py") if "__pycache__" not in p.parts)
    for source in sources if tools.is_dir() else []:
        parts = source.relative_to(tools).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
            if not parts:
                continue  # the tools package itself
            folder = source.parent
            files = sorted(
                _rel(root, p)
                for p in folder.rglob("*")
                if p.is_file() and "__pycache__" not in p.parts
            )
            module = ToolModule(".".join(parts), _rel(root, folder) + "/", files)
        else:
            module = ToolModule(".".join(parts), _rel(root, source), [_rel(root, source)])
        _scan_source(root, source, module)
        modules[module.name] = module
    return modules


def excluded_entries(root: Path) -> dict[str, str]:
    """Paths (files, or directories ending in ``/``) to leave out of the wheel, with the reason."""
    manifest = read_manifest(root)
    excluded = {}
    for name, module in discover_modules(root).items():
        if name in manifest.shipped or under_excluded(name, manifest.excluded):
            continue
        if name in manifest.excluded:
            excluded[module.entry] = manifest.excluded[name]
        elif module.is_tool_module:
            excluded[module.entry] = NOT_LISTED
    return excluded


def under_excluded(name: str, excluded: dict[str, str]) -> bool:
    """Whether ``name`` lies inside a subpackage that EXCLUDED names (and leaves out whole)."""
    return any(name.startswith(package + ".") for package in excluded)


def module_path(name: str) -> str:
    """Where the tool module ``name`` lives (``files.edit``: ``<TOOLS_DIR>/files/edit.py``)."""
    return f"{TOOLS_DIR}/{name.replace('.', '/')}.py"


def is_excluded(path: str, entries: dict[str, str]) -> bool:
    """Whether a wheel/source path (posix, relative) falls under one of the excluded entries."""
    return any(path == e or (e.endswith("/") and path.startswith(e)) for e in entries)


def _rel(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


def _scan_source(root: Path, source: Path, module: ToolModule) -> None:
    rel = _rel(root, source)
    try:
        tree = ast.parse(source.read_text(encoding="utf-8"), filename=rel)
    except (OSError, SyntaxError, ValueError) as exc:
        module.problems.append(f"{rel}: does not parse: {exc}")
        return
    constants = _module_constants(tree)
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for decorator in node.decorator_list:
            if isinstance(decorator, ast.Call) and _is_tool_callee(decorator.func):
                module.decorators += 1
                try:
                    module.tools.append(_tool_decl(decorator, constants, rel))
                except ValueError as exc:
                    module.problems.append(f"{rel}:{decorator.lineno}: {exc}")


def _is_tool_callee(func: ast.expr) -> bool:
    return (isinstance(func, ast.Name) and func.id == "tool") or (
        isinstance(func, ast.Attribute) and func.attr == "tool"
    )


def _tool_decl(call: ast.Call, constants: dict[str, Any], rel: str) -> ToolDecl:
    keywords = {kw.arg: kw.value for kw in call.keywords if kw.arg}
    name_node = call.args[0] if call.args else keywords.get("name")
    if name_node is None:
        raise ValueError("@tool without a name")
    name = _resolve(name_node, constants, "the tool name")
    if not isinstance(name, str):
        raise ValueError("the tool name must be a string")
    requires_node = keywords.get("requires")
    requires = () if requires_node is None else _resolve(requires_node, constants, "requires")
    if not isinstance(requires, (tuple, list)) or not all(isinstance(r, str) for r in requires):
        raise ValueError(f"tool {name!r}: requires must be a literal tuple/list of import names")
    return ToolDecl(name, tuple(requires), rel, call.lineno)


def _resolve(node: ast.expr, constants: dict[str, Any], what: str) -> Any:
    if isinstance(node, ast.Name) and node.id in constants:
        return constants[node.id]
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{what} is not a literal (or a module-level literal constant)") from exc


def _module_constants(tree: ast.Module) -> dict[str, Any]:
    """Top-level ``NAME = <literal>`` / ``NAME: T = <literal>`` assignments."""
    constants: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        elif isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        else:
            continue
        try:
            literal = ast.literal_eval(value)
        except (ValueError, TypeError):
            continue
        for target in targets:
            if isinstance(target, ast.Name):
                constants[target.id] = literal
    return constants
