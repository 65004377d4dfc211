"""Turn events and queued messages as JSON, for the event log and the queue several instances
share (``shared_turns.py``).

An event is a frozen dataclass; it is stored as ``{"~": class name, field: value ...}``, nested
events and usage the same way, and read back into the same class (lists become tuples).
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from ..types import (
    CallOptions,
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
from .turn_records import Queued, QueueItem, TurnStarted

__all__ = ["decode_event", "decode_item", "encode_event", "encode_item", "kind_prefix"]

KINDS: dict[str, type] = {
    kind.__name__: kind
    for kind in (
        ChildEvent,
        Done,
        Error,
        Notice,
        ReasoningDelta,
        TextDelta,
        ToolCallStart,
        ToolResult,
        Usage,
        Question,
        QuestionClosed,
        UserNotice,
        Queued,
        TurnStarted,
    )
}


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return {"~": type(value).__name__, **out}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def _typed(value: Any) -> Any:
    if isinstance(value, dict):
        kind = KINDS.get(value.get("~", "")) if "~" in value else None
        fields = {k: _typed(v) for k, v in value.items() if k != "~"}
        if kind is None:
            return fields
        return kind(**fields)
    if isinstance(value, list):
        return tuple(_typed(v) for v in value)
    return value


def kind_prefix(kind: type) -> str:
    """How the JSON of every event of ``kind`` starts (and of kinds whose name extends its):
    the class name comes first, so the store can find them with ``LIKE``."""
    return '{"~":' + json.dumps(kind.__name__)[:-1]


def encode_event(event: Any) -> str:
    return json.dumps(_plain(event), ensure_ascii=False, separators=(",", ":"))


def decode_event(text: str) -> Any:
    """The event, or a Notice for one this version does not know (never fails the stream)."""
    try:
        return _typed(json.loads(text))
    except (ValueError, TypeError) as exc:
        return Notice(f"an event could not be read: {exc}", kind="internal")


def encode_item(item: QueueItem) -> str:
    return json.dumps(
        {
            "id": item.id,
            "content": item.content,
            "profile": item.profile,
            "interactive": item.interactive,
            "options": dataclasses.asdict(item.options),
            "keep": item.keep,
            "created": item.created,
        }
    )


def decode_item(raw: str) -> QueueItem:
    data = json.loads(raw)
    options = dict(data.get("options") or {})
    options["stop"] = tuple(options.get("stop") or ())
    return QueueItem(
        data["id"],
        data["content"],
        data.get("profile"),
        bool(data.get("interactive", True)),
        options=CallOptions(**options),
        keep=bool(data.get("keep", True)),
        created=float(data.get("created", 0.0)),
    )
