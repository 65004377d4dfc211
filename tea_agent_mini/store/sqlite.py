"""The SQLite backend: one connection in WAL mode, shared by every repository across threads.

The server calls the store from worker threads, so all statements go through one connection
guarded by a re-entrant lock. A transaction holds that lock until it ends: keep them short.
``sqlite3`` is imported inside functions so that importing the package stays cheap.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import StoreError
from ..private import private_dirs, private_file, tighten
from .database import Database

if TYPE_CHECKING:
    import os
    import sqlite3

__all__ = ["SQLiteDatabase"]

log = logging.getLogger(__name__)

SQLITE_MAGIC = b"SQLite format 3\x00"
BUSY_TIMEOUT_SECONDS = 5.0


class SQLiteDatabase(Database):
    """The connection, its lock and the transaction bookkeeping.

    Every sqlite3 error leaves as :class:`StoreError` naming the file. Build one with
    :meth:`connect` (or :meth:`Database.open`).
    """

    dialect = "sqlite"
    elsewhere = "move it aside or point TEA_AGENT_HOME elsewhere"

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        super().__init__(str(path), path)
        self._conn: sqlite3.Connection | None = conn
        self._lock = threading.RLock()
        self._depth = 0

    @classmethod
    def connect(cls, path: str | os.PathLike[str]) -> SQLiteDatabase:
        """Open (or create) the file at ``path``, set the connection pragmas, read the schema.

        The file and its -wal and -shm are made 0600, a folder created for it 0700.

        Raises:
            StoreError: the directory cannot be created, the file is not an SQLite database,
                or SQLite refuses to open it. The file is never modified in those cases.
        """
        import sqlite3

        path = Path(path).expanduser()
        _refuse_foreign_file(path)
        try:
            private_dirs(path.parent)
        except OSError as exc:
            raise StoreError(f"cannot create the directory for the store {path}: {exc}") from exc
        try:
            private_file(path)
            for suffix in ("-wal", "-shm"):
                tighten(path.with_name(path.name + suffix))
        except OSError as exc:
            raise StoreError(f"cannot make the store {path} private: {exc}") from exc
        try:
            conn = sqlite3.connect(
                str(path),
                timeout=BUSY_TIMEOUT_SECONDS,
                isolation_level=None,  # we issue BEGIN/COMMIT ourselves
                check_same_thread=False,
            )
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the store {path}: {exc}") from exc
        try:
            _configure(conn)
        except sqlite3.Error as exc:
            conn.close()
            raise StoreError(
                f"cannot use the store {path}: {exc} (is it damaged? move it aside to start fresh)"
            ) from exc
        return cls(conn, path)

    @contextmanager
    def _guard(self, what: str) -> Iterator[sqlite3.Connection]:
        import sqlite3

        with self._lock:
            if self._conn is None:
                raise StoreError(f"the store {self.location} is closed")
            try:
                yield self._conn
            except sqlite3.Error as exc:
                raise StoreError(f"{what} failed on {self.location}: {exc}") from exc

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._guard("query") as conn:
            return conn.execute(sql, params).fetchall()

    def query_one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        with self._guard("query") as conn:
            return conn.execute(sql, params).fetchone()

    def execute(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        with self._guard("write") as conn:
            return conn.execute(sql, params)

    @contextmanager
    def transaction(self) -> Iterator[Database]:
        """``BEGIN IMMEDIATE`` takes the write lock up front, so two processes sharing the file
        wait (busy_timeout) instead of failing halfway through."""
        with self._guard("transaction") as conn:
            outer = self._depth == 0
            savepoint = f"sp{self._depth}"
            conn.execute("BEGIN IMMEDIATE" if outer else f"SAVEPOINT {savepoint}")
            self._depth += 1
            try:
                yield self
            except BaseException:
                self._depth -= 1
                _undo(conn, outer, savepoint)
                raise
            self._depth -= 1
            try:
                conn.execute("COMMIT" if outer else f"RELEASE {savepoint}")
            except BaseException:
                _undo(conn, outer, savepoint)
                raise

    def data_version(self, table: str = "") -> int:
        row = self.query_one("PRAGMA data_version")
        return int(row[0]) if row else 0

    def schema_version(self) -> int:
        row = self.query_one("PRAGMA user_version")
        return int(row[0]) if row else 0

    def record_migration(self, version: int, name: str) -> None:
        self.execute(f"PRAGMA user_version = {int(version)}")

    def tables(self) -> list[str]:
        rows = self.query(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' "
            "ESCAPE '\\' ORDER BY name"
        )
        return [row[0] for row in rows]

    def enable_wal(self) -> None:
        """Switch the file to WAL mode (persistent; readers no longer block the writer).

        Called only after the schema checks passed, so that a refused file is left untouched.
        """
        with self._guard("enabling WAL") as conn:
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            # some network filesystems cannot do WAL; SQLite keeps working in its old mode
            log.warning("could not switch %s to WAL (journal_mode is %s)", self.path, mode)

    def close(self) -> None:
        """Fold the WAL back into the main file and close. Safe to call twice."""
        import sqlite3

        with self._lock:
            conn, self._conn = self._conn, None
            if conn is None:
                return
            try:
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error as exc:
                # another process may still be reading; its own close will checkpoint
                log.warning("checkpoint of %s failed: %s", self.path, exc)
            finally:
                conn.close()

    @property
    def closed(self) -> bool:
        return self._conn is None


def _refuse_foreign_file(path: Path) -> None:
    """Raise unless ``path`` is missing, empty, or starts with the SQLite magic header."""
    try:
        with path.open("rb") as fh:
            head = fh.read(len(SQLITE_MAGIC))
    except FileNotFoundError:
        return
    except IsADirectoryError as exc:
        raise StoreError(f"the store path {path} is a directory, not a database file") from exc
    except OSError as exc:
        raise StoreError(f"cannot read the store {path}: {exc}") from exc
    if head and head != SQLITE_MAGIC:
        raise StoreError(
            f"{path} is not an SQLite database; refusing to touch it "
            "(move it aside or point TEA_AGENT_HOME elsewhere)"
        )


def _configure(conn: sqlite3.Connection) -> None:
    """Per-connection settings; none of them writes to the file."""
    import sqlite3

    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_SECONDS * 1000)}")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA synchronous = NORMAL")
    # reading the schema is what tells a damaged file from a good one
    conn.execute("SELECT count(*) FROM sqlite_master").fetchone()


def _undo(conn: sqlite3.Connection, outer: bool, savepoint: str) -> None:
    import sqlite3

    try:
        if outer:
            conn.execute("ROLLBACK")
        else:
            conn.execute(f"ROLLBACK TO {savepoint}")
            conn.execute(f"RELEASE {savepoint}")
    except sqlite3.Error as exc:
        # SQLite may already have rolled back (e.g. after SQLITE_FULL); the original error matters
        log.warning("rollback on %s failed: %s", conn, exc)
