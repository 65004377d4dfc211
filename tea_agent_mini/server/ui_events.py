"""The UI event encoder: logged turn events -> typed SSE events for the web UI.

Types: ``start``, ``queued``, ``token``, ``reasoning``, ``tool_start``, ``tool_result``,
``notice``, ``question``, ``question_closed``, ``error``, ``done``, and ``child``: an event of a
subagent run by the tool call ``call_id``, the subagent's own event (encoded as above) under
``event``. Every event carries the log id as its SSE ``id`` (so ``Last-Event-ID`` resumes) and
``turn``, the id of the queued message it belongs to.
"""

from __future__ import annotations

import time
from typing import Any

from ..types import (
    ChildEvent,
    Done,
    Error,
    Notice,
    ReasoningDelta,
    TextDelta,
    ToolCallStart,
    ToolResult,
    Usage,
)
from .interactions import Question, QuestionClosed, UserNotice
from .sse import sse_comment, sse_event
from .turn_records import Entry, Queued, TurnStarted

PREVIEW_CHARS = 2000
CHILD_PREVIEW_CHARS = 400  # a subagent's tool output in full is in its own topic
UI_EVENT_TYPES = (
    "start",
    "queued",
    "token",
    "reasoning",
    "tool_start",
    "tool_result",
    "notice",
    "question",
    "question_closed",
    "error",
    "done",
    "child",
)


def usage_dict(usage: Usage) -> dict[str, int]:
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.total_tokens,
        "cached_tokens": usage.cached_tokens,
    }


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n… [{len(text) - limit} characters not shown] …\n{text[-half:]}"


def ui_event(event: Any, limit: int = PREVIEW_CHARS) -> tuple[str, dict[str, Any]] | None:
    """(type, data) for one turn event; None for events the UI does not show. ``limit``: the
    characters of a tool's output previewed."""
    if isinstance(event, ChildEvent):
        return child_event(event)
    if isinstance(event, TextDelta):
        return "token", {"text": event.text}
    if isinstance(event, ReasoningDelta):
        return "reasoning", {"text": event.text}
    if isinstance(event, ToolCallStart):
        return "tool_start", {
            "call_id": event.call_id,
            "name": event.name,
            "arguments": event.arguments,
        }
    if isinstance(event, ToolResult):
        return "tool_result", {
            "call_id": event.call_id,
            "name": event.name,
            "ok": event.ok,
            "preview": preview(event.output if event.ok else "", limit),
            "error": event.error,
            "duration": round(event.duration, 3),
            "truncated": event.truncated,
        }
    if isinstance(event, Notice):
        return "notice", {"message": event.message, "kind": event.kind}
    if isinstance(event, (Question, QuestionClosed, UserNotice)):
        return interaction_event(event)
    if isinstance(event, Error):
        return "error", {"message": event.message, "kind": event.kind}
    if isinstance(event, Done):
        return "done", {
            "text": event.text,
            "usage": usage_dict(event.usage),
            "iterations": event.iterations,
            "finish_reason": event.finish_reason,
            "context": {"tokens": event.context_tokens, "limit": event.context_limit},
        }
    if isinstance(event, TurnStarted):
        return "start", {"text": event.text, "attachments": event.attachments}
    if isinstance(event, Queued):
        return "queued", {"position": event.position, "text": event.text}
    return None


def child_event(event: ChildEvent) -> tuple[str, dict[str, Any]] | None:
    """A subagent's event, labelled with the call that runs it; its usage arrives with its
    ``done``."""
    nested = isinstance(event.event, ChildEvent)  # children start none (depth 1)
    inner = None if nested else ui_event(event.event, CHILD_PREVIEW_CHARS)
    if inner is None:
        return None
    kind, data = inner
    return "child", {
        "call_id": event.call_id,
        "agent": event.agent,
        "topic_id": event.topic_id,
        "event": {"type": kind, **data},
    }


def interaction_event(event: Question | QuestionClosed | UserNotice) -> tuple[str, dict[str, Any]]:
    if isinstance(event, Question):
        data = {
            "id": event.id,
            "kind": event.kind,
            "question": event.question,
            "choices": list(event.choices),
            "default": event.default,
            "timeout": event.timeout,
            "deadline": event.deadline,
            # counted when sent, so a replayed question shows the time it has left
            "expires_in": round(max(0.0, event.deadline - time.time()), 1),
        }
        if event.kind == "approval":
            data.update(name=event.tool, arguments=event.arguments)
        return "question", data
    if isinstance(event, QuestionClosed):
        return "question_closed", {"id": event.id, "status": event.status, "answer": event.answer}
    return "notice", {
        "message": event.message,
        "kind": "notify",
        "title": event.title,
        "urgency": event.urgency,
        "time": event.time,
    }


def encode_entry(entry: Entry | None) -> bytes | None:
    """One SSE frame for a log entry (a comment for a heartbeat ``None``)."""
    if entry is None:
        return sse_comment("ping")
    encoded = ui_event(entry.event)
    if encoded is None:
        return None
    kind, data = encoded
    return sse_event({"type": kind, "turn": entry.turn, **data}, event=kind, id=entry.id)
