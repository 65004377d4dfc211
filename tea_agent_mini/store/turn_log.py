"""Turns shared by several server instances (PostgreSQL only; SQLite's one server keeps them in
memory): each session's event log, its queue of waiting messages and its lease.

* ``turn_events``: what the turns emitted, ``(topic_id, id)`` with ids increasing per session
  (the instance that holds the lease writes them; a new holder starts above the stored ones);
* ``turn_queue``: the messages waiting for their turn, oldest first;
* ``session_leases``: which instance runs the session's turns (and which turn) until
  ``expires_at``; the holder renews it, and an expired lease is anyone's to take.

* ``turn_commands``: an abort or an answer for the turn a lease holder runs, sent by another
  instance (``server/turn_commands.py``).

Writers call ``pg_notify`` on :data:`CHANNEL` with the session id, so the instances that
follow the session wake up (``server/shared_turns.py`` listens); commands and their replies
are announced on :data:`COMMANDS` with a small JSON object naming the instance they are for.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass

from .database import Database, Row

__all__ = [
    "CHANNEL",
    "COMMANDS",
    "Claim",
    "Holder",
    "SessionRow",
    "StoredEvent",
    "TurnLogRepository",
]

CHANNEL = "tea_turns"
COMMANDS = "tea_turn_commands"
BATCH_ROWS = 200  # rows per INSERT (5 parameters each)


@dataclass(frozen=True)
class StoredEvent:
    id: int
    turn: str
    event: str  # JSON (server/shared_turns.py encodes it)


@dataclass(frozen=True)
class Holder:
    owner: str
    turn: str | None


@dataclass(frozen=True)
class SessionRow:
    """What the database knows of a session's turns."""

    leased: bool  # a live lease naming its turn: the turn has not logged its end
    running: str | None
    queued: int


@dataclass(frozen=True)
class Claim:
    """The outcome of trying to take a session's lease."""

    taken: bool
    dead_turn: str | None  # the turn an expired lease was running (it never finished)
    last_id: int  # the highest stored event id of the session (new ids go above it)


class TurnLogRepository:
    def __init__(self, db: Database) -> None:
        self._db = db

    @property
    def shared(self) -> bool:
        return self._db.dialect == "postgresql"

    # -- events ------------------------------------------------------------------------------

    def append(self, rows: Sequence[tuple[str, int, str, str]], ended: Sequence[str] = ()) -> None:
        """Store ``(topic_id, id, turn, event_json)`` rows and wake the followers. The turns in
        ``ended`` logged their last event among the rows: their leases stop naming them in the
        same transaction, so whoever reads that event also reads the session as idle."""
        now = time.time()
        with self._db.transaction():
            for start in range(0, len(rows), BATCH_ROWS):
                chunk = rows[start : start + BATCH_ROWS]
                values = ", ".join("(?, ?, ?, ?, ?)" for _ in chunk)
                params = [
                    v for topic, id_, turn, event in chunk for v in (topic, id_, turn, event, now)
                ]
                self._db.execute(
                    "INSERT INTO turn_events (topic_id, id, turn, event, created_at) "
                    f"VALUES {values} ON CONFLICT DO NOTHING",
                    params,
                )
            sessions = {turn: topic for topic, _, turn, _ in rows}
            for turn in ended:
                self._db.execute(
                    "UPDATE session_leases SET turn = NULL WHERE topic_id = ? AND turn = ?",
                    (sessions[turn], turn),
                )
        self.notify({row[0] for row in rows})

    def notify(self, topics: set[str]) -> None:
        if self.shared:
            for topic in sorted(topics):
                self._db.query("SELECT pg_notify(?, ?)", (CHANNEL, topic))

    def after(self, topic_id: str, since: int, limit: int = 1000) -> list[StoredEvent]:
        rows = self._db.query(
            "SELECT id, turn, event FROM turn_events WHERE topic_id = ? AND id > ? "
            "ORDER BY id LIMIT ?",
            (topic_id, since, limit),
        )
        return [StoredEvent(int(r[0]), str(r[1]), str(r[2])) for r in rows]

    def last_id(self, topic_id: str) -> int:
        row = self._db.query_one(
            "SELECT COALESCE(MAX(id), 0) FROM turn_events WHERE topic_id = ?", (topic_id,)
        )
        return int(row[0]) if row else 0

    def turn_start_id(self, topic_id: str) -> int:
        """The id just before the first event of the session's last turn (0: none)."""
        row = self._db.query_one(
            "SELECT turn FROM turn_events WHERE topic_id = ? ORDER BY id DESC LIMIT 1",
            (topic_id,),
        )
        if row is None:
            return 0
        first = self._db.query_one(
            "SELECT MIN(id) FROM turn_events WHERE topic_id = ? AND turn = ?",
            (topic_id, row[0]),
        )
        return int(first[0]) - 1 if first and first[0] is not None else 0

    def trim(self, topic_id: str, keep_turns: int) -> None:
        """Drop the events of all but the session's last ``keep_turns`` turns."""
        self._db.execute(
            "DELETE FROM turn_events WHERE topic_id = ? AND turn NOT IN (SELECT turn FROM "
            "(SELECT turn, MAX(id) AS last FROM turn_events WHERE topic_id = ? GROUP BY turn "
            "ORDER BY last DESC LIMIT ?) AS kept)",
            (topic_id, topic_id, keep_turns),
        )

    # -- the queue and the lease ---------------------------------------------------------------

    def busy(self, topic_id: str) -> bool:
        """A live lease running a turn, or messages waiting."""
        row = self._db.query_one(
            "SELECT (SELECT COUNT(*) FROM session_leases WHERE topic_id = ? AND expires_at > ?"
            " AND turn IS NOT NULL)"
            " + (SELECT COUNT(*) FROM turn_queue WHERE topic_id = ?)",
            (topic_id, time.time(), topic_id),
        )
        return bool(row and row[0])

    def enqueue(self, topic_id: str, item_id: str, item: str) -> int:
        """Queue a message; its place in the line: 0 when nothing runs or waits before it."""
        with self._db.transaction():
            self._db.execute(
                "INSERT INTO turn_queue (id, topic_id, item, created_at) VALUES (?, ?, ?, ?)",
                (item_id, topic_id, item, self._db.now()),
            )
            row = self._db.query_one(
                "SELECT (SELECT COUNT(*) FROM turn_queue WHERE topic_id = ?), (SELECT COUNT(*) "
                "FROM session_leases WHERE topic_id = ? AND expires_at > ? AND turn IS NOT NULL)",
                (topic_id, topic_id, time.time()),
            )
        self.notify({topic_id})
        waiting, running = (int(row[0]), int(row[1])) if row else (1, 0)
        return waiting if running else waiting - 1

    def claim(self, topic_id: str, owner: str, ttl: float) -> Claim:
        """Take the lease unless another owner holds it unexpired; renewing one's own keeps
        its turn. ``dead_turn``: the turn a taken-over expired lease was running."""
        now = time.time()
        with self._db.transaction():
            row = self._db.query_one(
                "SELECT owner, turn, expires_at FROM session_leases WHERE topic_id = ?",
                (topic_id,),
            )
            if row is not None and row[0] != owner and float(row[2]) > now:
                return Claim(False, None, 0)
            dead = str(row[1]) if row is not None and row[0] != owner and row[1] else None
            if row is None:
                self._db.execute(
                    "INSERT INTO session_leases (topic_id, owner, turn, expires_at) "
                    "VALUES (?, ?, NULL, ?)",
                    (topic_id, owner, now + ttl),
                )
            else:
                turn = None if row[0] != owner else row[1]
                self._db.execute(
                    "UPDATE session_leases SET owner = ?, turn = ?, expires_at = ? "
                    "WHERE topic_id = ?",
                    (owner, turn, now + ttl, topic_id),
                )
            return Claim(True, dead, self.last_id(topic_id))

    def next_item(self, topic_id: str, owner: str, ttl: float) -> str | None:
        """The oldest queued message (removed from the queue, and named the lease's turn), or
        None: the queue is empty and the lease is released. Only the lease holder calls it."""
        with self._db.transaction():
            row = self._db.query_one(
                "SELECT id, item FROM turn_queue WHERE topic_id = ? ORDER BY created_at, id "
                "LIMIT 1",
                (topic_id,),
            )
            if row is None:
                self._db.execute(
                    "DELETE FROM session_leases WHERE topic_id = ? AND owner = ?",
                    (topic_id, owner),
                )
                return None
            self._db.execute("DELETE FROM turn_queue WHERE id = ?", (row[0],))
            self._db.execute(
                "UPDATE session_leases SET turn = ?, expires_at = ? WHERE topic_id = ? "
                "AND owner = ?",
                (row[0], time.time() + ttl, topic_id, owner),
            )
            return str(row[1])

    def renew(self, owner: str, ttl: float) -> list[str]:
        """Extend every lease ``owner`` holds; the sessions they are for."""
        self._db.execute(
            "UPDATE session_leases SET expires_at = ? WHERE owner = ?", (time.time() + ttl, owner)
        )
        rows = self._db.query("SELECT topic_id FROM session_leases WHERE owner = ?", (owner,))
        return [str(r[0]) for r in rows]

    def release(self, topic_id: str, owner: str) -> None:
        self._db.execute(
            "DELETE FROM session_leases WHERE topic_id = ? AND owner = ?", (topic_id, owner)
        )

    def orphans(self) -> list[str]:
        """Sessions nobody runs: an expired lease, or messages waiting without a lease."""
        rows = self._db.query(
            "SELECT topic_id FROM session_leases WHERE expires_at < ? UNION "
            "SELECT DISTINCT topic_id FROM turn_queue WHERE topic_id NOT IN "
            "(SELECT topic_id FROM session_leases)",
            (time.time(),),
        )
        return [str(r[0]) for r in rows]

    def queued(self, topic_id: str) -> list[Row]:
        """``(id, item, created_at)`` of the waiting messages, oldest first."""
        return self._db.query(
            "SELECT id, item, created_at FROM turn_queue WHERE topic_id = ? "
            "ORDER BY created_at, id",
            (topic_id,),
        )

    def running(self, topic_id: str) -> str | None:
        """The turn a live lease runs."""
        row = self._db.query_one(
            "SELECT turn FROM session_leases WHERE topic_id = ? AND expires_at > ?",
            (topic_id, time.time()),
        )
        return str(row[0]) if row and row[0] else None

    def pending(self, topic_id: str, turn: str) -> bool:
        """Whether the turn waits in the queue or is the lease's (even an expired one's)."""
        row = self._db.query_one(
            "SELECT (SELECT COUNT(*) FROM turn_queue WHERE topic_id = ? AND id = ?) + "
            "(SELECT COUNT(*) FROM session_leases WHERE topic_id = ? AND turn = ?)",
            (topic_id, turn, topic_id, turn),
        )
        return bool(row and row[0])

    def cancel(self, topic_id: str, item_id: str) -> bool:
        done = self._db.execute(
            "DELETE FROM turn_queue WHERE topic_id = ? AND id = ?", (topic_id, item_id)
        )
        return done.rowcount > 0

    def holder(self, topic_id: str) -> Holder | None:
        """Who holds the session's live lease, and the turn it runs."""
        row = self._db.query_one(
            "SELECT owner, turn FROM session_leases WHERE topic_id = ? AND expires_at > ?",
            (topic_id, time.time()),
        )
        return Holder(str(row[0]), str(row[1]) if row[1] else None) if row else None

    def states(self, topic_ids: Sequence[str]) -> dict[str, SessionRow]:
        """The live lease running a turn and the waiting messages of each session, in one
        query."""
        if not topic_ids:
            return {}
        marks = ", ".join("?" for _ in topic_ids)
        rows = self._db.query(
            f"SELECT topic_id, 'lease', turn, 0 FROM session_leases WHERE topic_id IN ({marks}) "
            f"AND expires_at > ? AND turn IS NOT NULL UNION ALL SELECT topic_id, 'queue', NULL, "
            f"COUNT(*) FROM turn_queue WHERE topic_id IN ({marks}) GROUP BY topic_id",
            (*topic_ids, time.time(), *topic_ids),
        )
        found: dict[str, SessionRow] = {}
        for topic, kind, turn, count in rows:
            state = found.get(str(topic), SessionRow(False, None, 0))
            if kind == "lease":
                state = SessionRow(True, str(turn) if turn else None, state.queued)
            else:
                state = SessionRow(state.leased, state.running, int(count))
            found[str(topic)] = state
        return found

    def with_prefix(self, topic_id: str, prefix: str) -> list[StoredEvent]:
        """The session's stored events whose JSON starts with ``prefix`` (no ``%`` or ``_``)."""
        rows = self._db.query(
            "SELECT id, turn, event FROM turn_events WHERE topic_id = ? AND event LIKE ? "
            "ORDER BY id",
            (topic_id, prefix + "%"),
        )
        return [StoredEvent(int(r[0]), str(r[1]), str(r[2])) for r in rows]

    # -- commands to the lease holder ----------------------------------------------------------

    def send_command(self, command_id: str, topic_id: str, owner: str, command: str) -> None:
        """Leave a command (JSON) for ``owner`` and tell it on :data:`COMMANDS`."""
        self._db.execute(
            "INSERT INTO turn_commands (id, topic_id, owner, command, created_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (command_id, topic_id, owner, command, time.time()),
        )
        self.signal({"to": owner})

    def take_commands(self, owner: str) -> list[tuple[str, str, str]]:
        """``(id, topic_id, command)`` of the commands left for ``owner``, oldest first; each
        is taken once, whoever else asks at the same time."""
        rows = self._db.query(
            "DELETE FROM turn_commands WHERE owner = ? RETURNING id, topic_id, command, created_at",
            (owner,),
        )
        rows = sorted(rows, key=lambda r: float(r[3]))
        return [(str(r[0]), str(r[1]), str(r[2])) for r in rows]

    def drop_commands(self, before: float) -> None:
        """Forget the commands nobody took (their instance is gone)."""
        self._db.execute("DELETE FROM turn_commands WHERE created_at < ?", (before,))

    def signal(self, message: dict[str, object]) -> None:
        if self.shared:
            self._db.query("SELECT pg_notify(?, ?)", (COMMANDS, json.dumps(message)))
