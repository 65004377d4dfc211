"""tea_agent_mini: a minimal-dependency, embeddable AI agent runtime in pure Python.

Importing the package is cheap: the public names below load their modules on first use.

    from tea_agent_mini import Agent
    print(Agent().run("What is in this directory?"))
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import lazy_exports
from ._version import __version__ as __version__

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "facade": ("Agent",),
        "agent.session": ("Session",),
        "runtime": ("Runtime",),
        "config": ("Config", "load_config"),
        "toolkit.registry": ("tool",),
        "errors": ("TeaAgentError",),
    },
    eager=("__version__",),
)

if TYPE_CHECKING:  # pragma: no cover - the same names again, with their types, for checkers
    from .agent.session import Session as Session
    from .config import Config as Config
    from .config import load_config as load_config
    from .errors import TeaAgentError as TeaAgentError
    from .facade import Agent as Agent
    from .runtime import Runtime as Runtime
    from .toolkit.registry import tool as tool
