"""The OpenAI-compatible model client and its pure helpers (stream assembly, retries, JSON
repair, text tool calls, token estimates).

Names are loaded on first access, so importing this package does not import httpx.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .assemble import StreamAssembler, clean_template_tokens, completion_from_response
    from .client import OpenAIChatClient
    from .http_errors import error_from_status, extract_error_message, is_context_error
    from .repair import JSONRepairError, ToolArgumentsError, parse_tool_arguments, repair_json
    from .retry import RetryPolicy, parse_retry_after
    from .sse import SSEEvent, SSEParser
    from .textcalls import extract_text_tool_calls
    from .tokens import (
        TokenCalibrator,
        estimate_message_tokens,
        estimate_messages_tokens,
        estimate_text_tokens,
        estimate_tools_tokens,
    )

_EXPORTS = {
    "OpenAIChatClient": "client",
    "StreamAssembler": "assemble",
    "clean_template_tokens": "assemble",
    "completion_from_response": "assemble",
    "error_from_status": "http_errors",
    "extract_error_message": "http_errors",
    "is_context_error": "http_errors",
    "JSONRepairError": "repair",
    "ToolArgumentsError": "repair",
    "parse_tool_arguments": "repair",
    "repair_json": "repair",
    "RetryPolicy": "retry",
    "parse_retry_after": "retry",
    "SSEEvent": "sse",
    "SSEParser": "sse",
    "extract_text_tool_calls": "textcalls",
    "TokenCalibrator": "tokens",
    "estimate_message_tokens": "tokens",
    "estimate_messages_tokens": "tokens",
    "estimate_text_tokens": "tokens",
    "estimate_tools_tokens": "tokens",
}

__all__ = [
    "JSONRepairError",
    "OpenAIChatClient",
    "RetryPolicy",
    "SSEEvent",
    "SSEParser",
    "StreamAssembler",
    "TokenCalibrator",
    "ToolArgumentsError",
    "clean_template_tokens",
    "completion_from_response",
    "error_from_status",
    "estimate_message_tokens",
    "estimate_messages_tokens",
    "estimate_text_tokens",
    "estimate_tools_tokens",
    "extract_error_message",
    "extract_text_tool_calls",
    "is_context_error",
    "parse_retry_after",
    "parse_tool_arguments",
    "repair_json",
]


def __getattr__(name: str) -> Any:
    module_name = _EXPORTS.get(name)
    if module_name is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module_name}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
