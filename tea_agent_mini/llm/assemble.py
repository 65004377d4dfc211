"""Assemble streamed chat-completion chunks (and whole responses) into a :class:`Completion`.

Providers differ in small ways; all of these are accepted:
- ``content`` may be JSON null; reasoning arrives as ``reasoning_content`` (DeepSeek, Qwen,
  llama.cpp) or ``reasoning`` (Ollama, newer vLLM, OpenRouter);
- tool calls arrive in fragments keyed by ``index`` (OpenAI), as one whole call per chunk, without
  ``index``, or with the ``id`` repeated on every fragment;
- usage comes in a trailing chunk whose ``choices`` is ``[]``, or on the finish chunk.
"""

from __future__ import annotations

import dataclasses
import json
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

from ..types import Completion, ReasoningDelta, TextDelta, ToolCall, Usage

__all__ = [
    "StreamAssembler",
    "clean_template_tokens",
    "completion_events",
    "completion_from_response",
    "new_call_id",
]


def new_call_id() -> str:
    """An id for a tool call the provider sent without one."""
    return f"call_{uuid.uuid4().hex[:24]}"


@dataclass
class _PendingCall:
    id: str = ""
    name: str = ""
    parts: list[str] = field(default_factory=list)

    def add(self, fragment: dict[str, Any]) -> None:
        if not self.id and fragment.get("id"):
            self.id = str(fragment["id"])
        function = fragment.get("function")
        if not isinstance(function, dict):
            function = fragment  # some servers flatten name/arguments into the fragment
        name = function.get("name")
        if name and not self.name:
            self.name = str(name)
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            self.parts.append(arguments)
        elif arguments is not None:
            self.parts.append(json.dumps(arguments, ensure_ascii=False))

    def to_call(self) -> ToolCall:
        arguments = "".join(self.parts).strip() or "{}"
        return ToolCall(id=self.id or new_call_id(), name=self.name, arguments=arguments)


class StreamAssembler:
    """Feed parsed ``chat.completion.chunk`` dicts; collect deltas; ``result()`` at the end."""

    def __init__(self) -> None:
        self._content: list[str] = []
        self._reasoning: list[str] = []
        self._calls: dict[Any, _PendingCall] = {}
        self._last_key: Any = None
        self._by_index: dict[int, Any] = {}
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self.cache_n = 0  # llama.cpp's reused prompt tokens (``timings.cache_n``)
        self.model = ""
        self.has_output = False
        """True once any text, reasoning or tool-call fragment arrived (a retry would repeat it)."""

    def feed(self, chunk: dict[str, Any]) -> list[TextDelta | ReasoningDelta]:
        """Take one chunk; return the text/reasoning deltas it carried, in order."""
        if not self.model and isinstance(chunk.get("model"), str):
            self.model = chunk["model"]
        usage = Usage.from_openai(chunk.get("usage"))
        if usage is not None:
            self.usage = usage
        self.cache_n = cached_from_timings(chunk) or self.cache_n
        out: list[TextDelta | ReasoningDelta] = []
        choices = chunk.get("choices") or []
        for choice in choices if isinstance(choices, list) else []:
            if isinstance(choice, dict) and choice.get("index") in (None, 0):
                self._feed_choice(choice, out)
        return out

    def _feed_choice(self, choice: dict[str, Any], out: list[TextDelta | ReasoningDelta]) -> None:
        delta = choice.get("delta") or choice.get("message") or {}
        if isinstance(delta, dict):
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")
            if isinstance(reasoning, str) and reasoning:
                self._reasoning.append(reasoning)
                out.append(ReasoningDelta(reasoning))
                self.has_output = True
            content = delta.get("content")
            if isinstance(content, str) and content:
                self._content.append(content)
                out.append(TextDelta(content))
                self.has_output = True
            fragments = delta.get("tool_calls")
            if isinstance(fragments, list):
                self._feed_tool_calls(fragments)
            elif isinstance(delta.get("function_call"), dict):  # legacy "functions" API
                self._feed_tool_calls([{"index": 0, "function": delta["function_call"]}])
        usage = Usage.from_openai(choice.get("usage"))  # Moonshot puts it on the choice
        if usage is not None:
            self.usage = usage
        if choice.get("finish_reason"):
            self.finish_reason = str(choice["finish_reason"])

    def _feed_tool_calls(self, fragments: list[Any]) -> None:
        for fragment in fragments:
            if not isinstance(fragment, dict):
                continue
            key = self._key_for(fragment)
            self._calls.setdefault(key, _PendingCall()).add(fragment)
            self._last_key = key
            self.has_output = True

    def _key_for(self, fragment: dict[str, Any]) -> Any:
        """Which call a fragment belongs to: its ``index`` (unless a different id reuses it);
        else its ``id``; else, when it names a function, a new call; else a continuation of the
        previous call."""
        index = fragment.get("index")
        call_id = fragment.get("id")
        if isinstance(index, int):
            key = self._by_index.get(index, index)
            pending = self._calls.get(key)
            if pending is not None and call_id and pending.id and call_id != pending.id:
                key = ("id", call_id)  # a provider that numbers every parallel call 0
            self._by_index[index] = key
            return key
        if call_id:
            for key, pending in self._calls.items():
                if pending.id == call_id:
                    return key
            return ("id", call_id)
        function = fragment.get("function")
        named = isinstance(function, dict) and function.get("name")
        if named or self._last_key is None:
            return ("pos", len(self._calls))
        return self._last_key

    @property
    def finished(self) -> bool:
        return self.finish_reason is not None

    @property
    def content(self) -> str:
        return "".join(self._content)

    def result(self, *, default_finish: str | None = None) -> Completion:
        """The assembled completion. ``default_finish`` fills a missing finish_reason (a stream
        that ended with ``[DONE]`` but no finish chunk)."""
        calls = tuple(pending.to_call() for pending in self._calls.values() if pending.name)
        finish = self.finish_reason
        if finish is None and default_finish is not None and self.has_output:
            finish = "tool_calls" if calls else default_finish
        return Completion(
            content=self.content,
            reasoning="".join(self._reasoning),
            tool_calls=calls,
            finish_reason=finish,
            usage=with_cached(self.usage, self.cache_n),
            model=self.model,
        )


def completion_from_response(data: dict[str, Any]) -> Completion:
    """A non-streamed ``chat.completion`` body as a :class:`Completion`."""
    choices = data.get("choices") or []
    choice = choices[0] if isinstance(choices, list) and choices else {}
    message = (choice.get("message") or {}) if isinstance(choice, dict) else {}
    content = message.get("content")
    if isinstance(content, list):  # some servers answer with content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    reasoning = message.get("reasoning_content") or message.get("reasoning") or ""
    calls = []
    for raw in message.get("tool_calls") or []:
        if isinstance(raw, dict):
            call = ToolCall.from_openai(raw)
            if call.name and not call.id:
                call = ToolCall(new_call_id(), call.name, call.arguments)
            if call.name:
                calls.append(call)
    finish = choice.get("finish_reason") if isinstance(choice, dict) else None
    model = data.get("model")
    return Completion(
        content=content if isinstance(content, str) else "",
        reasoning=reasoning if isinstance(reasoning, str) else "",
        tool_calls=tuple(calls),
        finish_reason=str(finish) if finish else None,
        usage=with_cached(Usage.from_openai(data.get("usage")), cached_from_timings(data)),
        model=model if isinstance(model, str) else "",
    )


def cached_from_timings(data: dict[str, Any]) -> int:
    """Reused prompt tokens as llama.cpp reports them beside the usage (0 when absent)."""
    timings = data.get("timings")
    cache_n = timings.get("cache_n") if isinstance(timings, dict) else None
    return cache_n if isinstance(cache_n, int) and cache_n > 0 else 0


def with_cached(usage: Usage | None, cache_n: int) -> Usage | None:
    """``usage`` with ``cache_n`` as its cached tokens when the usage itself named none."""
    if usage is None or usage.cached_tokens or not cache_n:
        return usage
    return dataclasses.replace(usage, cached_tokens=min(cache_n, usage.prompt_tokens or cache_n))


def completion_events(completion: Completion) -> list[ReasoningDelta | TextDelta | Completion]:
    """A whole completion as the events a stream of it would have produced."""
    events: list[ReasoningDelta | TextDelta | Completion] = []
    if completion.reasoning:
        events.append(ReasoningDelta(completion.reasoning))
    if completion.content:
        events.append(TextDelta(completion.content))
    events.append(completion)
    return events


# Chat-template control tokens that small or base models sometimes print as text.
_TEMPLATE_TOKENS = re.compile(
    r"<\|im_start\|>(?:(?:system|user|assistant|tool)\n?)?"
    r"|<\|start_header_id\|>\w*<\|end_header_id\|>\n*"
    r"|<start_of_turn>(?:(?:user|model)\n?)?"
    r"|<\|(?:im_end|eot_id|end_of_text|endoftext|end|eom_id|begin_of_text)\|>"
    r"|<end_of_turn>|<bos>|<eos>|</s>"
)
_TOKEN_STARTS = ("<|", "<start_of_turn", "<end_of_turn", "</s")


def clean_template_tokens(text: str) -> str:
    """Remove chat-template tokens (``<|im_end|>``, ``<|eot_id|>``, ``<end_of_turn>`` ...) and a
    token cut off at the very end (``...<|im_``), then trim surrounding whitespace.

    Meant for a final answer; deltas are never altered while streaming.
    """
    cleaned = _TEMPLATE_TOKENS.sub("", text)
    cut = cleaned.rfind("<")
    if cut >= 0 and len(cleaned) - cut >= 2 and ">" not in cleaned[cut:]:
        tail = cleaned[cut:]
        if any(start.startswith(tail) or tail.startswith(start) for start in _TOKEN_STARTS):
            cleaned = cleaned[:cut]
    return cleaned.strip()
