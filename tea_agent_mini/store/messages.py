"""Messages of a topic, stored so that a :class:`Message` reads back exactly as written.

``content`` always holds the searchable text. When a message's content is a list of parts (images),
the list is kept as JSON in ``parts`` and ``content`` holds only its text parts.
"""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING, Any

from ..errors import StoreError
from ..types import Message, ToolCall
from .database import Database, like_pattern

if TYPE_CHECKING:
    from .database import Row

_COLUMNS = (
    "id, topic_id, role, content, parts, reasoning, tool_calls, tool_call_id, name, tokens, "
    "created_at, status, error, duration"
)
WINDOW_MESSAGES = 2000


class MessageRepository:
    """Append, read back, search and trim the messages of topics."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def add(self, topic_id: str, message: Message) -> Message:
        """Store ``message`` at the end of the topic and bump the topic's ``updated_at``.

        Returns a copy carrying the new ``id``, ``topic_id`` and ``created_at`` (kept when the
        message already had one, e.g. on import).

        Raises:
            StoreError: the topic does not exist, or the content cannot be encoded.
        """
        created_at = message.created_at or self._db.now()
        content, parts, calls = _encode(message)
        with self._db.transaction() as tx:
            touched = tx.execute(
                "UPDATE topics SET updated_at = MAX(updated_at, ?) WHERE id = ?",
                (created_at, topic_id),
            )
            if touched.rowcount == 0:
                raise StoreError(f"cannot add a message: no topic with id {topic_id!r}")
            cursor = tx.execute(
                "INSERT INTO messages (topic_id, role, content, parts, reasoning, tool_calls, "
                "tool_call_id, name, tokens, created_at, status, error, duration) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    topic_id,
                    message.role,
                    content,
                    parts,
                    message.reasoning,
                    calls,
                    message.tool_call_id,
                    message.name,
                    int(message.tokens),
                    created_at,
                    message.status,
                    message.error,
                    message.duration,
                ),
            )
        return dataclasses.replace(
            message, id=cursor.lastrowid, topic_id=topic_id, created_at=created_at
        )

    def get(self, message_id: int) -> Message | None:
        row = self._db.query_one(f"SELECT {_COLUMNS} FROM messages WHERE id = ?", (message_id,))
        return _message(row) if row else None

    def of_topic(
        self,
        topic_id: str,
        limit: int | None = None,
        before_id: int | None = None,
        after_id: int | None = None,
    ) -> list[Message]:
        """The topic's messages in order, between ``after_id`` and ``before_id`` (exclusive).

        ``limit`` keeps the last n of them, or the first n when only ``after_id`` is given (so
        that paging forwards from an id continues where the previous page ended).
        """
        sql = f"SELECT {_COLUMNS} FROM messages WHERE topic_id = ?"
        params: list[Any] = [topic_id]
        if before_id is not None:
            sql += " AND id < ?"
            params.append(int(before_id))
        if after_id is not None:
            sql += " AND id > ?"
            params.append(int(after_id))
        forwards = after_id is not None and before_id is None
        if limit is None or forwards:
            tail = " ORDER BY id" + (" LIMIT ?" if limit is not None else "")
            rows = self._db.query(sql + tail, [*params, *_limit(limit)])
        else:
            rows = self._db.query(sql + " ORDER BY id DESC LIMIT ?", [*params, *_limit(limit)])
            rows.reverse()
        return [_message(row) for row in rows]

    def recent_turns(
        self, topic_id: str, turns: int, max_messages: int = WINDOW_MESSAGES
    ) -> list[Message]:
        """The messages of the topic's last ``turns`` user turns, in order, from the user message
        that opens the oldest of them (all of them when the topic has fewer turns).

        Two indexed reads (migration 5), so the cost follows the size of the window, never the
        size of the topic. At most ``max_messages`` (the newest) are returned: a safety net for a
        topic without user messages or a runaway turn; ``context.history.consistent`` repairs
        a cut that leaves tool results without their call.
        """
        start = self._turn_start(topic_id, max(1, int(turns)))
        rows = self._db.query(
            f"SELECT {_COLUMNS} FROM messages WHERE topic_id = ? AND id >= ? "
            "ORDER BY id DESC LIMIT ?",
            (topic_id, start, max(1, int(max_messages))),
        )
        rows.reverse()
        return [_message(row) for row in rows]

    def _turn_start(self, topic_id: str, turns: int) -> int:
        """The id of the user message opening the last ``turns`` turns (0: no user message)."""
        # role = 'user' spelled out: it is what lets SQLite use the partial index
        row = self._db.query_one(
            "SELECT id FROM messages WHERE topic_id = ? AND role = 'user' "
            "ORDER BY id DESC LIMIT 1 OFFSET ?",
            (topic_id, turns - 1),
        )
        if row is None:
            row = self._db.query_one(
                "SELECT id FROM messages WHERE topic_id = ? AND role = 'user' ORDER BY id LIMIT 1",
                (topic_id,),
            )
        return int(row[0]) if row else 0

    def count(self, topic_id: str) -> int:
        row = self._db.query_one("SELECT COUNT(*) FROM messages WHERE topic_id = ?", (topic_id,))
        return int(row[0]) if row else 0

    def search(self, query: str, limit: int = 20, topic_id: str | None = None) -> list[Message]:
        """Messages whose text contains ``query``, newest first.

        Matching is a LIKE substring test: ``%`` and ``_`` match themselves, and case is ignored
        for ASCII letters (SQLite's LIKE does not fold other scripts).
        """
        if not query.strip():
            return []
        sql = f"SELECT {_COLUMNS} FROM messages WHERE content LIKE ? ESCAPE '\\'"
        params: list[Any] = [like_pattern(query)]
        if topic_id is not None:
            sql += " AND topic_id = ?"
            params.append(topic_id)
        rows = self._db.query(sql + " ORDER BY id DESC LIMIT ?", [*params, max(0, int(limit))])
        return [_message(row) for row in rows]

    def delete_after(self, topic_id: str, message_id: int, inclusive: bool = False) -> int:
        """Drop the messages after ``message_id`` (and it too if ``inclusive``); return how many.

        Used to edit a message or regenerate an answer: the conversation continues from there.
        """
        op = ">=" if inclusive else ">"
        cursor = self._db.execute(
            f"DELETE FROM messages WHERE topic_id = ? AND id {op} ?", (topic_id, int(message_id))
        )
        return cursor.rowcount

    def tool_runs(self, since: float = 0.0) -> list[ToolRun]:
        """The tool messages stored since ``since`` (seconds), in the order the calls ran within
        each topic: what the evolution pass counts."""
        rows = self._db.query(
            "SELECT topic_id, name, status, duration, created_at FROM messages "
            "WHERE role = 'tool' AND created_at >= ? ORDER BY topic_id, id",
            (float(since),),
        )
        return [
            ToolRun(r["topic_id"], r["name"] or "?", r["status"], r["duration"], r["created_at"])
            for r in rows
        ]


@dataclasses.dataclass(frozen=True)
class ToolRun:
    """One stored tool call: its tool, how it ended (``ok``, ``failed``, ``stopped``; None
    before outcomes were stored) and how long it ran."""

    topic_id: str
    name: str
    status: str | None
    duration: float | None
    created_at: float


def _limit(limit: int | None) -> list[int]:
    return [] if limit is None else [max(0, int(limit))]


def _encode(message: Message) -> tuple[str | None, str | None, str | None]:
    """(content text, parts JSON, tool_calls JSON) for the row."""
    content = message.content
    try:
        if content is None or isinstance(content, str):
            text, parts = content, None
        elif isinstance(content, list):
            text, parts = message.text, json.dumps(content, ensure_ascii=False)
        else:
            kind = type(content).__name__
            raise TypeError(f"content must be text or a list of parts, not {kind}")
        calls = None
        if message.tool_calls:
            encoded = [
                {"id": c.id, "name": c.name, "arguments": c.arguments} for c in message.tool_calls
            ]
            calls = json.dumps(encoded, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise StoreError(f"cannot store the {message.role} message: {exc}") from exc
    return text, parts, calls


def _message(row: Row) -> Message:
    try:
        content = json.loads(row["parts"]) if row["parts"] is not None else row["content"]
        raw_calls = json.loads(row["tool_calls"]) if row["tool_calls"] else []
        calls = tuple(ToolCall(c["id"], c["name"], c["arguments"]) for c in raw_calls)
    except (ValueError, TypeError, KeyError) as exc:
        raise StoreError(f"message {row['id']} is damaged in the store: {exc}") from exc
    return Message(
        role=row["role"],
        content=content,
        reasoning=row["reasoning"],
        tool_calls=calls,
        tool_call_id=row["tool_call_id"],
        name=row["name"],
        id=row["id"],
        topic_id=row["topic_id"],
        tokens=row["tokens"],
        created_at=row["created_at"],
        status=row["status"],
        error=row["error"],
        duration=row["duration"],
    )
