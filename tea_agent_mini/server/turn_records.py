"""What the turn managers (``turns.py``, ``shared_turns.py``) take, log and report."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import TeaAgentError
from ..types import CallOptions, Done, Error

OpenSession = Callable[..., Any]
"""``(topic_id, profile, *, approve, ask_user, on_notice, follow_up) -> Session``; called in a
worker thread (it touches the store). The callbacks let the turn's tools ask the user (approvals
under ``approval: ask`` included) and show notices; ``follow_up=False`` queues no background jobs
after the turn (its session is about to be discarded)."""

Discard = Callable[[str], Any]
"""``(topic_id)``: delete a session that was not to be kept; called in a worker thread."""


class ShuttingDown(TeaAgentError, RuntimeError):
    """No new turns: the server is stopping."""


@dataclass(frozen=True)
class TurnStarted:
    """A queued message began to run (logged before any of its events)."""

    item_id: str
    text: str
    attachments: int = 0


@dataclass(frozen=True)
class Queued:
    """A message had to wait: ``position`` 1 runs next."""

    item_id: str
    position: int
    text: str


@dataclass(frozen=True)
class Entry:
    """One logged event: ``turn`` is the id of the queue item whose turn produced it."""

    id: int
    turn: str
    event: Any


@dataclass(frozen=True)
class SessionState:
    busy: bool  # a turn runs or waits
    running: str | None
    queued: int


@dataclass
class QueueItem:
    id: str
    content: str | list[dict[str, Any]]
    profile: str | None = None
    interactive: bool = True  # False: whoever waits for the turn cannot answer its questions
    options: CallOptions = CallOptions()
    keep: bool = True  # False: the session is deleted when the turn ends (``store: false``)
    created: float = field(default_factory=time.time)

    @property
    def text(self) -> str:
        if isinstance(self.content, str):
            return self.content
        return "".join(p.get("text", "") for p in self.content if p.get("type") == "text")

    @property
    def attachments(self) -> int:
        return (
            0
            if isinstance(self.content, str)
            else sum(p.get("type") != "text" for p in self.content)
        )


@dataclass(frozen=True)
class Submission:
    item: QueueItem
    position: int  # 0: started at once; n: n-th in the queue
    since: int  # the last log id before this submission (follow from here)


def is_final(entry: Entry) -> bool:
    return isinstance(entry.event, (Done, Error))
