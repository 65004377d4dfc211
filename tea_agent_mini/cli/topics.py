"""Finding a conversation from the command line (an id, a unique id prefix, a title, or the
last one) and printing what happened in it."""

from __future__ import annotations

import string
from datetime import datetime
from typing import TYPE_CHECKING, TextIO

from ..errors import ConfigError
from .render import preview

if TYPE_CHECKING:
    from ..store import Store
    from ..store.topics import Topic
    from ..types import Message

SHOWN_MATCHES = 5


def find_topic(store: Store, ref: str) -> Topic:
    """The topic ``ref`` names: its id, a prefix of one id, or (a part of) one title.

    Raises:
        ConfigError: nothing matches, or several topics do (they are listed).
    """
    ref = ref.strip()
    if not ref:
        raise ConfigError("expected a topic id, id prefix or title")
    exact = store.topics.get(ref)
    if exact is not None:
        return exact
    matches: list[Topic] = []
    if all(c in string.hexdigits for c in ref):
        matches = store.topics.with_id_prefix(ref.lower(), limit=SHOWN_MATCHES + 1)
    if not matches:
        matches = store.topics.recent(limit=50, query=ref, include_archived=True)
        same = [t for t in matches if t.title.strip().lower() == ref.lower()]
        matches = same or matches
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise ConfigError(
            f"no topic matches {ref!r} (tea-agent-mini chat, then /topics, lists them)"
        )
    listed = "\n".join(f"  {topic_line(t)}" for t in matches[:SHOWN_MATCHES])
    more = "\n  …" if len(matches) > SHOWN_MATCHES else ""
    raise ConfigError(f"{ref!r} matches several topics; say which:\n{listed}{more}")


def last_topic(store: Store) -> Topic | None:
    """The most recently used topic."""
    latest = store.topics.recent(limit=1)
    return latest[0] if latest else None


def pick_topic(store: Store, ref: str | None, resume: bool) -> str | None:
    """The topic id for ``--topic REF`` / ``--continue``; None for a new topic."""
    if ref:
        return find_topic(store, ref).id
    if resume:
        topic = last_topic(store)
        if topic is None:
            raise ConfigError("there is no earlier conversation to continue")
        return topic.id
    return None


def topic_line(topic: Topic) -> str:
    when = datetime.fromtimestamp(topic.updated_at).strftime("%Y-%m-%d %H:%M")
    return f"{topic.id}  {when}  {topic.title or '(untitled)'}"


def print_history(store: Store, topic_id: str, limit: int, out: TextIO) -> None:
    """The topic's last ``limit`` messages: who said what, which tools ran and how it went."""
    total = store.messages.count(topic_id)
    messages = store.messages.of_topic(topic_id, limit=max(1, limit))
    if total > len(messages):
        out.write(f"… {total - len(messages)} earlier message(s)\n")
    for message in messages:
        for line in message_lines(message):
            out.write(line + "\n")
    out.flush()


def message_lines(message: Message) -> list[str]:
    text = message.text.strip()
    if message.role == "user":
        return [f"you> {text}"]
    if message.role == "tool":
        return [f"  ← {message.name or 'tool'}: {preview(text, 200)}"]
    if message.role != "assistant":
        return []
    lines = [f"  → {call.name}({preview(call.arguments, 120)})" for call in message.tool_calls]
    return ([text] if text else []) + lines
