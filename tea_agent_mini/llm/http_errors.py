"""Translate a provider's error response into the package's LLMError tree.

The provider's own message is kept (it usually says exactly what is wrong), truncated, with any
secret masked, plus a short hint about what the user can change.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import ContextTooLong, LLMError, RateLimited, UpstreamError
from ..redact import mask_text as redact
from .retry import retry_after_from_headers

__all__ = [
    "describe_transport_error",
    "NotAModelServer",
    "lists_tea_agent_models",
    "MESSAGE_LIMIT",
    "error_from_payload",
    "error_from_status",
    "extract_error_message",
    "is_context_error",
    "redact",
]

MESSAGE_LIMIT = 400

_CONTEXT_PATTERNS = re.compile(
    r"context[ _-]?(?:length|window|size)|maximum context|max(?:imum)?[ _-]context"
    r"|too many tokens|exceed_context_size|exceeds? the (?:model'?s? )?(?:maximum|context|max)"
    r"|prompt is too long|input is too long|prompt too long|tokens? limit exceeded"
    r"|reduce the length of the messages|maximum (?:input|prompt) length|n_ctx",
    re.IGNORECASE,
)
_CONTEXT_CODES = {"context_length_exceeded", "exceed_context_size_error", "string_above_max_length"}

_HINTS = {
    401: "check api_key",
    403: "check api_key and that it may use this model",
    404: "check api_url and model_name",
    408: "the provider timed out; try again",
    413: "the request is too large; shorten the conversation",
    422: "the provider rejected the request format; check model_name and parameters",
    429: "rate limited; wait a little or lower the request rate",
}


def _truncate(text: str, limit: int = MESSAGE_LIMIT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _message_from_json(data: Any) -> tuple[str, str | None]:
    if isinstance(data, list) and data:  # Google-style [{"error": {...}}]
        data = data[0]
    if not isinstance(data, dict):
        return "", None
    error = data.get("error", data)
    if isinstance(error, str):
        return error, None
    if not isinstance(error, dict):
        return "", None
    message = error.get("message") or error.get("msg") or error.get("detail") or ""
    if not isinstance(message, str):
        message = json.dumps(message, ensure_ascii=False)
    # The most telling code: a string "code" (OpenAI), else "type" (llama.cpp sends code=400).
    code = error.get("code")
    if not isinstance(code, str):
        code = error.get("type") if isinstance(error.get("type"), str) else code
    return message, str(code) if code is not None else None


def extract_error_message(body: bytes | str, limit: int = MESSAGE_LIMIT) -> tuple[str, str | None]:
    """The provider's message and error code from a ``{"error": {"message", "code"}}`` body,
    or the body itself as plain text (HTML tags dropped), truncated to ``limit``."""
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    try:
        message, code = _message_from_json(json.loads(text))
    except ValueError:
        message, code = "", None
    if not message:
        message = re.sub(r"<[^>]+>", " ", text) if "<" in text else text
    return _truncate(message, limit) or "(empty response body)", code


def is_context_error(message: str, code: str | None = None) -> bool:
    """Whether an error says the prompt does not fit the model's context window."""
    if code is not None and code.lower() in _CONTEXT_CODES:
        return True
    return bool(_CONTEXT_PATTERNS.search(message))


def _hint(status: int) -> str:
    if status in _HINTS:
        return _HINTS[status]
    if status >= 500:
        return "the provider failed; try again later"
    return ""


def error_from_status(
    status: int,
    body: bytes | str,
    headers: Mapping[str, str] | None = None,
    *,
    secrets: Iterable[str] = (),
) -> LLMError:
    """The LLMError for an HTTP error response (not raised, so the caller decides on retry)."""
    message, code = extract_error_message(body)
    message = redact(message, list(secrets))
    if status not in (401, 403, 404, 429) and is_context_error(message, code):
        return ContextTooLong(
            message, status=status, hint="shorten the conversation or lower max_context_tokens"
        )
    if status == 429:
        retry_after = retry_after_from_headers(headers or {})
        return RateLimited(message, retry_after=retry_after, hint=_hint(status))
    return UpstreamError(message, status=status, hint=_hint(status))


def error_from_payload(payload: Mapping[str, Any], *, secrets: Iterable[str] = ()) -> LLMError:
    """The LLMError for an ``{"error": ...}`` object sent inside a 200 response or stream."""
    error = payload.get("error")
    status = None
    if isinstance(error, dict):
        for key in ("code", "status"):
            value = error.get(key)
            if isinstance(value, int) and 400 <= value <= 599:
                status = value
                break
    if status is not None:
        return error_from_status(status, json.dumps(dict(payload)), secrets=secrets)
    message, code = _message_from_json(dict(payload))
    message = redact(_truncate(message or "the provider reported an error"), list(secrets))
    if is_context_error(message, code):
        return ContextTooLong(message, hint="shorten the conversation or lower max_context_tokens")
    return UpstreamError(message, hint="the provider reported an error")


def describe_transport_error(
    exc: BaseException, connect_timeout: float, read_timeout: float
) -> tuple[str, str | None]:
    """What went wrong on the wire, and a hint; the hint is None when the URL itself is unusable."""
    import httpx

    name = type(exc).__name__
    if isinstance(exc, (httpx.InvalidURL, httpx.UnsupportedProtocol)):
        return f"{exc or name}", None
    if isinstance(exc, httpx.ConnectTimeout):
        return f"connecting timed out after {connect_timeout:g}s", "check api_url and the network"
    if isinstance(exc, httpx.ConnectError):
        return f"cannot connect ({exc or name})", "check api_url and that the server is running"
    if isinstance(exc, httpx.ReadTimeout):
        hint = "the model may be slow or stuck; raise read_timeout if it is just slow"
        return f"no data from the provider for {read_timeout:g}s", hint
    if isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError)):
        hint = "the provider may be overloaded or restarting"
        return f"the provider closed the connection ({exc or name})", hint
    return f"{name}: {exc}", "check api_url and the network"


def lists_tea_agent_models(data: Any) -> bool:
    """Whether a ``GET /models`` answer comes from a tea-agent-mini server (whose entries say
    ``owned_by: tea-agent-mini``) rather than from a model server."""
    entries = data.get("data") if isinstance(data, dict) else None
    return isinstance(entries, list) and any(
        isinstance(entry, dict) and entry.get("owned_by") == "tea-agent-mini" for entry in entries
    )


class NotAModelServer(UpstreamError):
    """api_url reaches a tea-agent-mini server (often this very one, on its own port) instead of
    the model server."""

    def __init__(self, shown_url: str) -> None:
        super().__init__(
            f"api_url {shown_url} is a tea-agent-mini server (maybe this one), not a model server",
            hint="point api_url at the model server, e.g. llama.cpp started with --port 8090: "
            "http://127.0.0.1:8090/v1, or Ollama: http://127.0.0.1:11434/v1",
        )
