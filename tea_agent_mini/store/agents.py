"""Messages between agents (inboxes) and the team's members (teammates).

An inbox is an address: a teammate's name, ``lead`` (the user's side of the team), or
``topic:<id>`` (a session, where an async subagent's result arrives). Reading an inbox marks
what it returned as read. A teammate's status survives a restart, so a process that starts
marks every teammate that was running ``offline`` until it is spawned again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import StoreError
from .database import Database

if TYPE_CHECKING:
    from .database import Row

__all__ = [
    "MESSAGE_KINDS",
    "TEAMMATE_STATUSES",
    "AgentMessage",
    "InboxRepository",
    "Teammate",
    "TeammateRepository",
]

MESSAGE_KINDS = (
    "message",
    "broadcast",
    "result",
    "shutdown_request",
    "shutdown_response",
    "plan_approval",
)
TEAMMATE_STATUSES = ("working", "idle", "offline", "shutdown")
MAX_UNREAD = 200  # read at once at most; the rest stays for the next read


@dataclass
class AgentMessage:
    id: int
    created_at: float
    sender: str
    recipient: str
    kind: str
    text: str
    data: dict[str, Any] = field(default_factory=dict)
    read_at: float | None = None


@dataclass
class Teammate:
    name: str
    role: str
    prompt: str
    agent: str | None
    topic_id: str | None
    status: str
    created_at: float
    updated_at: float


class InboxRepository:
    """Send messages to addresses; read an address's unread messages."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def send(
        self,
        sender: str,
        recipient: str,
        text: str,
        kind: str = "message",
        data: dict[str, Any] | None = None,
    ) -> AgentMessage:
        """Raises StoreError for an unknown kind or data that is not JSON."""
        if kind not in MESSAGE_KINDS:
            raise StoreError(f"unknown message kind {kind!r}; expected one of {MESSAGE_KINDS}")
        try:
            encoded = json.dumps(data or {}, ensure_ascii=False)
        except (TypeError, ValueError) as exc:
            raise StoreError(f"message data is not JSON-serialisable: {exc}") from exc
        now = self._db.now()
        cursor = self._db.execute(
            "INSERT INTO agent_messages (created_at, sender, recipient, kind, text, data) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (now, sender, recipient, kind, text, encoded),
        )
        message_id = int(cursor.lastrowid or 0)
        return AgentMessage(message_id, now, sender, recipient, kind, text, data or {})

    def unread_count(self, recipient: str) -> int:
        row = self._db.query_one(
            "SELECT COUNT(*) FROM agent_messages WHERE recipient = ? AND read_at IS NULL",
            (recipient,),
        )
        return int(row[0]) if row else 0

    def read(self, recipient: str, *, peek: bool = False) -> list[AgentMessage]:
        """The unread messages of ``recipient``, oldest first; marked read unless ``peek``."""
        with self._db.transaction():
            rows = self._db.query(
                "SELECT * FROM agent_messages WHERE recipient = ? AND read_at IS NULL "
                "ORDER BY id LIMIT ?",
                (recipient, MAX_UNREAD),
            )
            if rows and not peek:
                now = self._db.now()
                ids = [row["id"] for row in rows]
                marks = ", ".join("?" * len(ids))
                self._db.execute(
                    f"UPDATE agent_messages SET read_at = ? WHERE id IN ({marks})", (now, *ids)
                )
        return [_message(row) for row in rows]

    def recent(self, recipient: str | None = None, limit: int = 50) -> list[AgentMessage]:
        """Messages read or not, newest first; of one address when ``recipient`` is given."""
        where, params = ("WHERE recipient = ?", [recipient]) if recipient else ("", [])
        rows = self._db.query(
            f"SELECT * FROM agent_messages {where} ORDER BY id DESC LIMIT ?",
            (*params, max(0, int(limit))),
        )
        return [_message(row) for row in rows]


class TeammateRepository:
    """The team: one row per teammate, its status kept across restarts."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def add(self, name: str, role: str, prompt: str, agent: str | None, topic_id: str) -> Teammate:
        """Raises StoreError when the name is taken."""
        now = self._db.now()
        with self._db.transaction():
            if self.get(name) is not None:
                raise StoreError(f"a teammate named {name!r} already exists")
            self._db.execute(
                "INSERT INTO teammates (name, role, prompt, agent, topic_id, status, created_at, "
                "updated_at) VALUES (?, ?, ?, ?, ?, 'idle', ?, ?)",
                (name, role, prompt, agent, topic_id, now, now),
            )
        return Teammate(name, role, prompt, agent, topic_id, "idle", now, now)

    def get(self, name: str) -> Teammate | None:
        row = self._db.query_one("SELECT * FROM teammates WHERE name = ?", (name,))
        return _teammate(row) if row else None

    def all(self) -> list[Teammate]:
        return [_teammate(row) for row in self._db.query("SELECT * FROM teammates ORDER BY name")]

    def set_status(self, name: str, status: str) -> None:
        if status not in TEAMMATE_STATUSES:
            raise StoreError(f"unknown status {status!r}; expected one of {TEAMMATE_STATUSES}")
        self._db.execute(
            "UPDATE teammates SET status = ?, updated_at = ? WHERE name = ?",
            (status, self._db.now(), name),
        )

    def set_topic(self, name: str, topic_id: str) -> None:
        """A teammate revived after its topic was deleted works in a new one."""
        self._db.execute(
            "UPDATE teammates SET topic_id = ?, updated_at = ? WHERE name = ?",
            (topic_id, self._db.now(), name),
        )

    def mark_offline(self) -> int:
        """At start: teammates another process was running are offline until spawned again."""
        cursor = self._db.execute(
            "UPDATE teammates SET status = 'offline', updated_at = ? "
            "WHERE status IN ('working', 'idle')",
            (self._db.now(),),
        )
        return cursor.rowcount

    def remove(self, name: str) -> bool:
        return self._db.execute("DELETE FROM teammates WHERE name = ?", (name,)).rowcount > 0


def _message(row: Row) -> AgentMessage:
    try:
        data = json.loads(row["data"] or "{}")
    except ValueError:
        data = {}
    return AgentMessage(
        id=row["id"],
        created_at=row["created_at"],
        sender=row["sender"],
        recipient=row["recipient"],
        kind=row["kind"],
        text=row["text"],
        data=data if isinstance(data, dict) else {},
        read_at=row["read_at"],
    )


def _teammate(row: Row) -> Teammate:
    return Teammate(
        name=row["name"],
        role=row["role"],
        prompt=row["prompt"],
        agent=row["agent"],
        topic_id=row["topic_id"],
        status=row["status"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )
