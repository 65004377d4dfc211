"""Token counts from OpenAI-compatible responses, as the server reports them.

OpenAI-style servers report ``usage`` (``prompt_tokens_details.cached_tokens`` for the prompt
cache); llama.cpp adds ``timings`` (``cache_n`` tokens taken from the KV cache, ``prompt_n``
evaluated anew), on the JSON response or on the last chunk of a stream. When both are present
``usage`` wins; ``timings`` fills what it leaves out.
"""

from __future__ import annotations

import codecs
import json
from dataclasses import dataclass
from typing import Any

from tea_agent_mini.llm.sse import SSEEvent, SSEParser


@dataclass
class TokenCounts:
    """What one response reported; None where the server said nothing."""

    prompt: int | None = None
    completion: int | None = None
    cached: int | None = None

    def update(self, other: TokenCounts) -> None:
        """Take every number ``other`` knows (a later stream chunk overrides an earlier one)."""
        self.prompt = self.prompt if other.prompt is None else other.prompt
        self.completion = self.completion if other.completion is None else other.completion
        self.cached = self.cached if other.cached is None else other.cached


def _count(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value)


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def read_counts(payload: Any) -> TokenCounts:
    """The token counts in one response body or stream chunk (empty when it has none)."""
    payload = _mapping(payload)
    usage = _mapping(payload.get("usage"))
    timings = _mapping(payload.get("timings"))
    details = _mapping(usage.get("prompt_tokens_details"))
    counts = TokenCounts(
        prompt=_count(usage.get("prompt_tokens")),
        completion=_count(usage.get("completion_tokens")),
        cached=_count(details.get("cached_tokens")),
    )
    cache_n = _count(timings.get("cache_n"))
    prompt_n = _count(timings.get("prompt_n"))
    if counts.prompt is None and prompt_n is not None:
        # llama.cpp's prompt_n leaves out the tokens it took from the cache
        counts.prompt = prompt_n + (cache_n or 0)
    if counts.cached is None:
        counts.cached = cache_n
    if counts.completion is None:
        counts.completion = _count(timings.get("predicted_n"))
    return counts


class StreamTap:
    """Watches an SSE response go by, in pieces of any size, and keeps its token counts."""

    def __init__(self) -> None:
        self.counts = TokenCounts()
        self.events = 0
        self.reply: list[str] = []  # the text and tool-call fragments, as they came
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._parser = SSEParser()

    def feed(self, data: bytes) -> None:
        self._take(self._parser.feed(self._decoder.decode(data)))

    def finish(self) -> None:
        self._take(self._parser.feed(self._decoder.decode(b"", final=True)))
        self._take(self._parser.finish())

    def _take(self, events: list[SSEEvent]) -> None:
        for event in events:
            if event.is_done:
                continue
            self.events += 1
            try:
                payload = json.loads(event.data)
            except json.JSONDecodeError:
                continue
            self.counts.update(read_counts(payload))
            self.reply += reply_fragments(payload)


def reply_fragments(chunk: Any) -> list[str]:
    """The text and tool-call pieces of one stream chunk (empty for anything else)."""
    choices = chunk.get("choices") if isinstance(chunk, dict) else None
    delta = choices[0].get("delta") if isinstance(choices, list) and choices else None
    if not isinstance(delta, dict):
        return []
    pieces = [delta["content"]] if isinstance(delta.get("content"), str) else []
    for call in delta.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            pieces += [str(function[key]) for key in ("name", "arguments") if function.get(key)]
    return pieces


def body_reply(data: bytes) -> str:
    """What a non-streamed response said: its text, or its tool calls as JSON."""
    try:
        message = json.loads(data.decode("utf-8"))["choices"][0]["message"]
    except (UnicodeDecodeError, ValueError, KeyError, IndexError, TypeError):
        return ""
    if not isinstance(message, dict):
        return ""
    calls = message.get("tool_calls")
    return str(message.get("content") or "") + (json.dumps(calls) if calls else "")


def body_counts(data: bytes) -> TokenCounts:
    """The token counts of a non-streamed JSON response (empty when it is not JSON)."""
    try:
        return read_counts(json.loads(data.decode("utf-8")))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return TokenCounts()


def estimate_prompt_tokens(body: Any) -> int:
    """About four characters per token of the request's messages and tools, for servers that
    report no usage."""
    body = _mapping(body)
    text = json.dumps(
        {"messages": body.get("messages") or [], "tools": body.get("tools") or []},
        ensure_ascii=False,
    )
    return max(1, len(text) // 4)
