"""From stored messages to L2 pairs: split a history into user turns and condense each one.

A pair keeps the user's text, the final answer, an excerpt of the thinking behind it, the files
its tool calls touched and the chain of tools it ran. Recording catches up: it looks at every
finished turn after the newest one already recorded, so a turn whose background job never ran
(a crash, a full queue) is recorded with the next one.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeGuard

from ..terms import keyword_terms
from ..types import Message
from .records import ContextRecords, ToolUse, TurnPair

if TYPE_CHECKING:
    from ..store import Store

__all__ = ["files_touched", "pair_from_turn", "record_pairs", "split_turns"]

USER_CHARS = 4000
ANSWER_CHARS = 6000
THINKING_CHARS = 600
MAX_FILES = 20
# Recording reads only this many recent messages: enough for the turns since the last record,
# without re-reading a long topic after every turn.
RECENT_MESSAGES = 600
_PATH_KEYS: tuple[str, ...] = ("path", "paths", "file", "files", "filename", "file_path")
_PATH_KEYS += ("filepath", "target", "source", "destination", "src", "dst", "directory", "dir")


def split_turns(messages: Sequence[Message]) -> list[list[Message]]:
    """The messages grouped by user turn; anything before the first user message is left out."""
    turns: list[list[Message]] = []
    for message in messages:
        if message.role == "user":
            turns.append([message])
        elif turns:
            turns[-1].append(message)
    return turns


def final_answer(turn: Sequence[Message]) -> Message | None:
    """The turn's closing assistant message (text, no tool calls), if the turn finished."""
    last = turn[-1] if turn else None
    if last is None or last.role != "assistant" or last.tool_calls:
        return None
    return last


def pair_from_turn(turn: Sequence[Message]) -> TurnPair | None:
    """The L2 pair of a finished turn; None while the turn has no final answer."""
    answer = final_answer(turn)
    user = turn[0] if turn else None
    if answer is None or user is None or user.role != "user" or user.id is None:
        return None
    thinking = answer.reasoning or next(
        (m.reasoning for m in reversed(turn) if m.role == "assistant" and m.reasoning), ""
    )
    files = files_touched(turn)
    user_text, answer_text = clip(user.text, USER_CHARS), clip(answer.text, ANSWER_CHARS)
    return TurnPair(
        user_message_id=user.id,
        answer_message_id=answer.id,
        user_text=user_text,
        answer_text=answer_text,
        thinking=clip(thinking or "", THINKING_CHARS),
        files=files,
        tools=tool_uses(turn),
        terms=frozenset(keyword_terms(f"{user_text}\n{answer_text}\n{' '.join(files)}")),
        created_at=answer.created_at,
    )


def tool_uses(turn: Sequence[Message]) -> tuple[ToolUse, ...]:
    """Every tool call of the turn in order, marked failed when its result was an error."""
    failed = {
        m.tool_call_id
        for m in turn
        if m.role == "tool" and isinstance(m.content, str) and m.content.startswith("Error:")
    }
    return tuple(
        ToolUse(call.name, call.id not in failed)
        for m in turn
        if m.role == "assistant"
        for call in m.tool_calls
    )


def files_touched(messages: Sequence[Message]) -> tuple[str, ...]:
    """Paths named in the arguments of the messages' tool calls, first mention first."""
    seen: dict[str, None] = {}
    for message in messages:
        for call in message.tool_calls:
            for path in _paths_in_arguments(call.arguments):
                seen.setdefault(path, None)
                if len(seen) >= MAX_FILES:
                    return tuple(seen)
    return tuple(seen)


def _paths_in_arguments(arguments: str) -> list[str]:
    try:
        data = json.loads(arguments)
    except (ValueError, TypeError):
        return []
    if not isinstance(data, dict):
        return []
    found: list[str] = []
    for key in _PATH_KEYS:
        value = data.get(key)
        values = value if isinstance(value, list) else [value]
        found.extend(v.strip() for v in values if _looks_like_path(v))
    return found


def _looks_like_path(value: object) -> TypeGuard[str]:
    return isinstance(value, str) and 0 < len(value.strip()) <= 260 and "\n" not in value


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, marking the cut."""
    text = text.strip()
    return text if len(text) <= limit else text[: max(0, limit - 1)].rstrip() + "…"


def new_pairs(messages: Sequence[Message], start_id: int) -> list[TurnPair]:
    """Pairs of the finished turns whose user message id is ``start_id`` or newer."""
    pairs = []
    for turn in split_turns(messages):
        if (turn[0].id or 0) < start_id:
            continue
        pair = pair_from_turn(turn)
        if pair is not None:
            pairs.append(pair)
    return pairs


def record_pairs(store: Store, records: ContextRecords, topic_id: str, now: float) -> int:
    """Record the topic's finished turns not yet in L2 or L3; return how many were written."""
    messages = store.messages.of_topic(topic_id, limit=RECENT_MESSAGES)
    pairs = new_pairs(messages, records.record_start(topic_id))
    return records.save_pairs(topic_id, pairs, now) if pairs else 0
