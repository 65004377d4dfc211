"""What the repositories see of a database: :class:`Database`, its rows and its write results.

Two backends implement it: SQLite (``sqlite.py``, the default: one file, one connection) and
PostgreSQL (``postgres.py``, through pg8000, for several instances on one database).
:meth:`Database.open` picks one from its target: a ``postgresql://`` URL, or a file path. The
repositories write one SQL, SQLite's, with ``?`` placeholders; on PostgreSQL ``dialect.py``
translates it, and the few statements that truly differ (full-text search) branch on
:attr:`Database.dialect`. Neither backend's driver is imported before it is opened.
"""

from __future__ import annotations

import os
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, ClassVar, Protocol

__all__ = ["Database", "Result", "Row", "is_postgres_url", "like_pattern"]

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


class Row(Protocol):
    """A result row: by index, by column name, iterable (``sqlite3.Row`` is one)."""

    def __getitem__(self, key: int | str, /) -> Any: ...
    def __iter__(self) -> Iterator[Any]: ...
    def __len__(self) -> int: ...


class Result(Protocol):
    """What a write returns: rows changed, and the id of the row an INSERT made (or None)."""

    @property
    def rowcount(self) -> int: ...
    @property
    def lastrowid(self) -> int | None: ...


def like_pattern(text: str) -> str:
    """``text`` as a LIKE pattern matching it anywhere; use with ``ESCAPE '\\'``."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def is_postgres_url(target: str | os.PathLike[str]) -> bool:
    return isinstance(target, str) and target.startswith(POSTGRES_SCHEMES)


class Database(ABC):
    """A connection (or a pool of them) shared by every repository and safe across threads.

    Errors leave as :class:`StoreError` naming :attr:`location` (never a password). SQL goes
    through :meth:`query`, :meth:`query_one`, :meth:`execute` and :meth:`transaction`; a
    transaction holds back every other transaction until it ends, on both backends: keep it short.
    """

    dialect: ClassVar[str]  # "sqlite" or "postgresql"
    elsewhere: ClassVar[str]  # how to use another store, for the errors that refuse this one

    def __init__(self, location: str, path: Path | None = None) -> None:
        self.location = location  # the file, or the URL without credentials
        self.path = path  # the file (SQLite only)
        self._clock = threading.Lock()
        self._last_time = 0.0

    @staticmethod
    def open(target: str | os.PathLike[str]) -> Database:
        """A ``postgresql://`` URL opens PostgreSQL, anything else is an SQLite file path.

        Raises:
            StoreError: the database cannot be opened (see each backend's ``connect``).
        """
        if is_postgres_url(target):
            from .postgres import PostgresDatabase

            return PostgresDatabase.connect(str(target))
        from .sqlite import SQLiteDatabase

        return SQLiteDatabase.connect(target)

    def now(self) -> float:
        """Wall-clock time, strictly increasing across calls so "newest first" never ties."""
        with self._clock:
            # coarse clocks (15 ms on Windows) would give two quick updates the same stamp
            stamp = max(time.time(), self._last_time + 1e-6)
            self._last_time = stamp
            return stamp

    @abstractmethod
    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """Run a SELECT and return every row."""

    @abstractmethod
    def query_one(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        """Run a SELECT and return its first row, or None."""

    @abstractmethod
    def execute(self, sql: str, params: Sequence[Any] = ()) -> Result:
        """Run a write; read ``rowcount`` / ``lastrowid`` from the result."""

    @abstractmethod
    def transaction(self) -> AbstractContextManager[Database]:
        """Run the block atomically; nested blocks become savepoints."""

    @abstractmethod
    def data_version(self, table: str = "") -> int:
        """A number that changes when another connection commits (it may change for other
        reasons too: a change means "read again", never "something surely changed").
        ``table`` narrows it to that table's changes where the backend can (PostgreSQL, for
        the tables with a change counter); SQLite's one number covers every table.
        """

    origin = ""  # signs the writes made through this object in PostgreSQL's change notifications

    def listen(self, channel: str, callback: Callable[[str | None], None]) -> Callable[[], None]:
        """Call ``callback(payload)`` on each notification of ``channel`` from another
        process; returns the function that unsubscribes. SQLite has no notifications: the
        callback is never called (its users poll)."""
        return lambda: None

    @abstractmethod
    def schema_version(self) -> int:
        """The last migration recorded (0: none)."""

    @abstractmethod
    def record_migration(self, version: int, name: str) -> None:
        """Record that migration ``version`` ran; call it inside that migration's transaction."""

    @abstractmethod
    def tables(self) -> list[str]:
        """The names of the tables in the database (the backend's own ones left out)."""

    @abstractmethod
    def enable_wal(self) -> None:
        """Called once the schema is up to date; SQLite switches to WAL mode here."""

    @abstractmethod
    def close(self) -> None:
        """Close; safe to call twice, later calls raise StoreError."""

    @property
    @abstractmethod
    def closed(self) -> bool: ...
