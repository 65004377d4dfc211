"""Tools on the current conversation itself: its title, its own instructions, and forking it."""

from __future__ import annotations

import dataclasses
from typing import Literal

from tea_agent_mini.errors import ToolError
from tea_agent_mini.store import topic_scope
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import tool
from tea_agent_mini.tools.history import require_store, require_topic
from tea_agent_mini.types import Message

MAX_TITLE = 120
MAX_PROMPT = 16 * 1024


@tool("toolkit_set_topic_title")
def toolkit_set_topic_title(ctx: ToolContext, title: str) -> str:
    """Give this conversation a short, descriptive title (shown in the conversation list).

    Args:
        title: a few words
    """
    topic = require_topic(ctx)
    title = " ".join(title.split())
    if not title:
        raise ToolError("the title must not be empty")
    if len(title) > MAX_TITLE:
        title = title[: MAX_TITLE - 1].rstrip() + "…"
    require_store(ctx).topics.rename(topic.id, title)
    return f"This conversation is now titled '{title}'."


@tool("toolkit_topic_prompt", mutates=True, mutating_actions=("set", "clear"))
def toolkit_topic_prompt(
    ctx: ToolContext, action: Literal["get", "set", "clear"], prompt: str | None = None
) -> str:
    """This conversation's own standing instructions, added to the system prompt of every
    later turn (e.g. 'answer in French', 'we are working on the billing service'). get shows
    them, set replaces them, clear removes them.

    Args:
        action: get the current instructions, set new ones, or clear them
        prompt: [set] the instructions
    """
    topic = require_topic(ctx)
    if action == "get":
        if not topic.system_prompt:
            return "This conversation has no instructions of its own."
        return f"This conversation's instructions:\n{topic.system_prompt}"
    if action == "clear":
        require_store(ctx).topics.set_system_prompt(topic.id, None)
        return "Removed this conversation's instructions."
    if action != "set":
        raise ToolError(f"unknown action {action!r}; use get, set or clear")
    text = (prompt or "").strip()
    if not text:
        raise ToolError("set needs 'prompt' (use action 'clear' to remove the instructions)")
    if len(text) > MAX_PROMPT:
        raise ToolError(f"the instructions are too long (limit {MAX_PROMPT // 1024} KiB)")
    require_store(ctx).topics.set_system_prompt(topic.id, text)
    return "Saved. These instructions apply from the next turn on."


@tool("toolkit_fork_session")
def toolkit_fork_session(
    ctx: ToolContext, title: str | None = None, up_to_message_id: int | None = None
) -> str:
    """Copy this conversation (up to a message, or all of it) into a new conversation, with
    its instructions, plan and todo list, to explore an alternative without changing this one.
    Returns the new conversation's id.

    Args:
        title: title of the copy
        up_to_message_id: copy messages up to and including this id (default: all)
    """
    topic = require_topic(ctx)
    store = require_store(ctx)
    messages = store.messages.of_topic(topic.id)
    if up_to_message_id is not None:
        if not any(m.id == up_to_message_id for m in messages):
            raise ToolError(f"message {up_to_message_id} is not part of this conversation")
        messages = [m for m in messages if m.id is not None and m.id <= up_to_message_id]
    messages = complete_exchanges(messages)
    name = " ".join((title or "").split())[:MAX_TITLE] or f"Fork of {topic.title or 'untitled'}"
    with store.transaction():
        fork = store.topics.create(title=name, profile=topic.profile)
        if topic.system_prompt:
            store.topics.set_system_prompt(fork.id, topic.system_prompt)
        for key, value in store.state.items(topic_scope(topic.id)).items():
            store.state.put(topic_scope(fork.id), key, value)
        for message in messages:
            store.messages.add(fork.id, dataclasses.replace(message, id=None, topic_id=None))
    return (
        f"Forked {len(messages)} message(s) into a new conversation '{name}' (id {fork.id}). "
        "This conversation is unchanged; open the new one to continue from there."
    )


def complete_exchanges(messages: list[Message]) -> list[Message]:
    """The longest prefix in which every tool call has its result.

    The fork runs inside a turn, so the assistant message that called it has no result yet; a
    history ending in an unanswered tool call is rejected by the chat API.
    """
    pending: set[str] = set()
    cut = 0
    for index, message in enumerate(messages):
        if message.role == "assistant" and message.tool_calls:
            pending |= {call.id for call in message.tool_calls}
        elif message.role == "tool":
            pending.discard(message.tool_call_id or "")
        if not pending:
            cut = index + 1
    return messages[:cut]
