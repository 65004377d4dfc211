"""What the store keeps of how a turn went, beside its messages (``Message.status``).

A tool message records how its call went and how long it ran; a stopped or failed turn ends with
an assistant message holding the error and the part of the answer that had arrived. The front
ends replay them after a reload; the model never sees the status (``context/history.py`` leaves
out an outcome record that holds no text).
"""

from __future__ import annotations

from ..types import (
    Done,
    Error,
    Event,
    Message,
    Notice,
    ReasoningDelta,
    TextDelta,
    ToolCallStart,
    ToolResult,
)


class PartialAnswer:
    """What the running model call has said so far: the answer a stopped or failed turn got
    to. Text before a tool call is stored with the call, so a tool call starts it afresh, and
    so does a notice (a retry, a trim or a correction calls the model again)."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.ended = False

    def see(self, event: Event) -> None:
        if isinstance(event, TextDelta):
            self.text.append(event.text)
        elif isinstance(event, ReasoningDelta):
            self.reasoning.append(event.text)
        elif isinstance(event, (ToolCallStart, Notice)):
            self.text, self.reasoning = [], []
        self.ended = self.ended or isinstance(event, (Done, Error))

    def outcome(self, status: str, error: str) -> Message:
        """The assistant message that records the end of the turn (and marks it ended)."""
        self.ended = True
        return Message(
            role="assistant",
            content="".join(self.text) or None,
            reasoning="".join(self.reasoning) or None,
            status=status,
            error=error,
        )


def tool_message(result: ToolResult, status: str | None = None) -> Message:
    """The stored tool message of a result: the model's text plus its outcome and duration."""
    return Message(
        role="tool",
        content=result.content_for_model,
        tool_call_id=result.call_id,
        name=result.name,
        status=status or ("ok" if result.ok else "failed"),
        error=result.error,
        duration=round(result.duration, 3),
    )


def is_empty_outcome(message: Message) -> bool:
    """An assistant message that only records how a turn ended (nothing for the model)."""
    return (
        message.role == "assistant"
        and message.status in ("stopped", "failed")
        and not message.text
        and not message.tool_calls
    )
