"""Tools: the registry, the executor, workspace confinement and one module per tool family.

    toolkit = Toolkit.load()                       # the modules listed in manifest.SHIPPED
    executor = ToolExecutor(toolkit, ToolContext(workspace=..., home=...))
    result = await executor.run(ToolCall(id="1", name="toolkit_file", arguments='{...}'))

Names are imported lazily so that importing one tool module stays cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .context import ToolContext
    from .executor import ToolExecutor, truncate_output
    from .registry import Toolkit, ToolSpec, tool

__all__ = ["ToolContext", "ToolExecutor", "ToolSpec", "Toolkit", "tool", "truncate_output"]

_HOMES = {
    "ToolContext": "context",
    "ToolExecutor": "executor",
    "truncate_output": "executor",
    "ToolSpec": "registry",
    "Toolkit": "registry",
    "tool": "registry",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
