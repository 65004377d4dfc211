"""Test doubles: a scripted OpenAI-compatible server speaking llama.cpp's wire format."""

from __future__ import annotations

from .script import Reply, ToolCallSpec, echo_reply, last_user_text

__all__ = ["Reply", "ScriptedServer", "ToolCallSpec", "echo_reply", "last_user_text", "load_script"]


def __getattr__(name: str) -> object:
    # Lazy so that `python -m tests.fakes.scripted_server` does not find its own module already
    # imported by the package (runpy warns about that).
    if name in ("ScriptedServer", "load_script"):
        from . import scripted_server

        return getattr(scripted_server, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
