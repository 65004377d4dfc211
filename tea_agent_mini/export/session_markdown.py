"""A stored session as a Markdown (or PDF) document.

Modes:

* ``latest``: the last finished exchange: its question and the final answer. A tool calling
  this during a turn gets the previous exchange, since the current one has no answer yet
  (like tea_agent's "export last").
* ``answers``: every question with its final answer, no tool calls or reasoning.
* ``full``: the whole trajectory: reasoning as a quote, interim text, each tool call (name,
  arguments) and result preview as code blocks, and the final answer.

Each question becomes a ``##`` heading (its first line, shortened; when that is not all of it,
the full question follows, then a rule); headings inside questions and answers move two levels
down so they nest under it. Files and images attached to a question are named on a line of
their own under it (in ``full`` mode the files' text follows as code, shortened like results).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from ..errors import StoreError

if TYPE_CHECKING:
    from ..store import Store, Topic
    from ..types import Message, ToolCall

__all__ = [
    "MODES",
    "UnknownSession",
    "export_filename",
    "session_title",
    "session_to_markdown",
    "session_to_pdf",
]

MODES = ("latest", "answers", "full")
HEADING_CHARS = 80
RESULT_PREVIEW_CHARS = 2000
FILENAME_CHARS = 80
_HEADING = re.compile(r"^( {0,3})(#{1,6})(?=[ \t]|$)")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_UNSAFE_NAME = re.compile(r"[^\w\-.]+")
_ATTACHED_FILE = re.compile(r"^\[attached file ([^\]\n]+)\]\n")  # see server/uploads.py
_MODE_LABELS = {
    "latest": "Latest answer",
    "answers": "Questions and answers",
    "full": "Full trajectory",
}


class UnknownSession(StoreError, LookupError):
    """There is no session with that id."""


@dataclass
class Exchange:
    """One user message and everything that answered it (``question`` is None for messages
    stored before the first user message)."""

    question: Message | None
    replies: list[Message] = field(default_factory=list)

    @property
    def answer(self) -> Message | None:
        """The final answer: the last assistant text without tool calls (else the last text)."""
        texts = [m for m in self.replies if m.role == "assistant" and m.text.strip()]
        final = [m for m in texts if not m.tool_calls]
        return final[-1] if final else None

    @property
    def last_text(self) -> Message | None:
        texts = [m for m in self.replies if m.role == "assistant" and m.text.strip()]
        return texts[-1] if texts else None


def session_title(topic: Topic) -> str:
    return topic.title.strip() or f"Session {topic.id[:8]}"


def export_filename(title: str, topic_id: str, suffix: str) -> str:
    """A file name from the title (letters of any script, digits, ``-_.``), else the id."""
    stem = _UNSAFE_NAME.sub("_", title).strip("._-")[:FILENAME_CHARS].rstrip("._-")
    return f"{stem or 'session-' + topic_id[:8]}{suffix}"


def session_to_markdown(store: Store, topic_id: str, mode: str = "latest") -> str:
    """The session as Markdown (see the module docstring for the modes).

    Raises:
        ValueError: an unknown mode.
        UnknownSession: no session with ``topic_id``.
    """
    if mode not in MODES:
        raise ValueError(f"export mode {mode!r}: expected one of {', '.join(MODES)}")
    topic = store.topics.get(topic_id)
    if topic is None:
        raise UnknownSession(f"no session with id {topic_id!r}")
    exchanges = group_exchanges(store.messages.of_topic(topic_id))
    if mode == "latest":
        exchanges = _latest(exchanges)
    created = datetime.fromtimestamp(topic.created_at, timezone.utc).strftime("%Y-%m-%d %H:%M")
    parts = [f"# {_one_line(session_title(topic))}", f"{_MODE_LABELS[mode]} · {created} UTC"]
    if not exchanges:
        parts.append("(This session has no messages yet.)")
    for number, exchange in enumerate(exchanges, 1):
        parts.extend(_exchange(exchange, number, full=mode == "full"))
    return "\n\n".join(part for part in parts if part) + "\n"


def session_to_pdf(store: Store, topic_id: str, mode: str = "latest") -> bytes:
    """The Markdown export rendered by the pure-Python PDF writer, built in memory."""
    from .markdown_blocks import markdown_to_pdf
    from .pdf import PdfMeta

    text = session_to_markdown(store, topic_id, mode)
    topic = store.topics.get(topic_id)
    title = session_title(topic) if topic else topic_id
    meta = PdfMeta(title=title, subject=f"tea-agent-mini session {topic_id} ({mode})")
    return markdown_to_pdf(text, meta)


def group_exchanges(messages: list[Message]) -> list[Exchange]:
    exchanges: list[Exchange] = []
    for message in messages:
        if message.role == "system":
            continue
        if message.role == "user":
            exchanges.append(Exchange(message))
        elif exchanges:
            exchanges[-1].replies.append(message)
        else:
            exchanges.append(Exchange(None, [message]))
    return exchanges


def _latest(exchanges: list[Exchange]) -> list[Exchange]:
    for exchange in reversed(exchanges):
        if exchange.answer is not None:
            return [exchange]
    return exchanges[-1:]


def _exchange(exchange: Exchange, number: int, *, full: bool) -> list[str]:
    question = exchange.question
    parts = _question(question, number, full=full) if question is not None else []
    if full:
        for message in exchange.replies:
            parts.extend(_trajectory_step(message))
        if not exchange.replies:
            parts.append("(no answer)")
        return parts
    answer = exchange.answer or exchange.last_text
    parts.append(demote_headings(answer.text.strip()) if answer else "(no answer)")
    return parts


def _question(message: Message, number: int, *, full: bool) -> list[str]:
    """The question's heading, its whole text when the heading shortened it, and its attachments
    (named on a line of their own; in ``full`` mode the files' text follows, shortened)."""
    question = user_parts(message)
    text = question.text.strip()
    first = _one_line(text.split("\n", 1)[0]) if text else "(no text)"
    heading = first if len(first) <= HEADING_CHARS else first[: HEADING_CHARS - 1] + "…"
    parts = [f"## {number}. {heading}"]
    whole = "\n" in text or heading != first
    if whole:
        parts.append(demote_headings(text))
    names = [code_span(name) for name, _ in question.files]
    if question.images:
        names.append(f"{question.images} image{'s' if question.images > 1 else ''}")
    if names:
        parts.append("**Attached:** " + ", ".join(names))
    if full:
        for name, content in question.files:
            parts.append(f"**Attached file** {code_span(name)}:")
            parts.append(code_block(_preview(content), "text"))
    if whole or (full and question.files):
        parts.append("---")  # the question ends, its answer follows
    return parts


def _trajectory_step(message: Message) -> list[str]:
    parts: list[str] = []
    if message.role == "tool":
        label = f"`{message.name}`" if message.name else "the tool"
        parts.append(f"**Result** of {label}:")
        parts.append(code_block(_preview(message.text), "text"))
        return parts
    if message.reasoning and message.reasoning.strip():
        parts.append(f"> **Reasoning:** {_one_line(message.reasoning)}")
    if message.text.strip():
        parts.append(demote_headings(message.text.strip()))
    for call in message.tool_calls:
        parts.append(f"**Tool call** `{call.name}`:")
        parts.append(code_block(_arguments(call), "json"))
    return parts


def _arguments(call: ToolCall) -> str:
    try:
        value = json.loads(call.arguments or "{}")
    except ValueError:
        return call.arguments
    return json.dumps(value, ensure_ascii=False, indent=2)


def _preview(text: str) -> str:
    if len(text) <= RESULT_PREVIEW_CHARS:
        return text
    rest = len(text) - RESULT_PREVIEW_CHARS
    return f"{text[:RESULT_PREVIEW_CHARS]}\n… ({rest} more characters)"


def code_block(text: str, language: str = "") -> str:
    """``text`` fenced with more backticks than any run inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text.rstrip()}\n{fence}"


def demote_headings(text: str, levels: int = 2) -> str:
    """ATX headings moved ``levels`` down (at most ``######``); fenced code is left alone."""
    lines = text.split("\n")
    fence = ""
    for index, line in enumerate(lines):
        opening = _FENCE.match(line)
        if fence:
            closing = line.strip()
            if closing.startswith(fence) and not closing.strip(fence[0]):
                fence = ""
        elif opening:
            fence = opening.group(1)
        elif match := _HEADING.match(line):
            hashes = "#" * min(6, len(match.group(2)) + levels)
            lines[index] = match.group(1) + hashes + line[match.end() :]
    return "\n".join(lines)


def code_span(text: str) -> str:
    """``text`` as inline code, fenced with more backticks than any run inside it."""
    text = _one_line(text)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _one_line(text: str) -> str:
    return " ".join(text.split())


@dataclass
class UserParts:
    """A user message taken apart: its own text, the files attached to it (name and text, as the
    server stores them: a text part starting ``[attached file NAME]``) and how many images."""

    text: str
    files: list[tuple[str, str]] = field(default_factory=list)
    images: int = 0


def user_parts(message: Message) -> UserParts:
    if not isinstance(message.content, list):
        return UserParts(message.text)
    parts = UserParts("")
    texts = []
    for part in message.content:
        if part.get("type") == "image_url":
            parts.images += 1
        elif part.get("type") == "text":
            text = part.get("text") or ""
            if match := _ATTACHED_FILE.match(text):
                parts.files.append((match.group(1), text[match.end() :]))
            else:
                texts.append(text)
    parts.text = "".join(texts)
    return parts
