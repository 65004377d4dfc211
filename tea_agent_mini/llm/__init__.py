"""The OpenAI-compatible model client and its pure helpers (stream assembly, retries, JSON
repair, text tool calls, token estimates).

Names are loaded on first access, so importing this package does not import httpx.
"""

from __future__ import annotations

from .._lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "assemble": ("StreamAssembler", "clean_template_tokens", "completion_from_response"),
        "client": ("OpenAIChatClient",),
        "http_errors": ("error_from_status", "extract_error_message", "is_context_error"),
        "repair": ("JSONRepairError", "ToolArgumentsError", "parse_tool_arguments", "repair_json"),
        "retry": ("RetryPolicy", "parse_retry_after"),
        "sse": ("SSEEvent", "SSEParser"),
        "textcalls": ("extract_text_tool_calls",),
        "tokens": (
            "TokenCalibrator",
            "estimate_message_tokens",
            "estimate_messages_tokens",
            "estimate_text_tokens",
            "estimate_tools_tokens",
        ),
    },
)
