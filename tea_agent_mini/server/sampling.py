"""Sampling and output-format fields of OpenAI requests, checked and turned into the
:class:`~tea_agent_mini.types.CallOptions` that every model call of the turn is sent with.

Chat completions and responses name some of them differently (``max_tokens`` /
``max_output_tokens``, ``response_format`` / ``text.format``); both end up as the chat-completions
fields the upstream model takes. What cannot be honoured is refused with a 400 that says why,
never dropped: the answer is the agent's final message after its own tool calls, so there are no
token log-probabilities to return, and client-side tool choices do not apply.
"""

from __future__ import annotations

from typing import Any

from ..types import CallOptions
from .api_errors import ApiError
from .bodies import Fields

FORMAT_TYPES = ("text", "json_object", "json_schema")
MAX_STOP = 4
STOP_CHARS = 200


def chat_options(body: Fields) -> CallOptions:
    """The options of a ``/v1/chat/completions`` body.

    Raises:
        ApiError: 400 for a value out of range, a malformed ``response_format`` or ``stop``,
            and for ``logprobs`` / ``top_logprobs`` / a ``tool_choice`` other than auto or none.
    """
    if body.raw("logprobs") or body.raw("top_logprobs") is not None:
        raise _no_logprobs("logprobs" if body.raw("logprobs") else "top_logprobs")
    _check_tool_choice(body)
    limit = body.integer("max_completion_tokens", minimum=1)
    if limit is None:
        limit = body.integer("max_tokens", minimum=1)
    return CallOptions(
        **_common(body),
        max_tokens=limit,
        stop=_stop(body),
        seed=body.integer("seed"),
        presence_penalty=body.number("presence_penalty", minimum=-2, maximum=2),
        frequency_penalty=body.number("frequency_penalty", minimum=-2, maximum=2),
        response_format=_chat_format(body.nested("response_format")),
    )


def responses_options(body: Fields) -> CallOptions:
    """The options of a ``/v1/responses`` body (``text.format`` becomes ``response_format``).

    Raises:
        ApiError: 400 as :func:`chat_options`.
    """
    if body.raw("top_logprobs") is not None:
        raise _no_logprobs("top_logprobs")
    _check_tool_choice(body)
    text_format = body.nested("text").nested("format")
    return CallOptions(
        **_common(body),
        max_tokens=body.integer("max_output_tokens", minimum=1),
        response_format=_responses_format(text_format),
    )


def _common(body: Fields) -> dict[str, Any]:
    return {
        "temperature": body.number("temperature", minimum=0, maximum=2),
        "top_p": body.number("top_p", minimum=0, maximum=1),
    }


def _no_logprobs(name: str) -> ApiError:
    return ApiError(
        400,
        f"'{name}' is not supported: the answer is the agent's final message after its own "
        "tool calls, so there are no token log-probabilities to return",
        code="unsupported_parameter",
    )


def _check_tool_choice(body: Fields) -> None:
    choice = body.raw("tool_choice")
    if choice is not None and choice not in ("auto", "none"):
        raise ApiError(
            400,
            "'tool_choice' can only be auto or none: this agent runs its own tools on the server",
            code="tools_not_supported",
        )


def _stop(body: Fields) -> tuple[str, ...]:
    raw = body.raw("stop")
    if raw is None:
        return ()
    stops = [raw] if isinstance(raw, str) else raw
    if not isinstance(stops, list) or not all(isinstance(s, str) and s for s in stops):
        raise ApiError(400, "field 'stop': expected a non-empty string or an array of them")
    if len(stops) > MAX_STOP or any(len(s) > STOP_CHARS for s in stops):
        raise ApiError(
            400, f"field 'stop': at most {MAX_STOP} sequences of {STOP_CHARS} characters each"
        )
    return tuple(stops)


def _format_type(fields: Fields) -> str | None:
    if not fields.data:
        return None
    kind = fields.text("type", required=True)
    if kind not in FORMAT_TYPES:
        raise ApiError(
            400, f"field '{fields.prefix}type': expected one of {', '.join(FORMAT_TYPES)}"
        )
    return None if kind == "text" else kind


def _chat_format(fields: Fields) -> dict[str, Any] | None:
    kind = _format_type(fields)
    if kind != "json_schema":
        return {"type": kind} if kind else None
    return {"type": kind, "json_schema": _schema_spec(fields.nested("json_schema", required=True))}


def _responses_format(fields: Fields) -> dict[str, Any] | None:
    kind = _format_type(fields)
    if kind != "json_schema":
        return {"type": kind} if kind else None
    return {"type": kind, "json_schema": _schema_spec(fields)}


def _schema_spec(fields: Fields) -> dict[str, Any]:
    """``{name, schema, strict, description}`` of a JSON-schema format, as chat completions
    take it."""
    spec: dict[str, Any] = {"name": fields.text("name", required=True, max_length=64)}
    schema = fields.nested("schema")
    if schema.data:
        spec["schema"] = schema.data
    if "strict" in fields:
        spec["strict"] = fields.flag("strict")
    description = fields.text("description", max_length=2000)
    if description:
        spec["description"] = description
    return spec
