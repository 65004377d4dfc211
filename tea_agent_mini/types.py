"""Typed records shared by every layer: messages, tool calls, events; and the small Protocols
of the seams between the parts (the chat model, and what a turn needs of tools and store).

Dicts appear only at the JSON boundary (``to_openai`` / ``from_openai``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol


@dataclass(frozen=True)
class ToolCall:
    """One tool call requested by the model. ``arguments`` is the raw JSON text it sent."""

    id: str
    name: str
    arguments: str = "{}"

    def to_openai(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }

    @classmethod
    def from_openai(cls, data: dict[str, Any]) -> ToolCall:
        function = data.get("function") or {}
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments if arguments is not None else {})
        return cls(
            id=str(data.get("id") or ""), name=function.get("name") or "", arguments=arguments
        )


@dataclass
class Message:
    """One chat message as stored and as sent to the model.

    ``content`` is text, or a list of OpenAI content parts for images. ``reasoning`` holds the
    model's thinking (reasoning_content); it is stored but not sent back unless asked.

    ``status``, ``error`` and ``duration`` record outcomes for the front ends, never sent to the
    model: a turn's last assistant message says how the turn ended (``completed``, ``stopped``
    or ``failed``, with the error and whatever part of the answer had arrived), a tool message
    how its call went (``ok``, ``failed`` or ``stopped``) and how long it ran, in seconds.
    """

    role: str
    content: str | list[dict[str, Any]] | None = None
    reasoning: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    id: int | None = None
    topic_id: str | None = None
    tokens: int = 0
    created_at: float = 0.0
    status: str | None = None
    error: str | None = None
    duration: float | None = None

    @property
    def text(self) -> str:
        """The textual content, with image parts left out."""
        if self.content is None:
            return ""
        if isinstance(self.content, str):
            return self.content
        return "".join(p.get("text", "") for p in self.content if p.get("type") == "text")

    def to_openai(self, *, include_reasoning: bool = False) -> dict[str, Any]:
        data: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            data["tool_calls"] = [c.to_openai() for c in self.tool_calls]
        if self.tool_call_id is not None:
            data["tool_call_id"] = self.tool_call_id
        if self.role == "tool" and self.name:
            data["name"] = self.name
        if include_reasoning and self.reasoning:
            data["reasoning_content"] = self.reasoning
        if self.role == "assistant" and self.content is None and not self.tool_calls:
            data["content"] = ""
        return data


@dataclass(frozen=True)
class Usage:
    """Token counts reported by the provider for one or more calls. Also an Event."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cached_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.total_tokens + other.total_tokens,
            self.cached_tokens + other.cached_tokens,
        )

    @classmethod
    def from_openai(cls, data: dict[str, Any] | None) -> Usage | None:
        if not isinstance(data, dict):
            return None
        details = data.get("prompt_tokens_details") or {}
        prompt = int(data.get("prompt_tokens") or 0)
        completion = int(data.get("completion_tokens") or 0)
        return cls(
            prompt_tokens=prompt,
            completion_tokens=completion,
            total_tokens=int(data.get("total_tokens") or prompt + completion),
            cached_tokens=int(details.get("cached_tokens") or 0)
            if isinstance(details, dict)
            else 0,
        )


@dataclass(frozen=True)
class Completion:
    """The assembled result of one model call (streamed or not)."""

    content: str = ""
    reasoning: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None
    usage: Usage | None = None
    model: str = ""


@dataclass(frozen=True)
class CallOptions:
    """What a client asked of every model call of one turn: sampling and the output format.

    ``max_tokens`` caps the reply (the turn still keeps it within the context window);
    ``response_format`` is the chat-completions object, sent as it is.
    """

    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    stop: tuple[str, ...] = ()
    seed: int | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    response_format: dict[str, Any] | None = None

    def params(self) -> dict[str, Any]:
        """The request fields to send (``max_tokens`` aside: the turn merges it)."""
        fields = {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "seed": self.seed,
            "presence_penalty": self.presence_penalty,
            "frequency_penalty": self.frequency_penalty,
            "response_format": self.response_format,
            "stop": list(self.stop) or None,
        }
        return {key: value for key, value in fields.items() if value is not None}

    def reply_tokens(self, room: int | None) -> int | None:
        """The ``max_tokens`` of a call that has ``room`` for its reply (None: unlimited)."""
        if self.max_tokens is None:
            return room
        return self.max_tokens if room is None else min(room, self.max_tokens)


# ---- events -------------------------------------------------------------------------------


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ReasoningDelta:
    text: str


@dataclass(frozen=True)
class ToolCallStart:
    call_id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class ToolResult:
    """What a tool call produced. ``ok=False`` results carry ``error`` for the model to read."""

    call_id: str
    name: str
    ok: bool
    output: str = ""
    error: str | None = None
    duration: float = 0.0
    truncated: bool = False

    @property
    def content_for_model(self) -> str:
        return self.output if self.ok else f"Error: {self.error or 'tool failed'}"


@dataclass(frozen=True)
class Notice:
    """Something the user should see that is not part of the answer (retry, truncation, loop)."""

    message: str
    kind: str = "info"


@dataclass(frozen=True)
class Error:
    """The turn failed. ``kind``: interrupted, upstream, rate_limited, context, cancelled."""

    message: str
    kind: str = "error"


@dataclass(frozen=True)
class Done:
    """The turn finished; ``text`` is the final answer."""

    text: str
    usage: Usage = field(default_factory=Usage)
    topic_id: str | None = None
    iterations: int = 0
    finish_reason: str | None = None
    context_tokens: int = 0
    context_limit: int = 0


@dataclass(frozen=True)
class ChildEvent:
    """An event of a subagent's turn, relayed into its parent's stream while the tool call that
    started it (``call_id``) runs. ``event`` is any of the events below except ChildEvent."""

    call_id: str
    agent: str
    topic_id: str
    event: Any


Event = (
    TextDelta
    | ReasoningDelta
    | ToolCallStart
    | ToolResult
    | Usage
    | Notice
    | Error
    | Done
    | ChildEvent
)
"""Everything a turn can emit. Front ends (CLI, SSE, OpenAI encoder) are adapters over these."""
EventSink = Callable[[ChildEvent], None]
"""Where tools send the events of the subagents they run (the parent turn relays them)."""

LLMEvent = TextDelta | ReasoningDelta | Notice | Completion
"""What ``ChatModel.stream`` yields: deltas and notices, then exactly one Completion last."""


# ---- protocols ----------------------------------------------------------------------------


class ChatModel(Protocol):
    """An OpenAI-compatible chat endpoint."""

    model: str

    def stream(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        **params: Any,
    ) -> AsyncIterator[LLMEvent]: ...

    async def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        **params: Any,
    ) -> Completion: ...


# What a turn (agent/session.py) needs of the tools and of the store. The implementations
# (toolkit/, store/) do not inherit from these; they only have the members.


class InstalledTool(Protocol):
    """One installed tool as a turn sees it (``toolkit.registry.ToolSpec``)."""

    def mutates_with(self, arguments: dict[str, Any]) -> bool: ...


class ToolCatalog(Protocol):
    """The installed tools as a turn reads them (``toolkit.registry.Toolkit``)."""

    def names(self) -> list[str]: ...

    def get(self, name: str) -> InstalledTool | None: ...

    def openai_tools(self) -> list[dict[str, Any]]: ...


class ToolRunner(Protocol):
    """What a turn needs of its tool executor (``toolkit.executor.ToolExecutor``)."""

    @property
    def toolkit(self) -> ToolCatalog: ...

    def callable_names(self) -> set[str]: ...

    @property
    def workspace(self) -> Path: ...

    def begin_turn(self) -> None:
        """A turn starts: per-turn tool state (the subagents' budget) starts afresh."""
        ...

    async def run_many(
        self, calls: Sequence[ToolCall], on_event: EventSink | None = None
    ) -> list[ToolResult]: ...


class MessageLog(Protocol):
    """A topic's messages as a turn reads and adds them (``store.messages``)."""

    def add(self, topic_id: str, message: Message) -> Message: ...

    def recent_turns(self, topic_id: str, turns: int) -> list[Message]: ...


class UsageLedger(Protocol):
    """Where a turn adds up its topic's token usage (``store.topics``)."""

    def add_usage(self, topic_id: str, prompt: int, completion: int) -> object: ...


class TurnStore(Protocol):
    """What a turn keeps in the store (``store.Store``): its messages and its usage."""

    @property
    def messages(self) -> MessageLog: ...

    @property
    def topics(self) -> UsageLedger: ...


ApprovalCallback = Callable[[str, str], bool]
"""Asked before a mutating tool runs under ``approval: ask``: (tool name, arguments) -> allowed."""

AskUserCallback = Callable[[str, list[str] | None, float, str | None], str | None]
"""Asks the user a question: (question, choices, timeout seconds, default or None) -> answer, or
None when nobody answered (the tool then uses the default, which the front end may show)."""

NoticeCallback = Callable[[str, str, str], None]
"""Shows the user a notice now: (title, message, urgency); set by a front end that can."""
