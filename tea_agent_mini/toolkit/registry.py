"""Tool metadata (`ToolSpec`), the `@tool` decorator and the `Toolkit` registry.

A tool module is a plain module whose functions carry a ``tool_spec`` attribute set by ``@tool``.
``Toolkit.load`` imports modules by name and collects those specs; the decorated functions stay
ordinary callables, so tests can call them directly with a ``ToolContext``.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from tea_agent_mini.errors import TeaAgentError

logger = logging.getLogger(__name__)

BUNDLED_PACKAGE = "tea_agent_mini.tools"
_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

# What importing a broken tool module can realistically raise. Listed rather than a bare
# ``except Exception``: the one broad handler of the code base belongs to the executor.
_IMPORT_FAILURES = (
    ImportError,
    SyntaxError,
    NameError,
    AttributeError,
    TypeError,
    ValueError,
    LookupError,
    OSError,
    RuntimeError,
    TeaAgentError,
)


@dataclass(frozen=True)
class ToolSpec:
    """A tool: a function plus what the model and the executor need to know about it."""

    name: str
    description: str
    parameters: dict[str, Any]
    func: Callable[..., Any]
    requires: tuple[str, ...] = ()
    concurrency_safe: bool = False
    mutates: bool = False
    module: str = ""
    # When set, only calls whose ``action`` argument is listed here count as mutating (a tool
    # like toolkit_file both reads and writes; reading must work in read-only mode).
    mutating_actions: frozenset[str] | None = None
    # Words a request uses for this tool without naming it ("remember" for the memory tool):
    # they count as much as the tool's name when tools are chosen for a message.
    keywords: str = ""

    def mutates_with(self, arguments: dict[str, Any]) -> bool:
        """Whether this particular call writes files or runs commands."""
        if not self.mutates:
            return False
        return self.mutating_actions is None or arguments.get("action") in self.mutating_actions

    def openai_schema(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
        }


def _check_spec(name: str, parameters: dict[str, Any]) -> None:
    if not _NAME_RE.match(name):
        raise ValueError(f"tool name {name!r} must match {_NAME_RE.pattern}")
    if not isinstance(parameters, dict) or parameters.get("type") != "object":
        raise ValueError(f"tool {name!r}: parameters must be a JSON schema with type 'object'")
    properties = parameters.get("properties", {})
    for required in parameters.get("required", ()):
        if required not in properties:
            raise ValueError(f"tool {name!r}: required parameter {required!r} is not a property")


def tool(
    name: str,
    description: str | None = None,
    parameters: dict[str, Any] | None = None,
    *,
    requires: Iterable[str] = (),
    concurrency_safe: bool = False,
    mutates: bool = False,
    mutating_actions: Iterable[str] | None = None,
    keywords: str = "",
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Mark ``func(ctx, **arguments)`` as a tool; the function is returned unchanged.

    The description and the parameters' JSON schema come from the function's docstring and
    signature (see ``toolkit/signature.py``) unless given here. ``func`` may be ``async def``:
    the executor awaits it on the event loop instead of running it in a worker thread.
    """
    actions = frozenset(mutating_actions) if mutating_actions is not None else None
    if parameters is not None:
        _check_spec(name, parameters)  # at once: a bad schema fails where it is written

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        text, schema = description, parameters
        if text is None or schema is None:
            from tea_agent_mini.toolkit.signature import describe_function

            summary, generated = describe_function(func)
            text = summary if text is None else text
            schema = generated if schema is None else schema
        if not text:
            raise ValueError(f"tool {name!r} needs a description (a docstring)")
        _check_spec(name, schema)
        func.tool_spec = ToolSpec(  # type: ignore[attr-defined]  # a function takes attributes
            name=name,
            description=text,
            parameters=schema,
            func=func,
            requires=tuple(requires),
            concurrency_safe=concurrency_safe,
            mutates=mutates,
            module=func.__module__,
            mutating_actions=actions,
            keywords=keywords,
        )
        return func

    return decorate


def specs_in(module: ModuleType) -> list[ToolSpec]:
    """The tools a module defines, in definition order (re-exported ones are skipped)."""
    found = []
    for value in vars(module).values():
        spec = getattr(value, "tool_spec", None)
        if isinstance(spec, ToolSpec) and spec.module == module.__name__:
            found.append(spec)
    return found


def missing_requirements(spec: ToolSpec) -> list[str]:
    """Import names in ``spec.requires`` that cannot be found in this environment."""
    return [name for name in spec.requires if importlib.util.find_spec(name) is None]


def _import_tool_module(name: str) -> ModuleType:
    """The bundled module ``tea_agent_mini.tools.<name>``, or else the module named ``name``."""
    bundled = f"{BUNDLED_PACKAGE}.{name}"
    try:
        return importlib.import_module(bundled)
    except ModuleNotFoundError as exc:
        # only a missing bundled module falls through; a bundled one that fails inside raises
        parts = bundled.split(".")
        missing = {".".join(parts[:end]) for end in range(3, len(parts) + 1)}
        if exc.name not in missing:
            raise
    return importlib.import_module(name)


@dataclass
class Toolkit:
    """The registry of tools available to a session.

    Built-ins are loaded at start; self-made tools and MCP servers' tools come and go while it
    runs (from tool threads and the MCP loop), so changes go through :attr:`lock`. Lookups need
    no lock: each reads the dict in one step.
    """

    tools: dict[str, ToolSpec] = field(default_factory=dict)
    load_errors: dict[str, str] = field(default_factory=dict)
    lock: threading.RLock = field(default_factory=threading.RLock, repr=False, compare=False)
    # bumped by every change, so caches built from the tools know when to rebuild
    version: int = field(default=0, compare=False)

    @classmethod
    def load(cls, modules: Iterable[str] | None = None) -> Toolkit:
        """Import tool modules: bundled ones by their name under ``tea_agent_mini.tools``
        (``"shell"``, ``"files.edit"``), any other by its full dotted path.

        ``None`` loads the bundled modules listed in ``manifest.SHIPPED``. A module that fails to
        import, or whose tools need a missing package, is recorded in ``load_errors`` and skipped.
        """
        if modules is None:
            from tea_agent_mini.toolkit.manifest import SHIPPED

            modules = SHIPPED
        toolkit = cls()
        for name in modules:
            toolkit._load_module(name)
        return toolkit

    def _load_module(self, name: str) -> None:
        try:
            module = _import_tool_module(name)
        except _IMPORT_FAILURES as exc:
            logger.warning("tool module %s failed to load: %s", name, exc)
            self.load_errors[name] = f"{type(exc).__name__}: {exc}"
            return
        problems = []
        for spec in specs_in(module):
            missing = missing_requirements(spec)
            if missing:
                problems.append(f"{spec.name} needs {', '.join(missing)} (not installed)")
                continue
            try:
                self.register(spec)
            except ValueError as exc:
                problems.append(str(exc))
        if problems:
            self.load_errors[name] = "; ".join(problems)

    def register(self, spec: ToolSpec) -> None:
        """Add a tool. Raises ValueError when the name is taken (unregister it first)."""
        with self.lock:
            existing = self.tools.get(spec.name)
            if existing is not None:
                raise ValueError(
                    f"tool {spec.name!r} is already registered (by {existing.module or 'unknown'})"
                )
            self.tools[spec.name] = spec
            self.version += 1

    def replace(self, spec: ToolSpec) -> None:
        """Put ``spec`` in place of the tool of that name (if any) in one step, so a concurrent
        lookup never misses it."""
        with self.lock:
            self.tools[spec.name] = spec
            self.version += 1

    def unregister(self, name: str) -> None:
        with self.lock:
            if self.tools.pop(name, None) is not None:
                self.version += 1

    def get(self, name: str) -> ToolSpec | None:
        return self.tools.get(name)

    def names(self) -> list[str]:
        return list(self.tools)

    def specs(self) -> list[ToolSpec]:
        return list(self.tools.values())

    def openai_tools(self, names: Iterable[str] | None = None) -> list[dict[str, Any]]:
        """OpenAI ``tools`` entries for all tools, or for ``names`` (unknown names are skipped)."""
        if names is None:
            return [spec.openai_schema() for spec in self.specs()]
        schemas = []
        for name in names:
            spec = self.tools.get(name)
            if spec is None:
                logger.warning("openai_tools: no tool named %r", name)
                continue
            schemas.append(spec.openai_schema())
        return schemas
