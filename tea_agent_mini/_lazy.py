"""Lazy re-exports for package facades: each public name is imported from its module on first
use, so importing a package stays cheap (``import tea_agent_mini`` loads no httpx, no yaml).

    __all__, __getattr__, __dir__ = lazy_exports(__name__, {
        "client": ("OpenAIChatClient",),          # module (relative to the package): names
        "tokens": ("TokenCalibrator", "estimate_text_tokens"),
    })

Each name is spelled once. Type checkers see these names as ``Any``; a facade whose names must
keep their types (the top-level one) imports them again under ``if TYPE_CHECKING:``.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    package: str, homes: Mapping[str, tuple[str, ...]], *, eager: tuple[str, ...] = ()
) -> tuple[list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """``__all__``, ``__getattr__`` and ``__dir__`` for ``package``. ``homes`` maps a module,
    relative to the package, to the names it provides; ``eager`` names public attributes the
    package defines itself (such as ``__version__``)."""
    where = {name: module for module, names in homes.items() for name in names}
    public = sorted([*where, *eager])

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)  # found directly from now on
        return value

    def __dir__() -> list[str]:
        return list(public)

    return public, __getattr__, __dir__
