"""Topics: one conversation each, with its title, profile, source, token totals and system
prompt."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import StoreError
from .database import Database, like_pattern
from .state import topic_scope

if TYPE_CHECKING:
    from .database import Row

SOURCES = ("ui", "api", "cli", "task", "subagent")
"""The front ends that make topics: the web UI, the OpenAI-compatible API, the terminal (and
the Python facade), scheduled tasks, subagents."""


@dataclass
class Topic:
    """A conversation. ``message_count`` is computed when the topic is read."""

    id: str
    title: str
    created_at: float
    updated_at: float
    profile: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    system_prompt: str | None = None
    message_count: int = 0
    archived: bool = False
    source: str = "ui"
    parent_id: str | None = None  # the topic that started this one (a subagent's parent)
    agent: str | None = None  # the identity a subagent or teammate runs as


_SELECT = """
    SELECT t.id, t.title, t.created_at, t.updated_at, t.profile, t.prompt_tokens,
           t.completion_tokens, t.system_prompt, t.archived, t.source, t.parent_id, t.agent,
           (SELECT COUNT(*) FROM messages m WHERE m.topic_id = t.id) AS message_count
    FROM topics t
"""


class TopicRepository:
    """Create, find, list and change topics. Ids are 32-character uuid4 hex strings."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def create(
        self,
        title: str = "",
        profile: str = "",
        source: str = "ui",
        *,
        parent_id: str | None = None,
        agent: str | None = None,
        system_prompt: str | None = None,
    ) -> Topic:
        """A new topic; ``source`` is one of :data:`SOURCES`. A subagent's topic names its
        parent topic and its identity, and carries the identity's prompt as its own.

        Raises:
            StoreError: an unknown source.
        """
        if source not in SOURCES:
            raise StoreError(f"unknown topic source {source!r}; expected one of {SOURCES}")
        now = self._db.now()
        topic = Topic(
            id=uuid.uuid4().hex,
            title=title,
            created_at=now,
            updated_at=now,
            profile=profile,
            source=source,
            parent_id=parent_id,
            agent=agent,
            system_prompt=system_prompt,
        )
        self._db.execute(
            "INSERT INTO topics (id, title, created_at, updated_at, profile, source, parent_id, "
            "agent, system_prompt) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (topic.id, title, now, now, profile, source, parent_id, agent, system_prompt),
        )
        return topic

    def children(self, parent_id: str) -> list[Topic]:
        """The topics a topic's subagents ran in, oldest first."""
        sql = _SELECT + " WHERE t.parent_id = ? ORDER BY t.created_at, t.rowid"
        return [_topic(row) for row in self._db.query(sql, (parent_id,))]

    def get(self, topic_id: str) -> Topic | None:
        row = self._db.query_one(_SELECT + " WHERE t.id = ?", (topic_id,))
        return _topic(row) if row else None

    def exists(self, topic_id: str) -> bool:
        """Whether the topic exists; unlike :meth:`get`, never counts its messages."""
        return self._db.query_one("SELECT 1 FROM topics WHERE id = ?", (topic_id,)) is not None

    def system_prompt(self, topic_id: str) -> str | None:
        """The topic's own system prompt (None: the profile's, or no such topic), read without
        counting its messages as :meth:`get` does (milliseconds in a topic of 100,000)."""
        row = self._db.query_one("SELECT system_prompt FROM topics WHERE id = ?", (topic_id,))
        return row[0] if row else None

    def with_id_prefix(self, prefix: str, limit: int = 10) -> list[Topic]:
        """Topics whose id starts with ``prefix`` (archived ones too), newest first."""
        sql = _SELECT + " WHERE t.id LIKE ? ESCAPE '\\' ORDER BY t.updated_at DESC LIMIT ?"
        pattern = like_pattern(prefix)[1:]  # anchored at the start: drop the leading %
        return [_topic(row) for row in self._db.query(sql, (pattern, max(0, int(limit))))]

    def recent(
        self,
        limit: int = 50,
        offset: int = 0,
        query: str | None = None,
        include_archived: bool = False,
        sources: tuple[str, ...] = (),
    ) -> list[Topic]:
        """Topics, most recently updated first; ``query`` matches titles case-insensitively,
        ``sources`` (when given) keeps the topics made by those front ends."""
        where: list[str] = []
        params: list[Any] = []
        if not include_archived:
            where.append("t.archived = 0")
        if sources:
            where.append(f"t.source IN ({', '.join('?' * len(sources))})")
            params.extend(sources)
        if query:
            where.append("t.title LIKE ? ESCAPE '\\'")
            params.append(like_pattern(query))
        sql = _SELECT + (" WHERE " + " AND ".join(where) if where else "")
        sql += " ORDER BY t.updated_at DESC, t.rowid DESC LIMIT ? OFFSET ?"
        params += [max(0, int(limit)), max(0, int(offset))]
        return [_topic(row) for row in self._db.query(sql, params)]

    def rename(self, topic_id: str, title: str) -> bool:
        return self._update(topic_id, "title = ?", title)

    def delete(self, topic_id: str) -> bool:
        """Delete the topic, its messages (cascade) and its per-topic state."""
        with self._db.transaction() as tx:
            tx.execute("DELETE FROM state WHERE scope = ?", (topic_scope(topic_id),))
            return tx.execute("DELETE FROM topics WHERE id = ?", (topic_id,)).rowcount > 0

    def delete_many(self, topic_ids: list[str]) -> list[str]:
        """Delete several topics in one transaction; returns the ids that existed."""
        deleted: list[str] = []
        with self._db.transaction() as tx:
            for topic_id in dict.fromkeys(topic_ids):
                tx.execute("DELETE FROM state WHERE scope = ?", (topic_scope(topic_id),))
                if tx.execute("DELETE FROM topics WHERE id = ?", (topic_id,)).rowcount > 0:
                    deleted.append(topic_id)
        return deleted

    def touch(self, topic_id: str) -> bool:
        """Mark the topic as just used, moving it to the top of :meth:`recent`."""
        return self._update(topic_id, "updated_at = ?", self._db.now())

    def add_usage(self, topic_id: str, prompt: int, completion: int) -> bool:
        cursor = self._db.execute(
            "UPDATE topics SET prompt_tokens = prompt_tokens + ?, "
            "completion_tokens = completion_tokens + ? WHERE id = ?",
            (int(prompt), int(completion), topic_id),
        )
        return cursor.rowcount > 0

    def set_system_prompt(self, topic_id: str, text: str | None) -> bool:
        """Give the topic its own system prompt; None returns it to the profile's."""
        return self._update(topic_id, "system_prompt = ?", text)

    def set_archived(self, topic_id: str, archived: bool = True) -> bool:
        """Hide the topic from :meth:`recent` (unless ``include_archived``) without deleting it."""
        return self._update(topic_id, "archived = ?", int(bool(archived)))

    def _update(self, topic_id: str, assignment: str, value: Any) -> bool:
        cursor = self._db.execute(f"UPDATE topics SET {assignment} WHERE id = ?", (value, topic_id))
        return cursor.rowcount > 0


def _topic(row: Row) -> Topic:
    return Topic(
        id=row["id"],
        title=row["title"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        profile=row["profile"],
        prompt_tokens=row["prompt_tokens"],
        completion_tokens=row["completion_tokens"],
        system_prompt=row["system_prompt"],
        message_count=row["message_count"],
        archived=bool(row["archived"]),
        source=row["source"],
        parent_id=row["parent_id"],
        agent=row["agent"],
    )
