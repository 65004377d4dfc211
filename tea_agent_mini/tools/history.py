"""toolkit_query_chat_history and toolkit_dump_topic: earlier conversations, searched or saved."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any, Literal

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import tool
from tea_agent_mini.types import Message

if TYPE_CHECKING:
    from tea_agent_mini.store import Store, Topic

SNIPPET = 200
MAX_LIMIT = 50
WORD_SCAN = 500  # candidates read when matching the words of a query separately


def require_store(ctx: ToolContext) -> Store:
    if ctx.store is None:
        raise ToolError("this tool needs the conversation store, which is not available here")
    return ctx.store


def require_topic(ctx: ToolContext, topic_id: str | None = None) -> Topic:
    """The topic ``topic_id`` (default: this conversation's), or a ToolError saying why not."""
    store = require_store(ctx)
    wanted = topic_id or ctx.topic_id
    if not wanted:
        raise ToolError("there is no current conversation; give 'topic_id'")
    topic = store.topics.get(wanted)
    if topic is None:
        raise ToolError(f"no conversation with id {wanted!r}")
    return topic


def when(timestamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(timestamp)) if timestamp else "?"


# ---- search -------------------------------------------------------------------------------


@tool("toolkit_query_chat_history", concurrency_safe=True)
def toolkit_query_chat_history(
    ctx: ToolContext, query: str, limit: int = 10, topic_id: str | None = None
) -> str:
    """Search the messages of earlier conversations (all of them, or one topic_id) for a word
    or phrase; results are grouped by conversation with its title, date and snippets. Use it
    when the user refers to something discussed before.

    Args:
        query: words or a phrase to look for
        limit: at most this many messages (10)
        topic_id: search only this conversation
    """
    store = require_store(ctx)
    query = " ".join(query.split())
    if not query:
        raise ToolError("give 'query', the words to look for")
    limit = min(max(int(limit), 1), MAX_LIMIT)
    found = find_messages(store, query, limit, topic_id)
    if not found:
        return f"No message mentions {query!r}."
    groups: dict[str, list[Message]] = {}
    for message in found:
        groups.setdefault(message.topic_id or "", []).append(message)
    lines = [f"{len(found)} message(s) mention {query!r}, newest first:"]
    for tid, messages in groups.items():
        topic = store.topics.get(tid)
        title = (topic.title if topic else "") or "(untitled)"
        current = "  ← this conversation" if tid == ctx.topic_id else ""
        lines.append(f"\n## {title}  (topic {tid}){current}")
        for message in messages:
            text = _snippet(message.text, query)
            lines.append(f"- [{when(message.created_at)}] {message.role}: {text}")
    return "\n".join(lines)


def find_messages(store: Store, query: str, limit: int, topic_id: str | None) -> list[Message]:
    """Messages containing the phrase; failing that, messages containing every word of it."""
    found = store.messages.search(query, limit=limit, topic_id=topic_id)
    words = query.casefold().split()
    if found or len(words) < 2:
        return found
    anchor = max(words, key=len)
    candidates = store.messages.search(anchor, limit=WORD_SCAN, topic_id=topic_id)
    return [m for m in candidates if all(w in m.text.casefold() for w in words)][:limit]


def _snippet(text: str, query: str) -> str:
    flat = " ".join(text.split())
    folded = flat.casefold()
    positions = [folded.find(w) for w in [query.casefold(), *query.casefold().split()]]
    hits = [p for p in positions if p >= 0]
    start = max(min(hits) - SNIPPET // 3, 0) if hits else 0
    piece = flat[start : start + SNIPPET]
    return ("…" if start else "") + piece + ("…" if start + SNIPPET < len(flat) else "")


# ---- export -------------------------------------------------------------------------------


@tool("toolkit_dump_topic", mutates=True)
def toolkit_dump_topic(
    ctx: ToolContext,
    topic_id: str | None = None,
    # the parameter name the model sees, though it shadows a builtin
    format: Literal["markdown", "json"] = "markdown",
    include_tools: bool = False,
    path: str | None = None,
) -> str:
    """Export a conversation (default: this one) as Markdown or JSON: returned as text, or
    written to 'path' in the workspace. Tool calls and results are left out unless
    include_tools is true.

    Args:
        topic_id: default: this conversation
        format: output format (default markdown)
        include_tools: include tool calls/results
        path: write the export to this file in the workspace instead of returning it
    """
    if format not in ("markdown", "json"):
        raise ToolError("format must be 'markdown' or 'json'")
    topic = require_topic(ctx, topic_id)
    messages = require_store(ctx).messages.of_topic(topic.id)
    if not include_tools:
        messages = [
            m for m in messages if m.role != "tool" and (m.text.strip() or m.role == "user")
        ]
    if format == "json":
        text = json.dumps(topic_json(topic, messages, include_tools), ensure_ascii=False, indent=2)
    else:
        text = topic_markdown(topic, messages, include_tools)
    if not path:
        return text
    target = ctx.resolve(path)
    if target.is_dir():
        target = target / f"topic-{topic.id[:8]}.{'json' if format == 'json' else 'md'}"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ToolError(f"cannot write {ctx.relative(target)}: {exc.strerror or exc}") from exc
    return f"Wrote {len(messages)} message(s) to {ctx.relative(target)} ({len(text)} characters)."


def topic_markdown(topic: Any, messages: list[Message], include_tools: bool) -> str:
    lines = [
        f"# {topic.title or 'Untitled conversation'}",
        "",
        f"- Topic: `{topic.id}`",
        f"- Started: {when(topic.created_at)}; last active: {when(topic.updated_at)}",
        f"- Messages: {len(messages)}",
    ]
    if topic.system_prompt:
        lines.append(f"- Conversation instructions: {topic.system_prompt}")
    for message in messages:
        lines += ["", f"## {_role_name(message)} — {when(message.created_at)}", ""]
        if message.text.strip():
            lines.append(message.text.strip())
        if isinstance(message.content, list) and any(
            part.get("type") != "text" for part in message.content
        ):
            lines.append("_(with attachments)_")
        if include_tools:
            for call in message.tool_calls:
                lines.append(f"\n→ `{call.name}` {call.arguments}")
    return "\n".join(lines) + "\n"


def _role_name(message: Message) -> str:
    if message.role == "tool":
        return f"Tool result ({message.name or message.tool_call_id or '?'})"
    return message.role.capitalize()


def topic_json(topic: Any, messages: list[Message], include_tools: bool) -> dict[str, Any]:
    rows = []
    for message in messages:
        row: dict[str, Any] = {
            "id": message.id,
            "role": message.role,
            "content": message.content,
            "created_at": message.created_at,
        }
        if include_tools and message.tool_calls:
            row["tool_calls"] = [c.to_openai() for c in message.tool_calls]
        if include_tools and message.tool_call_id:
            row["tool_call_id"] = message.tool_call_id
        rows.append(row)
    return {
        "topic": {
            "id": topic.id,
            "title": topic.title,
            "created_at": topic.created_at,
            "updated_at": topic.updated_at,
            "system_prompt": topic.system_prompt,
        },
        "messages": rows,
    }
