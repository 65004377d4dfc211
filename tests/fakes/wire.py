"""The OpenAI-compatible wire format, shaped like llama.cpp's ``llama-server``.

Key sets and their order follow the captures in ``tests/fixtures/llamacpp/``; tool-call deltas
follow OpenAI (first fragment carries id, type and name; later ones only argument pieces).
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
import secrets
import struct
import time
from dataclasses import dataclass

from .script import Reply

SYSTEM_FINGERPRINT = "b0-scripted"
SSE_DONE = b"data: [DONE]\n\n"
DEFAULT_EMBEDDING_DIMENSIONS = 64

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    429: "rate_limit_error",
    500: "server_error",
    501: "not_supported_error",
    503: "unavailable_error",
}


@dataclass(frozen=True)
class WireCall:
    """A tool call with its id settled, ready to be written."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class Completion:
    """What every chunk of one answer shares."""

    id: str
    created: int
    model: str

    @classmethod
    def new(cls, model: str) -> Completion:
        return cls(id=f"chatcmpl-{secrets.token_hex(16)}", created=int(time.time()), model=model)


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int = 0

    def to_json(self) -> dict:
        return {
            "completion_tokens": self.completion_tokens,
            "prompt_tokens": self.prompt_tokens,
            "total_tokens": self.prompt_tokens + self.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": self.cached_tokens},
        }

    def timings(self) -> dict:
        # llama.cpp's non-standard extra; fixed numbers but for cache_n, the reused prefix.
        return {
            "cache_n": self.cached_tokens,
            "prompt_n": self.prompt_tokens,
            "prompt_ms": 1.0,
            "prompt_per_token_ms": 1.0 / max(1, self.prompt_tokens),
            "prompt_per_second": 1000.0 * self.prompt_tokens,
            "predicted_n": self.completion_tokens,
            "predicted_ms": 1.0,
            "predicted_per_token_ms": 1.0 / max(1, self.completion_tokens),
            "predicted_per_second": 1000.0 * self.completion_tokens,
        }


def dumps(obj: object) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def sse_event(obj: object) -> bytes:
    return b"data: " + dumps(obj) + b"\n\n"


def error_body(status: int, message: str) -> dict:
    fallback = "server_error" if status >= 500 else "invalid_request_error"
    kind = ERROR_TYPES.get(status, fallback)
    return {"error": {"code": status, "message": message, "type": kind}}


def split_text(text: str, size: int) -> list[str]:
    size = max(1, size)
    return [text[i : i + size] for i in range(0, len(text), size)]


def render_prompt(request: dict) -> str:
    """The request as a chat template lays it out (Qwen's: the system message, then the tool
    list, then the other messages), for measuring how much of it an earlier one shares."""
    messages = request.get("messages") or []
    parts = []
    if messages and isinstance(messages[0], dict) and messages[0].get("role") == "system":
        parts.append(json.dumps(messages[0].get("content"), ensure_ascii=False))
        messages = messages[1:]
    parts += [json.dumps(tool, ensure_ascii=False) for tool in request.get("tools") or []]
    parts += [json.dumps(message, ensure_ascii=False) for message in messages]
    return "\n".join(parts)


def estimate_usage(reply: Reply, request: dict, calls: list[WireCall]) -> Usage:
    """Scripted token counts, or roughly four characters per token."""
    prompt = reply.prompt_tokens
    if prompt is None:
        prompt = max(1, len(json.dumps(request.get("messages", []))) // 4)
    completion = reply.completion_tokens
    if completion is None:
        chars = len(reply.content()) + len(reply.reasoning)
        chars += sum(len(call.name) + len(call.arguments) for call in calls)
        completion = max(1, chars // 4)
    return Usage(prompt_tokens=prompt, completion_tokens=completion)


def _chunk(meta: Completion, delta: dict, finish_reason: str | None = None) -> dict:
    return {
        "choices": [{"finish_reason": finish_reason, "index": 0, "delta": delta}],
        "created": meta.created,
        "id": meta.id,
        "model": meta.model,
        "system_fingerprint": SYSTEM_FINGERPRINT,
        "object": "chat.completion.chunk",
    }


def _tool_call_chunks(meta: Completion, index: int, call: WireCall, size: int) -> list[dict]:
    head = {
        "index": index,
        "id": call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": ""},
    }
    chunks = [_chunk(meta, {"tool_calls": [head]})]
    for piece in split_text(call.arguments, size):
        fragment = {"index": index, "function": {"arguments": piece}}
        chunks.append(_chunk(meta, {"tool_calls": [fragment]}))
    return chunks


def stream_chunks(
    reply: Reply, calls: list[WireCall], meta: Completion, usage: Usage, include_usage: bool
) -> tuple[list[dict], int]:
    """All data chunks of a streamed answer, and how many come before the finish chunk."""
    size = reply.chunk_chars
    chunks = [_chunk(meta, {"role": "assistant", "content": None})]
    chunks += [_chunk(meta, {reply.reasoning_field: p}) for p in split_text(reply.reasoning, size)]
    chunks += [_chunk(meta, {"content": p}) for p in split_text(reply.content(), size)]
    for index, call in enumerate(calls):
        chunks += _tool_call_chunks(meta, index, call, size)
    body_count = len(chunks)
    finish = _chunk(meta, {}, reply.resolved_finish_reason())
    chunks.append(finish)
    # llama.cpp puts timings on the last chunk it sends: the usage chunk if asked for, else finish.
    if include_usage:
        tail = _chunk(meta, {})
        tail["choices"] = []
        tail["usage"] = usage.to_json()
        tail["timings"] = usage.timings()
        chunks.append(tail)
    else:
        finish["timings"] = usage.timings()
    return chunks, body_count


def completion_body(reply: Reply, calls: list[WireCall], meta: Completion, usage: Usage) -> dict:
    """The non-streamed ``chat.completion`` object."""
    content = reply.content()
    message: dict = {"role": "assistant", "content": content if content or not calls else None}
    if reply.reasoning:
        message[reply.reasoning_field] = reply.reasoning
    if calls:
        message["tool_calls"] = [
            {
                "type": "function",
                "function": {"name": call.name, "arguments": call.arguments},
                "id": call.id,
            }
            for call in calls
        ]
    choice = {"finish_reason": reply.resolved_finish_reason(), "index": 0, "message": message}
    return {
        "choices": [choice],
        "created": meta.created,
        "model": meta.model,
        "system_fingerprint": SYSTEM_FINGERPRINT,
        "object": "chat.completion",
        "usage": usage.to_json(),
        "id": meta.id,
        "timings": usage.timings(),
    }


def models_body(model: str) -> dict:
    entry = {"id": model, "object": "model", "created": 0, "owned_by": "scripted"}
    return {"object": "list", "data": [entry]}


def embedding_inputs(value: object) -> list[str] | None:
    """The texts to embed, or None when ``input`` has no valid OpenAI shape."""
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not value:
        return None
    if all(isinstance(item, str) for item in value):
        return list(value)
    if all(isinstance(item, int) for item in value):
        return [json.dumps(value)]
    if all(isinstance(item, list) for item in value):
        return [json.dumps(item) for item in value]
    return None


def _word_vector(word: str, dimensions: int) -> list[float]:
    values: list[float] = []
    block = 0
    while len(values) < dimensions:
        digest = hashlib.sha256(f"{block}:{word}".encode()).digest()
        values.extend((byte - 127.5) / 127.5 for byte in digest)
        block += 1
    return values[:dimensions]


def embed(text: str, dimensions: int) -> list[float]:
    """A deterministic unit vector: a sum of hashed word vectors, so shared words mean closeness."""
    words = re.findall(r"\w+", text.lower()) or [text]
    total = [0.0] * dimensions
    for word in words:
        for i, value in enumerate(_word_vector(word, dimensions)):
            total[i] += value
    norm = math.sqrt(sum(v * v for v in total)) or 1.0
    return [v / norm for v in total]


def embeddings_body(texts: list[str], model: str, dimensions: int, encoding: str) -> dict:
    data = []
    for index, text in enumerate(texts):
        vector = embed(text, dimensions)
        if encoding == "base64":
            packed = struct.pack(f"<{len(vector)}f", *vector)
            value: object = base64.b64encode(packed).decode("ascii")
        else:
            value = vector
        data.append({"object": "embedding", "index": index, "embedding": value})
    tokens = sum(max(1, len(re.findall(r"\w+", text))) for text in texts)
    return {
        "object": "list",
        "data": data,
        "model": model,
        "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
    }
