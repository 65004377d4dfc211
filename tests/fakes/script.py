"""What the scripted model says: one ``Reply`` per chat request, built from code or from JSON."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, fields
from typing import Any


@dataclass
class ToolCallSpec:
    """One tool call the scripted model makes.

    ``arguments`` given as a dict is sent as compact JSON; a string is sent verbatim, so a test
    can hand the client malformed JSON on purpose. ``id`` defaults to ``call_<n>``, counted per
    server.
    """

    name: str
    arguments: str | dict = field(default_factory=dict)
    id: str | None = None

    def arguments_text(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments, ensure_ascii=False, separators=(",", ":"))


@dataclass
class Reply:
    """One scripted answer to one ``/v1/chat/completions`` request."""

    text: str = ""
    reasoning: str = ""
    reasoning_field: str = "reasoning_content"
    tool_calls: list[ToolCallSpec] = field(default_factory=list)
    tool_calls_as_text: bool = False
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    status: int = 200
    error_message: str = "scripted failure"
    retry_after: float | None = None
    # Streaming: send this many data chunks (never the finish chunk), then drop the connection.
    # Non-streaming: drop the connection without sending any response.
    cut_after: int | None = None
    delay: float = 0.0
    chunk_chars: int = 4

    @property
    def native_tool_calls(self) -> list[ToolCallSpec]:
        """Calls sent in the ``tool_calls`` field (none when they are printed as text)."""
        return [] if self.tool_calls_as_text else list(self.tool_calls)

    def content(self) -> str:
        """The assistant text, with the tool calls appended when they are printed as text."""
        if not self.tool_calls_as_text or not self.tool_calls:
            return self.text
        # Hermes/Qwen style, the form local models print when the server does not parse calls.
        blocks = [
            f'<tool_call>\n{{"name": {json.dumps(call.name)}, '
            f'"arguments": {call.arguments_text()}}}\n</tool_call>'
            for call in self.tool_calls
        ]
        return "\n".join(([self.text] if self.text else []) + blocks)

    def resolved_finish_reason(self) -> str:
        if self.finish_reason is not None:
            return self.finish_reason
        return "tool_calls" if self.native_tool_calls else "stop"

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Reply:
        """Build a Reply from JSON; ``tool_calls`` holds ``{"name", "arguments"}`` dicts."""
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown Reply fields: {sorted(unknown)}")
        values = dict(data)
        values["tool_calls"] = [
            call if isinstance(call, ToolCallSpec) else ToolCallSpec(**call)
            for call in values.get("tool_calls") or []
        ]
        return cls(**values)


def last_user_text(request: dict) -> str:
    """Text of the last user message; content parts other than text are skipped, and so is the
    agent's context block before the user's words (see tea_agent_mini/context/block.py)."""
    messages = request.get("messages")
    if not isinstance(messages, list):
        return ""
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                return "".join(
                    without_context_block(part.get("text", ""))
                    for part in content
                    if isinstance(part, dict) and part.get("type") == "text"
                )
            return without_context_block(content) if isinstance(content, str) else ""
    return ""


_CONTEXT_BLOCK = re.compile(r"\A<context>\n.*?\n</context>(?:\n\n)?", re.S)


def without_context_block(text: str) -> str:
    return _CONTEXT_BLOCK.sub("", text, count=1)


def echo_reply(request: dict) -> Reply:
    """The built-in default: answer ``echo: <last user text>``."""
    return Reply(text=f"echo: {last_user_text(request)}")
