"""A finished turn as the store holds it, read back for judging: what the user asked, which tools
ran in which order and how each went, how the turn ended and what it cost."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..store import Store

__all__ = ["ToolRun", "TurnFacts", "turn_facts", "turn_start"]

MAX_TURN_MESSAGES = 400  # a runaway turn is judged on its first messages
ERROR_CHARS = 300


@dataclass(frozen=True)
class ToolRun:
    name: str
    status: str  # ok, failed, stopped
    error: str = ""


@dataclass(frozen=True)
class TurnFacts:
    topic_id: str
    user_message_id: int
    user_text: str
    runs: tuple[ToolRun, ...]
    answer: str
    status: str | None  # the last assistant message's: completed, stopped, failed
    iterations: int
    finish_reason: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def tools(self) -> tuple[str, ...]:
        return tuple(run.name for run in self.runs)

    @property
    def errors(self) -> int:
        return sum(1 for run in self.runs if run.status != "ok")

    @property
    def error_lines(self) -> list[str]:
        return [f"{run.name}: {run.error or run.status}" for run in self.runs if run.status != "ok"]

    @property
    def stopped(self) -> bool:
        """Ended without a real answer: cancelled, failed, or stopped by the loop guard or the
        iteration limit."""
        return self.status in ("stopped", "failed") or self.finish_reason in (
            "loop",
            "max_iterations",
        )

    @property
    def recovered(self) -> bool:
        """Some calls failed, but the last one worked."""
        return bool(self.runs) and self.errors > 0 and self.runs[-1].status == "ok"


def turn_start(store: Store, topic_id: str, message_id: int | None = None) -> int | None:
    """The id of the user message opening the turn that holds ``message_id`` (the topic's last
    turn when None); None when there is none."""
    sql = "SELECT id FROM messages WHERE topic_id = ? AND role = 'user'"
    params: list[Any] = [topic_id]
    if message_id is not None:
        sql += " AND id <= ?"
        params.append(int(message_id))
    row = store.db.query_one(sql + " ORDER BY id DESC LIMIT 1", params)
    return int(row[0]) if row else None


def turn_facts(
    store: Store, topic_id: str, user_message_id: int, done: dict[str, Any] | None = None
) -> TurnFacts | None:
    """The facts of the turn opened by ``user_message_id``; ``done`` adds what only the end of
    the turn knew (iterations, finish_reason, tokens). None when there is no such turn."""
    messages = store.messages.of_topic(
        topic_id, limit=MAX_TURN_MESSAGES, after_id=int(user_message_id) - 1
    )
    if not messages or messages[0].id != user_message_id or messages[0].role != "user":
        return None
    turn = [messages[0]]
    for message in messages[1:]:
        if message.role == "user":
            break
        turn.append(message)
    runs = tuple(
        ToolRun(m.name or "?", m.status or "ok", (m.error or "")[:ERROR_CHARS])
        for m in turn
        if m.role == "tool"
    )
    answers = [m for m in turn if m.role == "assistant"]
    last = answers[-1] if answers else None
    done = done or {}
    return TurnFacts(
        topic_id=topic_id,
        user_message_id=int(user_message_id),
        user_text=turn[0].text,
        runs=runs,
        answer=last.text if last is not None and not last.tool_calls else "",
        status=last.status if last is not None else None,
        iterations=int(done.get("iterations") or len(answers)),
        finish_reason=done.get("finish_reason"),
        prompt_tokens=int(done.get("prompt_tokens") or 0),
        completion_tokens=int(done.get("completion_tokens") or sum(m.tokens for m in answers)),
    )
