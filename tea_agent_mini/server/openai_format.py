"""The OpenAI encoder: chat-completion requests in, ``chat.completion`` objects and chunks out.

Only what OpenAI clients understand goes on the wire: content and ``reasoning_content`` deltas,
``finish_reason`` and the usage chunk. Tool activity stays server-side. A failure after the
stream has started is sent the way vLLM and llama.cpp do it, as ``data: {"error": {...}}``
followed by ``data: [DONE]``; the official ``openai`` client raises ``APIError`` on that frame.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..types import CallOptions, Done, Error, Message, ReasoningDelta, TextDelta, Usage
from .api_errors import ApiError, error_body
from .bodies import Fields
from .sampling import chat_options
from .sse import sse_event
from .ui_events import usage_dict

DONE_FRAME = b"data: [DONE]\n\n"
IMPORT_ROLES = ("system", "developer", "user", "assistant")

# Error.kind -> (HTTP status, error type, code)
_ERROR_STATUS = {
    "rate_limited": (429, "rate_limit_error", "rate_limited"),
    "context": (400, "invalid_request_error", "context_length_exceeded"),
    "upstream": (502, "upstream_error", "upstream_error"),
    "interrupted": (502, "upstream_error", "stream_interrupted"),
    "cancelled": (499, "cancelled", "cancelled"),
    "config": (503, "service_unavailable", "model_not_configured"),
}


@dataclass
class ChatRequest:
    """A validated ``/v1/chat/completions`` body, split into what the agent needs."""

    model: str
    turn: str | list[dict[str, Any]]
    history: list[Message] = field(default_factory=list)
    system: str | None = None
    stream: bool = False
    include_usage: bool = False
    session_id: str | None = None
    profile: str | None = None
    options: CallOptions = CallOptions()
    store: bool = True  # False: no session is left once the turn has ended


def parse_chat_request(body: Fields) -> ChatRequest:
    """Validate the request; the last message must be the user's turn.

    Raises:
        ApiError: 400 naming the offending field, also for client-side ``tools``.
    """
    for key in ("tools", "functions"):
        if body.raw(key):
            raise ApiError(
                400,
                f"'{key}' is not supported: this agent runs its own tools on the server and "
                "answers with the final message; send the conversation without tools",
                code="tools_not_supported",
            )
    n = body.integer("n", 1, minimum=1)
    if n != 1:
        raise ApiError(400, "field 'n': only one choice per request is supported")
    messages = [_message(item, i) for i, item in enumerate(body.array("messages", required=True))]
    if not messages:
        raise ApiError(400, "field 'messages' must not be empty")
    last = messages[-1]
    if last.role != "user" or not last.content:
        raise ApiError(400, "the last message must be a non-empty user message (the turn)")
    system = "\n\n".join(m.text for m in messages[:-1] if m.role in ("system", "developer"))
    stream_options = body.nested("stream_options")
    session_id = body.text("session_id", max_length=64)
    store = body.flag("store", True)
    if session_id and not store:
        raise ApiError(
            400,
            "'store: false' runs in a new session that is not kept; it cannot continue one "
            "(drop session_id / previous_response_id)",
        )
    return ChatRequest(
        model=body.text("model", "", max_length=200),
        turn=last.content,
        history=[m for m in messages[:-1] if m.role in ("user", "assistant")],
        system=system or None,
        stream=body.flag("stream"),
        include_usage=stream_options.flag("include_usage"),
        session_id=session_id,
        profile=body.text("profile", max_length=64),
        options=chat_options(body),
        store=store,
    )


def _message(item: Any, index: int) -> Message:
    where = f"messages[{index}]"
    if not isinstance(item, dict):
        raise ApiError(400, f"{where}: expected an object with 'role' and 'content'")
    fields = Fields(item, f"{where}.")
    role = fields.text("role", required=True)
    if role in ("tool", "function") or item.get("tool_calls") or item.get("function_call"):
        raise ApiError(
            400,
            f"{where}: tool calls and tool results are not accepted; the agent runs its own "
            "tools on the server",
            code="tools_not_supported",
        )
    if role not in IMPORT_ROLES:
        raise ApiError(400, f"{where}.role: expected one of {', '.join(IMPORT_ROLES)}")
    content = item.get("content")
    if content is None:
        content = ""
    elif isinstance(content, list):
        content = [_part(part, f"{where}.content[{i}]") for i, part in enumerate(content)]
    elif not isinstance(content, str):
        raise ApiError(400, f"{where}.content: expected a string or an array of content parts")
    return Message(role=role, content=content)


def _part(part: Any, where: str) -> dict[str, Any]:
    if isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
        return {"type": "text", "text": part["text"]}
    if isinstance(part, dict) and part.get("type") == "image_url":
        image = part.get("image_url")
        url = image.get("url") if isinstance(image, dict) else image
        if isinstance(url, str) and url.startswith(("data:image/", "http://", "https://")):
            return {"type": "image_url", "image_url": {"url": url}}
    raise ApiError(400, f"{where}: expected a text part or an image_url part (data: or http URL)")


class StreamEncoder(Protocol):
    """Turns a turn's events into SSE frames for one OpenAI-style stream."""

    def opening(self) -> bytes: ...

    def encode(self, event: Any) -> list[bytes]: ...


def error_status(error: Error) -> tuple[int, str, str]:
    return _ERROR_STATUS.get(error.kind, (500, "server_error", error.kind or "error"))


def error_api(error: Error) -> ApiError:
    status, kind, code = error_status(error)
    return ApiError(status, error.message, type=kind, code=code)


def finish_reason(done: Done) -> str:
    return "length" if done.finish_reason == "length" else "stop"


class CompletionEncoder:
    """Builds the response for one request: the whole object, or the stream of chunks."""

    def __init__(self, model: str, include_usage: bool = False) -> None:
        self.id = f"chatcmpl-{uuid.uuid4().hex[:24]}"
        self.created = int(time.time())
        self.model = model
        self.include_usage = include_usage

    def completion(self, done: Done, reasoning: str = "") -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": done.text}
        if reasoning:
            message["reasoning_content"] = reasoning
        return {
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason(done)}],
            "usage": openai_usage(done.usage),
        }

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return sse_event(self._envelope([choice]))

    def _envelope(self, choices: list[dict[str, Any]]) -> dict[str, Any]:
        data = {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": choices,
        }
        if self.include_usage:
            data["usage"] = None
        return data

    def opening(self) -> bytes:
        return self._chunk({"role": "assistant", "content": ""})

    def encode(self, event: Any) -> list[bytes]:
        if isinstance(event, Done):
            return self.finish(event)
        if isinstance(event, Error):
            return self.error(event)
        chunk = self.delta(event)
        return [chunk] if chunk is not None else []

    def delta(self, event: Any) -> bytes | None:
        if isinstance(event, TextDelta):
            return self._chunk({"content": event.text})
        if isinstance(event, ReasoningDelta):
            return self._chunk({"reasoning_content": event.text})
        return None

    def finish(self, done: Done) -> list[bytes]:
        frames = [self._chunk({}, finish_reason(done))]
        if self.include_usage:
            data = self._envelope([])
            data["usage"] = openai_usage(done.usage)
            frames.append(sse_event(data))
        frames.append(DONE_FRAME)
        return frames

    def error(self, error: Error) -> list[bytes]:
        _, kind, code = error_status(error)
        return [sse_event(error_body(error.message, kind, code)), DONE_FRAME]


def openai_usage(usage: Usage) -> dict[str, Any]:
    """Usage in OpenAI's shape: cached prompt tokens under ``prompt_tokens_details`` (and, as
    our other routes report it, ``cached_tokens``)."""
    return {**usage_dict(usage), "prompt_tokens_details": {"cached_tokens": usage.cached_tokens}}
