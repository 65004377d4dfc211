"""The Responses encoder: ``/v1/responses`` requests in, ``response`` objects and events out.

A request becomes the same :class:`ChatRequest` as a chat completion (``instructions`` and
system items are the system prompt, earlier items the history, the last user item the turn), so
both routes run the same turns. The stream is the event sequence the official client parses:
``response.created``, ``response.in_progress``, then per output item ``output_item.added``,
``content_part.added``, text (or reasoning text) deltas and their ``done`` events, and last
``response.completed`` (``response.incomplete`` at the output limit, ``response.failed`` on an
error). Tool activity stays server-side, as for chat completions.

A response id names the session and the turn (``resp_<session><turn>``), so
``previous_response_id`` continues that session without storing anything more.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass, replace
from typing import Any

from ..types import Done, Error, ReasoningDelta, TextDelta, Usage
from .api_errors import ApiError
from .bodies import Fields
from .openai_format import ChatRequest, error_status, parse_chat_request
from .sampling import responses_options
from .sse import sse_event

RESPONSE_PREFIX = "resp_"
TOPIC_ID_CHARS = 32
ROLES = ("system", "developer", "user", "assistant")
REFUSED = ("tools", "background", "conversation", "prompt")


@dataclass(frozen=True)
class ResponsesRequest:
    chat: ChatRequest
    instructions: str | None = None
    previous_response_id: str | None = None
    metadata: dict[str, Any] | None = None


def response_id(topic_id: str, turn: str) -> str:
    return f"{RESPONSE_PREFIX}{topic_id}{turn}"


def session_of(previous: str) -> str:
    """The session a response id of this server belongs to.

    Raises:
        ApiError: 404 for an id this server did not make.
    """
    topic_id = previous[len(RESPONSE_PREFIX) : len(RESPONSE_PREFIX) + TOPIC_ID_CHARS]
    if not previous.startswith(RESPONSE_PREFIX) or len(topic_id) != TOPIC_ID_CHARS:
        raise ApiError(404, f"previous_response_id: no response with id {previous!r}")
    return topic_id


def parse_responses_request(body: Fields) -> ResponsesRequest:
    """Validate a ``/v1/responses`` body.

    Raises:
        ApiError: 400 naming the offending field (client tools and background runs included).
    """
    for key in REFUSED:
        if body.raw(key):
            raise ApiError(
                400,
                f"'{key}' is not supported: this agent runs its own tools on the server and "
                "answers in the same request; continue with previous_response_id",
                code="tools_not_supported" if key == "tools" else "unsupported_parameter",
            )
    instructions = body.text("instructions")
    previous = body.text("previous_response_id", max_length=200)
    session_id = body.text("session_id", max_length=64)
    if previous:
        session_id = session_of(previous)
    messages = _input_messages(body)
    if instructions:
        messages.insert(0, {"role": "system", "content": instructions})
    chat = parse_chat_request(
        Fields(
            {
                "model": body.text("model", "", max_length=200),
                "messages": messages,
                "stream": body.flag("stream"),
                "session_id": session_id,
                "profile": body.text("profile", max_length=64),
                "store": body.flag("store", True),
            }
        )
    )
    metadata = body.nested("metadata").data
    return ResponsesRequest(
        replace(chat, options=responses_options(body)), instructions, previous, metadata
    )


def _input_messages(body: Fields) -> list[dict[str, Any]]:
    raw = body.raw("input")
    if isinstance(raw, str):
        return [{"role": "user", "content": raw}]
    if not isinstance(raw, list) or not raw:
        raise ApiError(400, "field 'input' is required (a string or a non-empty array of items)")
    return [_item(item, f"input[{i}]") for i, item in enumerate(raw)]


def _item(item: Any, where: str) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise ApiError(400, f"{where}: expected a message item with 'role' and 'content'")
    kind = item.get("type", "message")
    if kind != "message" or item.get("role") not in ROLES:
        tools = isinstance(kind, str) and ("call" in kind or "tool" in kind)
        raise ApiError(
            400,
            f"{where}: only message items ({', '.join(ROLES)}) are accepted"
            + ("; the agent runs its own tools on the server" if tools else ""),
            code="tools_not_supported" if tools else None,
        )
    content = item.get("content")
    if isinstance(content, list):
        content = [_part(part, f"{where}.content[{i}]") for i, part in enumerate(content)]
    return {"role": item["role"], "content": content}


def _part(part: Any, where: str) -> dict[str, Any]:
    kind = part.get("type") if isinstance(part, dict) else None
    if kind in ("input_text", "output_text") and isinstance(part.get("text"), str):
        return {"type": "text", "text": part["text"]}
    if kind == "input_image" and isinstance(part.get("image_url"), str):
        return {"type": "image_url", "image_url": {"url": part["image_url"]}}
    raise ApiError(400, f"{where}: expected an input_text, output_text or input_image part")


def responses_usage(usage: Usage) -> dict[str, Any]:
    return {
        "input_tokens": usage.prompt_tokens,
        "input_tokens_details": {"cached_tokens": usage.cached_tokens},
        "output_tokens": usage.completion_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": usage.total_tokens or usage.prompt_tokens + usage.completion_tokens,
    }


def message_item(item_id: str, text: str, status: str = "completed") -> dict[str, Any]:
    part = {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
    return {
        "id": item_id,
        "type": "message",
        "role": "assistant",
        "status": status,
        "content": [part] if text or status != "in_progress" else [],
    }


def reasoning_item(item_id: str, text: str, status: str = "completed") -> dict[str, Any]:
    content = [{"type": "reasoning_text", "text": text}] if status != "in_progress" else []
    return {"id": item_id, "type": "reasoning", "summary": [], "content": content, "status": status}


class ResponseEncoder:
    """The ``response`` object of one request, whole or as the stream of its events."""

    def __init__(self, req: ResponsesRequest, rid: str, model: str) -> None:
        self.req = req
        self.id = rid
        self.model = model
        self.created = int(time.time())
        self.sequence = 0
        self.output: list[dict[str, Any]] = []  # finished items, in order
        self.open: dict[str, Any] | None = None  # the item being streamed
        self.text = ""

    def response(self, status: str = "in_progress", **fields: Any) -> dict[str, Any]:
        options = self.req.chat.options
        data = {
            "id": self.id,
            "object": "response",
            "created_at": self.created,
            "status": status,
            "error": None,
            "incomplete_details": None,
            "instructions": self.req.instructions,
            "max_output_tokens": options.max_tokens,
            "metadata": self.req.metadata or {},
            "model": self.model,
            "output": list(self.output),
            "parallel_tool_calls": False,
            "previous_response_id": self.req.previous_response_id,
            "store": self.req.chat.store,
            "temperature": options.temperature,
            "text": {"format": _text_format(options.response_format)},
            "tool_choice": "auto",
            "tools": [],
            "top_p": options.top_p,
            "truncation": "disabled",
            "usage": None,
        }
        return {**data, **fields}

    def whole(self, done: Done, reasoning: str) -> dict[str, Any]:
        """The non-streamed response of a finished turn."""
        if reasoning:
            self.output.append(reasoning_item(_item_id("rs"), reasoning))
        self.output.append(message_item(_item_id("msg"), done.text))
        return self.response(**_outcome(done))

    # -- the stream ---------------------------------------------------------------------------

    def _event(self, kind: str, **data: Any) -> bytes:
        self.sequence += 1
        return sse_event({"type": kind, "sequence_number": self.sequence, **data}, event=kind)

    def opening(self) -> bytes:
        created = self._event("response.created", response=self.response())
        return created + self._event("response.in_progress", response=self.response())

    def encode(self, event: Any) -> list[bytes]:
        if isinstance(event, TextDelta) and event.text:
            return self._delta("message", event.text)
        if isinstance(event, ReasoningDelta) and event.text:
            return self._delta("reasoning", event.text)
        if isinstance(event, Done):
            # an answer that was not streamed (e.g. the loop guard's) still becomes a message
            unsent = event.text and (self.open is None or self.open["type"] != "message")
            frames = self._delta("message", event.text) if unsent else []
            frames += self._close()
            outcome = _outcome(done=event)
            kind = (
                "response.completed" if outcome["status"] == "completed" else "response.incomplete"
            )
            return [*frames, self._event(kind, response=self.response(**outcome))]
        if isinstance(event, Error):
            _, _, code = error_status(event)
            error = {"code": code, "message": event.message}
            failed = self.response("failed", error=error)
            return [*self._close("incomplete"), self._event("response.failed", response=failed)]
        return []

    def _delta(self, kind: str, text: str) -> list[bytes]:
        frames: list[bytes] = []
        if self.open is None or self.open["type"] != kind:
            frames += self._close()
            frames += self._start(kind)
        assert self.open is not None
        self.text += text
        where = self._where()
        name = "output_text" if kind == "message" else "reasoning_text"
        logprobs: dict[str, Any] = {"logprobs": []} if kind == "message" else {}
        frames.append(self._event(f"response.{name}.delta", **where, delta=text, **logprobs))
        return frames

    def _where(self) -> dict[str, Any]:
        assert self.open is not None
        return {"item_id": self.open["id"], "output_index": len(self.output), "content_index": 0}

    def _start(self, kind: str) -> list[bytes]:
        if kind == "message":
            self.open = message_item(_item_id("msg"), "", "in_progress")
            part = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
        else:
            self.open = reasoning_item(_item_id("rs"), "", "in_progress")
            part = {"type": "reasoning_text", "text": ""}
        self.text = ""
        index = len(self.output)
        return [
            self._event("response.output_item.added", output_index=index, item=self.open),
            self._event("response.content_part.added", **self._where(), part=part),
        ]

    def _close(self, status: str = "completed") -> list[bytes]:
        if self.open is None:
            return []
        where, text, kind = self._where(), self.text, self.open["type"]
        if kind == "message":
            item = message_item(self.open["id"], text, status)
            part = item["content"][0]
            done = self._event("response.output_text.done", **where, text=text, logprobs=[])
        else:
            item = reasoning_item(self.open["id"], text, status)
            part = item["content"][0]
            done = self._event("response.reasoning_text.done", **where, text=text)
        frames = [
            done,
            self._event("response.content_part.done", **where, part=part),
            self._event("response.output_item.done", output_index=where["output_index"], item=item),
        ]
        self.output.append(item)
        self.open = None
        return frames


def _outcome(done: Done) -> dict[str, Any]:
    fields: dict[str, Any] = {"usage": responses_usage(done.usage)}
    if done.finish_reason == "length":
        return {
            **fields,
            "status": "incomplete",
            "incomplete_details": {"reason": "max_output_tokens"},
        }
    return {**fields, "status": "completed"}


def _text_format(response_format: dict[str, Any] | None) -> dict[str, Any]:
    if not response_format:
        return {"type": "text"}
    if response_format["type"] == "json_schema":
        return {"type": "json_schema", **response_format["json_schema"]}
    return dict(response_format)


def _item_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:24]}"
