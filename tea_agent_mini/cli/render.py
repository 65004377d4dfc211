"""Printing turn events to a terminal: the answer on stdout, everything else on stderr."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, TextIO

from ..types import (
    ChildEvent,
    Done,
    Error,
    Event,
    Notice,
    ReasoningDelta,
    TextDelta,
    ToolCallStart,
    ToolResult,
)
from .markdown import MarkdownStream
from .status import StatusLine

PREVIEW_CHARS = 300


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def styled(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal that takes ANSI escapes (and colour is welcome)."""
    isatty = getattr(stream, "isatty", None)
    if isatty is None or not isatty():
        return False
    return os.environ.get("TERM") != "dumb" and not os.environ.get("NO_COLOR")


@dataclass
class TerminalPrinter:
    """Streams answer text to ``out`` and tool activity, reasoning and notices to ``err``.

    ``markdown`` renders the answer for a terminal, ``status`` shows what is being waited for;
    :meth:`for_terminal` turns them on where the streams are terminals."""

    out: TextIO = field(default_factory=lambda: sys.stdout)
    err: TextIO = field(default_factory=lambda: sys.stderr)
    show_reasoning: bool = False
    markdown: MarkdownStream | None = None
    status: StatusLine | None = None
    _at_line_start: bool = True
    _in_reasoning: bool = False

    @classmethod
    def for_terminal(
        cls, out: TextIO | None = None, err: TextIO | None = None, *, show_reasoning: bool = False
    ) -> TerminalPrinter:
        out = sys.stdout if out is None else out
        err = sys.stderr if err is None else err
        return cls(
            out,
            err,
            show_reasoning,
            markdown=MarkdownStream() if styled(out) else None,
            status=StatusLine(err) if styled(err) else None,
        )

    async def follow(self, events: AsyncIterator[Event]) -> AsyncIterator[Event]:
        """Print ``events`` as they pass through, with the status line moving meanwhile."""
        status = self.status
        ticker = None
        if status is not None:
            status.show("thinking")
            ticker = asyncio.create_task(status.run())
        try:
            async for event in events:
                self(event)
                yield event
        finally:
            if ticker is not None:
                ticker.cancel()
            if status is not None:
                status.clear()

    def __call__(self, event: Event) -> None:
        handler = getattr(self, f"_on_{type(event).__name__}", None)
        if handler is not None:
            handler(event)

    def _write(self, text: str) -> None:
        if self.status is not None:
            self.status.clear()
        if self.markdown is not None:
            text = self.markdown.feed(text)
        self._write_out(text)

    def _write_out(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()
        if text:
            self._at_line_start = text.endswith("\n")

    def _note(self, text: str) -> None:
        if self.status is not None:
            self.status.erase()
        if self.markdown is not None:
            self._write_out(self.markdown.close())
        if not self._at_line_start:
            self._write_out("\n")
        self.err.write(text + "\n")
        self.err.flush()

    def _show(self, label: str) -> None:
        if self.status is not None and self._at_line_start:
            self.status.show(label)

    def _on_TextDelta(self, event: TextDelta) -> None:
        if self._in_reasoning:
            self.err.write("\n")
            self._in_reasoning = False
        self._write(event.text)

    def _on_ReasoningDelta(self, event: ReasoningDelta) -> None:
        if self.show_reasoning:
            if self.status is not None:
                self.status.clear()
            if not self._in_reasoning:
                self.err.write("[thinking] ")
                self._in_reasoning = True
            self.err.write(event.text)
            self.err.flush()

    def _on_ToolCallStart(self, event: ToolCallStart) -> None:
        self._note(f"→ {event.name}({preview(event.arguments, 200)})")
        self._show(f"running {event.name}")

    def _on_ToolResult(self, event: ToolResult) -> None:
        status = "ok" if event.ok else "error"
        body = event.output if event.ok else (event.error or "")
        self._note(f"← {event.name} {status} ({event.duration:.2f}s): {preview(body)}")
        self._show("thinking")

    def _on_Notice(self, event: Notice) -> None:
        self._note(f"[{event.kind}] {event.message}")

    def _on_ChildEvent(self, relayed: ChildEvent) -> None:
        """A subagent's steps, indented under the call that started it; not its text."""
        event, who = relayed.event, f"  [{relayed.agent}]"
        if isinstance(event, ToolCallStart):
            self._note(f"{who} → {event.name}({preview(event.arguments, 120)})")
            self._show(f"{relayed.agent}: {event.name}")
        elif isinstance(event, ToolResult):
            status = "ok" if event.ok else f"error: {preview(event.error or '', 120)}"
            self._note(f"{who} ← {event.name} {status}")
        elif isinstance(event, Done):
            self._note(f"{who} done ({event.usage.total_tokens:,} tokens)")
        elif isinstance(event, Error):
            self._note(f"{who} failed: {event.message}")

    def _on_Error(self, event: Error) -> None:
        if self.status is not None:
            self.status.clear()
        label = "interrupted" if event.kind == "interrupted" else "error"
        self._note(f"{label}: {event.message}")

    def _on_Done(self, event: Done) -> None:
        if self.status is not None:
            self.status.clear()
        if self.markdown is not None:
            self._write_out(self.markdown.close())
        if not self._at_line_start:
            self._write_out("\n")


@dataclass
class TurnRecorder:
    """Collects a turn's events into the one JSON object ``run --json`` prints. A subagent's
    calls, answer and usage appear under the tool call that started it (``subagents``)."""

    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    done: Done | None = None
    error: Error | None = None
    topic_id: str | None = None
    children: dict[tuple[str, str], tuple[str, TurnRecorder]] = field(default_factory=dict)

    def __call__(self, event: Event) -> None:
        if isinstance(event, ChildEvent):
            key = (event.call_id, event.topic_id)
            if key not in self.children:
                self.children[key] = (event.agent, TurnRecorder(topic_id=event.topic_id))
            self.children[key][1](event.event)
        elif isinstance(event, ToolCallStart):
            self.tool_calls.append(
                {"id": event.call_id, "name": event.name, "arguments": event.arguments}
            )
        elif isinstance(event, ToolResult):
            for call in self.tool_calls:
                if call["id"] == event.call_id:
                    call.update(
                        ok=event.ok,
                        duration=round(event.duration, 3),
                        result=preview(event.content_for_model, 2000),
                    )
        elif isinstance(event, Notice):
            self.notices.append(event.message)
        elif isinstance(event, Done):
            self.done = event
        elif isinstance(event, Error):
            self.error = event

    def to_dict(self) -> dict[str, Any]:
        usage = self.done.usage if self.done else None
        for (call_id, _topic), (agent, child) in self.children.items():
            call = next((c for c in self.tool_calls if c["id"] == call_id), None)
            if call is not None:
                call.setdefault("subagents", []).append({"agent": agent, **child.to_dict()})
        self.children = {}
        return {
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

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)
