"""tea_agent_mini: a minimal-dependency, embeddable AI agent runtime in pure Python.

Importing the package is cheap: the public names below load their modules on first use.

    from tea_agent_mini import Agent
    print(Agent().run("What is in this directory?"))
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._version import __version__

__all__ = [
    "Agent",
    "Config",
    "Runtime",
    "Session",
    "TeaAgentError",
    "__version__",
    "load_config",
    "tool",
]

_LAZY = {
    "Agent": "tea_agent_mini.facade:Agent",
    "Session": "tea_agent_mini.agent.session:Session",
    "Runtime": "tea_agent_mini.runtime:Runtime",
    "Config": "tea_agent_mini.config:Config",
    "load_config": "tea_agent_mini.config:load_config",
    "tool": "tea_agent_mini.toolkit.registry:tool",
    "TeaAgentError": "tea_agent_mini.errors:TeaAgentError",
}

if TYPE_CHECKING:  # pragma: no cover
    from .agent.session import Session
    from .config import Config, load_config
    from .errors import TeaAgentError
    from .facade import Agent
    from .runtime import Runtime
    from .toolkit.registry import tool


def __getattr__(name: str) -> Any:
    target = _LAZY.get(name)
    if target is None:
        raise AttributeError(f"module 'tea_agent_mini' has no attribute {name!r}")
    import importlib

    module_name, attr = target.split(":")
    value = getattr(importlib.import_module(module_name), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
