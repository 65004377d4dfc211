"""L2 and L3 records: the ring of past turn pairs and the rolling summary of each topic.

Why two tables (migration 4) and not ``store.state``: the ring holds up to ~50 pairs of a few
kilobytes each and changes every turn. As one JSON value in ``state`` every turn would rewrite and
every context build would re-read and re-parse the whole ring; as rows, a turn inserts one pair,
a summary deletes the pairs it folded in and upserts one summary row, all in one transaction.
Rows also follow deletions for free: ``ON DELETE CASCADE`` from the topic, and from the pair's
user message, so editing or regenerating a message (``messages.delete_after``) drops the pairs
of the turns that no longer exist.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import StoreError

if TYPE_CHECKING:
    from ..store.database import Database, Row

__all__ = ["REQUEST_PAIRS", "ContextRecords", "ToolUse", "TopicSummary", "TurnPair"]


@dataclass(frozen=True)
class ToolUse:
    name: str
    ok: bool = True


@dataclass(frozen=True)
class TurnPair:
    """One finished turn, as L2 remembers it: the question, the final answer and a little more.

    ``terms`` are the keyword terms of the pair (see ``terms.py``), computed once when the
    pair is recorded so that scoring a new message against the ring stays cheap.
    """

    user_message_id: int
    user_text: str
    answer_text: str
    thinking: str = ""
    files: tuple[str, ...] = ()
    tools: tuple[ToolUse, ...] = ()
    terms: frozenset[str] = frozenset()
    answer_message_id: int | None = None
    created_at: float = 0.0
    id: int | None = None


@dataclass(frozen=True)
class TopicSummary:
    """L3 of a topic: the model's sectioned summary plus a tool-chain recap counted exactly.

    ``tool_counts`` maps a tool name to (calls, failures) over every summarised turn. ``retry_at``
    is when the next summary attempt may start: it is set before each attempt (a lease, so a job
    killed at its time cap is not retried at once) and pushed back after each failure.
    """

    topic_id: str
    content: str = ""
    tool_counts: dict[str, tuple[int, int]] = field(default_factory=dict)
    files: tuple[str, ...] = ()
    pairs_covered: int = 0
    last_message_id: int = 0
    updated_at: float = 0.0
    failures: int = 0
    retry_at: float = 0.0
    last_error: str = ""


REQUEST_PAIRS = 100  # twice summary.RING_LIMIT: every pair a working ring holds, and a cap
_PAIR_COLUMNS = (
    "id, user_message_id, answer_message_id, user_text, answer_text, thinking, files, tools, "
    "terms, created_at"
)
_SUMMARY_COLUMNS = (
    "topic_id, content, tool_recap, pairs_covered, last_message_id, updated_at, failures, "
    "retry_at, last_error"
)


class ContextRecords:
    """Read and write the pairs and summaries; takes the store's :class:`Database`."""

    def __init__(self, db: Database) -> None:
        self._db = db

    # -- L2 pairs ----------------------------------------------------------------------------

    def pairs(self, topic_id: str, limit: int | None = None) -> list[TurnPair]:
        """The topic's ring, oldest first; ``limit`` keeps the newest n.

        The ring stays near ``summary.RING_LIMIT`` pairs only while summaries succeed (without
        a cheap model, or while it fails, it keeps growing), so a request reads a bounded
        ``limit`` (:data:`REQUEST_PAIRS`) through the (topic_id, user_message_id) index.
        """
        sql = f"SELECT {_PAIR_COLUMNS} FROM context_pairs WHERE topic_id = ? "
        if limit is None:
            rows = self._db.query(sql + "ORDER BY user_message_id", (topic_id,))
        else:
            rows = self._db.query(
                sql + "ORDER BY user_message_id DESC LIMIT ?", (topic_id, max(0, int(limit)))
            )
            rows.reverse()
        return [_pair(row) for row in rows]

    def count(self, topic_id: str) -> int:
        row = self._db.query_one(
            "SELECT COUNT(*) FROM context_pairs WHERE topic_id = ?", (topic_id,)
        )
        return int(row[0]) if row else 0

    def record_start(self, topic_id: str) -> int:
        """The smallest user message id whose turn should be (re)recorded.

        The newest recorded turn is recorded again (its answer may have been regenerated); a
        turn already folded into the summary never is.
        """
        row = self._db.query_one(
            "SELECT (SELECT MAX(user_message_id) FROM context_pairs WHERE topic_id = ?), "
            "(SELECT last_message_id FROM context_summaries WHERE topic_id = ?)",
            (topic_id, topic_id),
        )
        newest = int(row[0] or 0) if row else 0
        summarised = int(row[1] or 0) if row else 0
        return max(newest, summarised + 1)

    def save_pairs(self, topic_id: str, pairs: list[TurnPair], now: float) -> int:
        """Insert the pairs, replacing any recorded for the same user message; return how many."""
        with self._db.transaction() as tx:
            for pair in pairs:
                tx.execute(
                    "INSERT INTO context_pairs (topic_id, user_message_id, answer_message_id, "
                    "user_text, answer_text, thinking, files, tools, terms, created_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (topic_id, user_message_id) DO UPDATE SET "
                    "answer_message_id = excluded.answer_message_id, "
                    "user_text = excluded.user_text, answer_text = excluded.answer_text, "
                    "thinking = excluded.thinking, files = excluded.files, "
                    "tools = excluded.tools, terms = excluded.terms",
                    _pair_values(topic_id, pair, now),
                )
        return len(pairs)

    # -- L3 summary --------------------------------------------------------------------------

    def summary(self, topic_id: str) -> TopicSummary | None:
        row = self._db.query_one(
            f"SELECT {_SUMMARY_COLUMNS} FROM context_summaries WHERE topic_id = ?", (topic_id,)
        )
        return _summary(row) if row else None

    def reserve_summary(self, topic_id: str, retry_at: float, now: float) -> None:
        """Mark an attempt as started: no other attempt before ``retry_at``."""
        self._db.execute(
            "INSERT INTO context_summaries (topic_id, updated_at, retry_at) VALUES (?, ?, ?) "
            "ON CONFLICT (topic_id) DO UPDATE SET retry_at = excluded.retry_at",
            (topic_id, now, retry_at),
        )

    def note_failure(self, topic_id: str, error: str, retry_at: float) -> None:
        self._db.execute(
            "UPDATE context_summaries SET failures = failures + 1, retry_at = ?, last_error = ? "
            "WHERE topic_id = ?",
            (retry_at, error[:500], topic_id),
        )

    def apply_summary(self, summary: TopicSummary, folded: list[TurnPair]) -> None:
        """Store the new summary and drop the pairs it now covers, atomically."""
        ids = [pair.id for pair in folded if pair.id is not None]
        recap = {"tools": summary.tool_counts, "files": list(summary.files)}
        with self._db.transaction() as tx:
            tx.execute(
                "INSERT INTO context_summaries (topic_id, content, tool_recap, pairs_covered, "
                "last_message_id, updated_at, failures, retry_at, last_error) "
                "VALUES (?, ?, ?, ?, ?, ?, 0, 0, '') ON CONFLICT (topic_id) DO UPDATE SET "
                "content = excluded.content, tool_recap = excluded.tool_recap, "
                "pairs_covered = excluded.pairs_covered, "
                "last_message_id = excluded.last_message_id, updated_at = excluded.updated_at, "
                "failures = 0, retry_at = 0, last_error = ''",
                (
                    summary.topic_id,
                    summary.content,
                    json.dumps(recap, ensure_ascii=False),
                    summary.pairs_covered,
                    summary.last_message_id,
                    summary.updated_at,
                ),
            )
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                marks = ", ".join("?" * len(chunk))
                tx.execute(f"DELETE FROM context_pairs WHERE id IN ({marks})", chunk)


def _pair_values(topic_id: str, pair: TurnPair, now: float) -> tuple[Any, ...]:
    tools = [[use.name, use.ok] for use in pair.tools]
    return (
        topic_id,
        pair.user_message_id,
        pair.answer_message_id,
        pair.user_text,
        pair.answer_text,
        pair.thinking,
        json.dumps(list(pair.files), ensure_ascii=False),
        json.dumps(tools, ensure_ascii=False),
        " ".join(sorted(pair.terms)),
        pair.created_at or now,
    )


def _pair(row: Row) -> TurnPair:
    try:
        files = tuple(str(f) for f in json.loads(row["files"]))
        tools = tuple(ToolUse(str(name), bool(ok)) for name, ok in json.loads(row["tools"]))
    except (ValueError, TypeError) as exc:
        raise StoreError(f"context pair {row['id']} is damaged in the store: {exc}") from exc
    return TurnPair(
        id=row["id"],
        user_message_id=row["user_message_id"],
        answer_message_id=row["answer_message_id"],
        user_text=row["user_text"],
        answer_text=row["answer_text"],
        thinking=row["thinking"],
        files=files,
        tools=tools,
        terms=frozenset(row["terms"].split()),
        created_at=row["created_at"],
    )


def _summary(row: Row) -> TopicSummary:
    try:
        recap = json.loads(row["tool_recap"] or "{}")
        counts = {str(k): (int(v[0]), int(v[1])) for k, v in recap.get("tools", {}).items()}
        files = tuple(str(f) for f in recap.get("files", []))
    except (ValueError, TypeError, AttributeError, IndexError) as exc:
        topic = row["topic_id"]
        raise StoreError(f"the context summary of {topic} is damaged in the store: {exc}") from exc
    return TopicSummary(
        topic_id=row["topic_id"],
        content=row["content"],
        tool_counts=counts,
        files=files,
        pairs_covered=row["pairs_covered"],
        last_message_id=row["last_message_id"],
        updated_at=row["updated_at"],
        failures=row["failures"],
        retry_at=row["retry_at"],
        last_error=row["last_error"],
    )
