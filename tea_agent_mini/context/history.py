"""Turning stored messages into the list sent to the model, inside a token budget.

This is the L0 + L1 part of the history: the system prompt and the topic's own messages. Tool-call
and tool-result pairs are kept consistent (no orphan tool messages, no unanswered calls).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..types import Message

BUDGET_FILL = 0.8  # start trimming when the estimate passes 80 % of the window
MAX_TEXT_CHARS = 4096


def consistent(history: Sequence[Message]) -> list[Message]:
    """Drop tool results without a preceding call and give unanswered calls a placeholder result."""
    out: list[Message] = []
    pending: dict[str, str] = {}
    for message in history:
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
    return [
        Message(
            role="tool", tool_call_id=call_id, name=name, content="Error: no result (interrupted)"
        )
        for call_id, name in pending.items()
    ]


def user_turn_starts(history: Sequence[Message]) -> list[int]:
    return [i for i, m in enumerate(history) if m.role == "user"]


def build_messages(
    system_prompt: str, history: Sequence[Message], *, max_tokens: int = 0
) -> list[dict[str, Any]]:
    """System prompt + consistent history; whole old turns dropped first when over budget."""
    from ..llm.tokens import estimate_messages_tokens

    messages = consistent(history)
    system = {"role": "system", "content": system_prompt}
    payload = [system, *(m.to_openai() for m in messages)]
    if max_tokens <= 0:
        return payload
    limit = int(max_tokens * BUDGET_FILL)
    starts = user_turn_starts(messages)
    # Drop the oldest user turns (keeping the current one) until the estimate fits.
    while estimate_messages_tokens(payload) > limit and len(starts) > 1:
        messages = messages[starts[1] :]
        starts = user_turn_starts(messages)
        payload = [system, *(m.to_openai() for m in messages)]
    if estimate_messages_tokens(payload) > limit:
        payload = [system, *(_shorten(m) for m in payload[1:])]
    return payload


def _shorten(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    if isinstance(content, str) and len(content) > MAX_TEXT_CHARS:
        cut = len(content) - MAX_TEXT_CHARS
        head, tail = content[: MAX_TEXT_CHARS // 2], content[-MAX_TEXT_CHARS // 2 :]
        return {**message, "content": f"{head}\n[... {cut} characters cut to fit ...]\n{tail}"}
    return message
