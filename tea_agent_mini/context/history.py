"""L1: the raw messages of the most recent user turns, made valid and lean for the request.

How L1 and L2 split the stored history: L1 is the raw messages of the last ``RECENT_TURNS`` user
turns (the current one included); every older turn reaches the model only through L2 (its
recorded pair, injected when relevant) or L3 (the summary of pairs that left the ring). So the
request for turn 300 carries 10 turns of raw messages, however long the topic is. L2 pairs of
turns still inside L1 are never injected (they would repeat it).

Within L1, tool outputs older than ``FULL_TOOL_TURNS`` user turns become placeholders stating
their size, and tool-call/tool-result pairs are kept consistent (no orphan tool messages, no
unanswered calls).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeGuard

from ..types import Message

__all__ = [
    "FULL_TOOL_TURNS",
    "RECENT_TURNS",
    "UNKNOWN_OUTCOME",
    "consistent",
    "placeholder_for",
    "replaceable",
    "recent_messages",
    "to_request",
    "user_turn_starts",
]

RECENT_TURNS = 10  # must stay below summary.RING_KEEP, so no turn is in neither L1 nor L2
FULL_TOOL_TURNS = 3
MIN_PLACEHOLDER_CHARS = 200  # shorter outputs cost less than the placeholder would
PLACEHOLDER_PREFIX = "[tool output omitted to save context: "
UNKNOWN_OUTCOME = (
    "Error: no result: the server stopped while this tool was running. Its outcome is unknown "
    "(it may or may not have taken effect); check before repeating it."
)


def consistent(history: Sequence[Message]) -> list[Message]:
    """Drop tool results without a preceding call and give unanswered calls a placeholder result;
    leave out the records of turns that were stopped or failed before any answer."""
    from ..store.outcomes import is_empty_outcome

    out: list[Message] = []
    pending: dict[str, str] = {}
    for message in history:
        if is_empty_outcome(message):
            continue
        if message.role == "tool":
            if message.tool_call_id in pending:
                pending.pop(message.tool_call_id)
                out.append(message)
            continue
        out.extend(_placeholders(pending))
        pending = {c.id: c.name for c in message.tool_calls} if message.role == "assistant" else {}
        out.append(message)
    out.extend(_placeholders(pending))
    return out


def _placeholders(pending: dict[str, str]) -> list[Message]:
    # A turn stores a result for every call, even when cancelled: a call without one was running
    # when the process stopped, so it may have done part or all of its work.
    return [
        Message(role="tool", tool_call_id=call_id, name=name, content=UNKNOWN_OUTCOME)
        for call_id, name in pending.items()
    ]


def user_turn_starts(history: Sequence[Message]) -> list[int]:
    return [i for i, m in enumerate(history) if m.role == "user"]


def recent_messages(history: Sequence[Message], turns: int = RECENT_TURNS) -> list[Message]:
    """The messages of the last ``turns`` user turns (from a user message on), made consistent.

    Without any user message (an odd history) the whole history is kept.
    """
    starts = user_turn_starts(history)
    if not starts:
        return consistent(history)
    return consistent(history[starts[max(0, len(starts) - turns)] :])


def placeholder_for(content: str, turns_ago: int | None = None) -> str:
    """What replaces an old tool output: its size, and how to get it back."""
    from ..llm.tokens import estimate_text_tokens

    when = f" from {turns_ago} turns ago" if turns_ago else ""
    return (
        f"{PLACEHOLDER_PREFIX}{len(content)} characters, ~{estimate_text_tokens(content)} "
        f"tokens{when}; run the tool again if it is needed]"
    )


def replaceable(content: object) -> TypeGuard[str]:
    """Whether a tool output is worth replacing by a placeholder."""
    return (
        isinstance(content, str)
        and len(content) > MIN_PLACEHOLDER_CHARS
        and not content.startswith(PLACEHOLDER_PREFIX)
    )


def to_request(
    messages: Sequence[Message],
    *,
    full_tool_turns: int = FULL_TOOL_TURNS,
    include_reasoning: bool = False,
) -> list[dict[str, Any]]:
    """``messages`` (consistent, starting at a user turn) as request dicts, with the tool outputs
    of turns older than the last ``full_tool_turns`` user turns replaced by placeholders."""
    total = sum(1 for m in messages if m.role == "user")
    seen = 0
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "user":
            seen += 1
        age = total - seen  # 0: the current turn
        data = message.to_openai(include_reasoning=include_reasoning and age == 0)
        content = data.get("content")
        if message.role == "tool" and age >= full_tool_turns and replaceable(content):
            data["content"] = placeholder_for(content, age)
        out.append(data)
    return out
