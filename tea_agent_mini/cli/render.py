"""Printing turn events to a terminal: the answer on stdout, everything else on stderr."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from typing import Any, TextIO

from ..types import (
    Done,
    Error,
    Event,
    Notice,
    ReasoningDelta,
    TextDelta,
    ToolCallStart,
    ToolResult,
)

PREVIEW_CHARS = 300


def _preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass
class TerminalPrinter:
    """Streams answer text to ``out`` and tool activity, reasoning and notices to ``err``."""

    out: TextIO = field(default_factory=lambda: sys.stdout)
    err: TextIO = field(default_factory=lambda: sys.stderr)
    show_reasoning: bool = False
    _at_line_start: bool = True
    _in_reasoning: bool = False

    def __call__(self, event: Event) -> None:
        handler = getattr(self, f"_on_{type(event).__name__}", None)
        if handler is not None:
            handler(event)

    def _write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()
        if text:
            self._at_line_start = text.endswith("\n")

    def _note(self, text: str) -> None:
        if not self._at_line_start:
            self._write("\n")
        self.err.write(text + "\n")
        self.err.flush()

    def _on_TextDelta(self, event: TextDelta) -> None:
        if self._in_reasoning:
            self.err.write("\n")
            self._in_reasoning = False
        self._write(event.text)

    def _on_ReasoningDelta(self, event: ReasoningDelta) -> None:
        if self.show_reasoning:
            if not self._in_reasoning:
                self.err.write("[thinking] ")
                self._in_reasoning = True
            self.err.write(event.text)
            self.err.flush()

    def _on_ToolCallStart(self, event: ToolCallStart) -> None:
        self._note(f"→ {event.name}({_preview(event.arguments, 200)})")

    def _on_ToolResult(self, event: ToolResult) -> None:
        status = "ok" if event.ok else "error"
        body = event.output if event.ok else (event.error or "")
        self._note(f"← {event.name} {status} ({event.duration:.2f}s): {_preview(body)}")

    def _on_Notice(self, event: Notice) -> None:
        self._note(f"[{event.kind}] {event.message}")

    def _on_Error(self, event: Error) -> None:
        label = "interrupted" if event.kind == "interrupted" else "error"
        self._note(f"{label}: {event.message}")

    def _on_Done(self, event: Done) -> None:
        if not self._at_line_start:
            self._write("\n")


@dataclass
class TurnRecorder:
    """Collects a turn's events into the one JSON object ``run --json`` prints."""

    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    done: Done | None = None
    error: Error | None = None
    topic_id: str | None = None

    def __call__(self, event: Event) -> None:
        if isinstance(event, ToolCallStart):
            self.tool_calls.append(
                {"id": event.call_id, "name": event.name, "arguments": event.arguments}
            )
        elif isinstance(event, ToolResult):
            for call in self.tool_calls:
                if call["id"] == event.call_id:
                    call.update(
                        ok=event.ok,
                        duration=round(event.duration, 3),
                        result=_preview(event.content_for_model, 2000),
                    )
        elif isinstance(event, Notice):
            self.notices.append(event.message)
        elif isinstance(event, Done):
            self.done = event
        elif isinstance(event, Error):
            self.error = event

    def to_json(self) -> str:
        usage = self.done.usage if self.done else None
        data = {
            "ok": self.done is not None and self.error is None,
            "answer": self.done.text if self.done else None,
            "error": {"kind": self.error.kind, "message": self.error.message}
            if self.error
            else None,
            "tool_calls": self.tool_calls,
            "notices": self.notices,
            "usage": {
                "prompt_tokens": usage.prompt_tokens,
                "completion_tokens": usage.completion_tokens,
                "total_tokens": usage.total_tokens,
                "cached_tokens": usage.cached_tokens,
            }
            if usage
            else None,
            "topic_id": self.topic_id,
        }
        return json.dumps(data, ensure_ascii=False)
