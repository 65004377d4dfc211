"""Helpers for the context tests: recognising background prompts, filling a topic quickly, and
checking a request's shape."""

from __future__ import annotations

import json
from typing import Any

from tea_agent_mini.types import Message, ToolCall
from tests.fakes.background import (  # noqa: F401 - re-exported for the context tests
    SUMMARY_TEXT,
    answer_background,
    is_background,
    is_extraction,
    is_summary,
    is_title,
    turn_requests,
)
from tests.fakes.scripted_server import Reply, last_user_text


def provider_tokens(request: dict) -> int:
    """How the tests' pretend provider counts a prompt: messages and tools, 4 characters each."""
    body = {"messages": request.get("messages", []), "tools": request.get("tools", [])}
    return len(json.dumps(body, ensure_ascii=False)) // 4


def counting_echo(request: dict) -> Reply:
    """Echo the user, reporting prompt_tokens the way :func:`provider_tokens` counts."""
    return Reply(text=f"echo: {last_user_text(request)}", prompt_tokens=provider_tokens(request))


def assert_consistent(messages: list[dict]) -> None:
    """Every tool message answers a call of the assistant message before it; every call answered."""
    pending: set[str] = set()
    for message in messages:
        if message["role"] == "tool":
            assert message["tool_call_id"] in pending, f"orphan tool message {message}"
            pending.discard(message["tool_call_id"])
            continue
        assert not pending, f"unanswered calls {pending} before {message['role']}"
        pending = {c["id"] for c in message.get("tool_calls") or []}
    assert not pending, f"unanswered calls {pending} at the end"


def add_turn(
    store: Any,
    topic_id: str,
    question: str,
    answer: str,
    *,
    tool_output: str | None = None,
    path: str = "notes.txt",
    call_id: str = "c1",
) -> list[Message]:
    """Store one finished turn (optionally with one file tool call) and return its messages."""
    added = [store.messages.add(topic_id, Message(role="user", content=question))]
    if tool_output is not None:
        call = ToolCall(call_id, "toolkit_file", json.dumps({"action": "read", "filename": path}))
        added.append(store.messages.add(topic_id, Message(role="assistant", tool_calls=(call,))))
        added.append(
            store.messages.add(
                topic_id,
                Message(
                    role="tool", tool_call_id=call_id, name="toolkit_file", content=tool_output
                ),
            )
        )
    added.append(
        store.messages.add(
            topic_id, Message(role="assistant", content=answer, reasoning=f"thinking: {question}")
        )
    )
    return added
