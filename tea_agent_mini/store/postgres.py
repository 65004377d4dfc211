"""The PostgreSQL backend, through pg8000 (pure Python; the ``postgres`` extra), imported only
when a ``postgresql://`` URL is opened.

A small pool of connections serves the threads; a thread inside :meth:`transaction` keeps its
connection for the whole block, so every statement it runs there (through any repository) is
part of it. Outside a transaction each statement commits on its own. Each outermost transaction
first takes one transaction-level advisory lock, so transactions run one at a time across
threads and instances, as they do on SQLite (``BEGIN IMMEDIATE``): the repositories' "read,
decide, write" blocks keep their meaning. The SQL is translated by ``dialect.py``; an INSERT into
a table with an identity column (``id`` or another) gets ``RETURNING`` that column, so that
``lastrowid`` works as on SQLite.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..errors import StoreError
from .database import Database, Row
from .dialect import is_ddl, translate
from .pg_connections import ConnectionPool, PgResult, PgRow, Settings, parse_url

if TYPE_CHECKING:
    from pg8000.native import Connection

    from .pg_listen import Listener

__all__ = ["PostgresDatabase"]

log = logging.getLogger(__name__)

INSTALL_HINT = "pip install 'tea_agent_mini[postgres]'"
# the advisory lock every outermost transaction takes (any fixed number; "tea_agent")
TRANSACTION_LOCK = 0x7465615F6167656E
MIGRATIONS_TABLE = "schema_migrations"
MIN_SERVER = 13  # the oldest major version with pg_current_snapshot()


class PostgresDatabase(Database):
    """The store's tables in one PostgreSQL database (its current schema)."""

    dialect = "postgresql"
    elsewhere = "point store.url at another database"

    def __init__(self, settings: Settings, pool: ConnectionPool) -> None:
        super().__init__(settings.location)
        self._settings = settings
        self._pool = pool
        self._local = threading.local()  # .conn and .depth of this thread's transaction
        self._id_tables: dict[str, str] | None = None  # table -> its identity column
        self._snapshot = ("", 0)  # the last server snapshot seen, and data_version's count
        self.server_version = ""
        self.extensions: dict[str, str] = {}  # installed extension -> version
        self.available: frozenset[str] = frozenset()  # extensions the server could install
        self._open_one: Any = None
        self._listener: Listener | None = None

    @classmethod
    def connect(cls, url: str) -> PostgresDatabase:
        """Connect once (to fail early), and read the server version and the extensions.

        Raises:
            StoreError: pg8000 is missing, the URL is wrong, or the server cannot be reached
                or refuses the login, or is older than PostgreSQL 13 (the message names the
                database, never the password).
        """
        try:
            import pg8000.native
        except ImportError as exc:
            raise StoreError(
                f"store.url names a PostgreSQL database, which needs pg8000: {INSTALL_HINT}"
            ) from exc
        settings = parse_url(url)

        origin = uuid.uuid4().hex[:12]

        def open_one() -> Connection:
            try:
                conn = pg8000.native.Connection(**settings.connect)
                # signs the change notifications of the writes made here (migration 16)
                conn.run("SELECT set_config('tea.origin', :origin, false)", origin=origin)
                return conn
            except (pg8000.native.Error, OSError) as exc:
                raise StoreError(
                    f"cannot connect to the store {settings.location}: {_message(exc, settings)}"
                ) from None

        db = cls(settings, ConnectionPool(open_one, settings.pool_size, settings.location))
        db.origin = origin
        db._open_one = open_one
        try:
            db._inspect()
        except BaseException:
            db.close()
            raise
        return db

    def _inspect(self) -> None:
        """Raises StoreError for a server older than :data:`MIN_SERVER` (pg_current_snapshot)."""
        row = self.query_one(
            "SELECT current_setting('server_version'), current_setting('server_version_num')"
        )
        self.server_version = str(row[0]) if row else ""
        if row and int(row[1]) < MIN_SERVER * 10000:
            raise StoreError(
                f"the store {self.location} runs PostgreSQL {self.server_version}; "
                f"tea_agent_mini needs {MIN_SERVER} or newer"
            )
        rows = self._run("SELECT extname, extversion FROM pg_extension ORDER BY extname")
        self.extensions = {str(name): str(version) for name, version in rows}
        rows = self._run("SELECT name FROM pg_available_extensions WHERE name IN ('vector')")
        self.available = frozenset(str(row[0]) for row in rows)
        vectors = "pgvector present" if self.has_pgvector else "no pgvector"
        log.info("store: PostgreSQL %s at %s (%s)", self.server_version, self.location, vectors)

    def open_connection(self) -> Connection:
        """A connection of its own, outside the pool (``LISTEN`` needs one); the caller
        closes it.

        Raises:
            StoreError: the server cannot be reached.
        """
        return self._open_one()

    @property
    def has_pgvector(self) -> bool:
        return "vector" in self.extensions

    # -- running statements --------------------------------------------------------------

    @contextmanager
    def _connection(self, what: str) -> Iterator[Connection]:
        """This thread's transaction connection, or one from the pool for one statement."""
        import pg8000.native

        held = getattr(self._local, "conn", None)
        conn = held if held is not None else self._pool.take()
        broken = False
        try:
            yield conn
        except pg8000.native.DatabaseError as exc:
            broken = _ends_session(exc)
            raise StoreError(f"{what} failed on {self.location}: {self._message(exc)}") from exc
        except (pg8000.native.Error, OSError) as exc:
            broken = True  # the connection itself failed: never hand it out again
            raise StoreError(f"{what} failed on {self.location}: {self._message(exc)}") from exc
        except BaseException:
            broken = True  # interrupted halfway through the protocol: its state is unknown
            raise
        finally:
            if held is None:
                self._pool.give(conn, broken=broken)
            elif broken:
                self._local.broken = True

    def _message(self, exc: BaseException) -> str:
        return _message(exc, self._settings)

    def _run(self, sql: str, params: Sequence[Any] = (), what: str = "query") -> list[Any]:
        """Run PostgreSQL's own SQL (no translation); the rows as pg8000 returns them."""
        with self._connection(what) as conn:
            return conn.execute_unnamed(sql, vals=_params(params)).rows or []

    def _statements(self, sql: str) -> tuple[str, ...]:
        statements = translate(sql)
        if is_ddl(sql):
            self._id_tables = None  # a table may have been made or changed
        return statements

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return self._select(sql, params)

    def query_one(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        rows = self._select(sql, params)
        return rows[0] if rows else None

    def _select(self, sql: str, params: Sequence[Any], settings: Sequence[str] = ()) -> list[Row]:
        (statement,) = self._statements(sql)
        with self._connection("query") as conn:
            for setting in settings:  # on the connection that runs the query
                name, _, value = setting.partition("=")
                conn.execute_unnamed("SELECT set_config($1, $2, false)", vals=(name, value))
            context = conn.execute_unnamed(statement, vals=_params(params))
        return _rows(context)

    def execute_native(self, sql: str) -> None:
        """Run PostgreSQL's own statement, untranslated and outside any transaction (``CREATE
        INDEX CONCURRENTLY`` must be)."""
        self._run(sql, what="write")

    def query_tuned(self, settings: Sequence[str], sql: str, params: Sequence[Any]) -> list[Row]:
        """:meth:`query` after ``name=value`` settings on the connection that runs it (they
        stay on that connection: set only what every later query may have)."""
        return self._select(sql, params, settings)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> PgResult:
        statements = self._statements(sql)
        if len(statements) > 1:  # DDL made of several statements: atomic like the one it was
            with self.transaction():
                for statement in statements:
                    self._run(statement, what="write")
            return PgResult(0, None)
        statement = statements[0]
        returning = self._returning(statement)
        if returning:
            statement += f" RETURNING {returning}"
        with self._connection("write") as conn:
            context = conn.execute_unnamed(statement, vals=_params(params))
        rows = context.rows or []
        lastrowid = int(rows[-1][0]) if returning and rows else None
        return PgResult(max(context.row_count, 0), lastrowid)

    def _returning(self, statement: str) -> str | None:
        """The identity column an INSERT should return (``lastrowid``), or None."""
        words = statement.split(None, 3)
        if len(words) < 3 or words[0].upper() != "INSERT" or "RETURNING" in statement.upper():
            return None
        table = words[2].split("(")[0].strip().lower()
        tables = self._id_tables
        if tables is None:
            rows = self._run(
                "SELECT table_name, column_name FROM information_schema.columns "
                "WHERE table_schema = current_schema() "
                "AND (is_identity = 'YES' OR column_default LIKE 'nextval(%')"
            )
            tables = self._id_tables = {str(row[0]): str(row[1]) for row in rows}
        return tables.get(table)

    # -- transactions --------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[Database]:
        depth = getattr(self._local, "depth", 0)
        if depth:
            yield from self._savepoint(depth)
            return
        conn = self._pool.take()
        self._local.conn, self._local.depth, self._local.broken = conn, 1, False
        try:
            self._run("BEGIN", what="transaction")
            try:
                self._run("SELECT pg_advisory_xact_lock($1)", (TRANSACTION_LOCK,), "transaction")
                yield self
            except BaseException:
                self._undo("ROLLBACK")
                raise
            try:
                self._run("COMMIT", what="transaction")
            except BaseException:
                self._undo("ROLLBACK")
                raise
        finally:
            broken = bool(getattr(self._local, "broken", False))
            self._local.conn, self._local.depth, self._local.broken = None, 0, False
            self._pool.give(conn, broken=broken)
            self._id_tables = None  # DDL inside may be visible to other connections only now

    def _savepoint(self, depth: int) -> Iterator[Database]:
        name = f"sp{depth}"
        self._run(f"SAVEPOINT {name}", what="transaction")
        self._local.depth = depth + 1
        try:
            yield self
        except BaseException:
            self._local.depth = depth
            self._undo(f"ROLLBACK TO SAVEPOINT {name}", f"RELEASE SAVEPOINT {name}")
            raise
        self._local.depth = depth
        self._run(f"RELEASE SAVEPOINT {name}", what="transaction")

    def _undo(self, *statements: str) -> None:
        if getattr(self._local, "broken", False):
            return  # the connection is gone, and the server rolled back with it
        try:
            for statement in statements:
                self._run(statement, what="rollback")
        except StoreError as exc:
            # the original error matters; a connection that cannot roll back is dropped
            self._local.broken = True
            log.warning("rollback on %s failed: %s", self.location, exc)

    # -- the schema and its changes --------------------------------------------------------

    def data_version(self, table: str = "") -> int:
        """For ``table`` (one with a change counter, migration 16): its counter, which moves
        with each statement that changes the table, on any instance. Without: changes
        whenever a transaction that wrote has ended since the last call (anyone's, ours too,
        on any table): the server's snapshot, ``pg_current_snapshot()``, is the witness."""
        if table:
            rows = self._run("SELECT version FROM store_changes WHERE name = $1", (table,))
            return int(rows[0][0]) if rows else 0
        row = self._run("SELECT pg_current_snapshot()::text")
        seen = str(row[0][0]) if row else ""
        with self._clock:
            last, count = self._snapshot
            if seen != last:
                self._snapshot = (seen, count + 1)
            return self._snapshot[1]

    def schema_version(self) -> int:
        # read from the catalog table, not with to_regclass: a name lookup may answer from a
        # cache that has not yet heard of the table another instance just committed
        rows = self._run(
            "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() "
            f"AND tablename = '{MIGRATIONS_TABLE}'"
        )
        if not rows or not rows[0][0]:
            return 0
        rows = self._run(f"SELECT COALESCE(MAX(version), 0) FROM {MIGRATIONS_TABLE}")
        return int(rows[0][0]) if rows else 0

    def record_migration(self, version: int, name: str) -> None:
        self._run(
            f"CREATE TABLE IF NOT EXISTS {MIGRATIONS_TABLE} (version BIGINT PRIMARY KEY, "
            "name TEXT NOT NULL, applied_at DOUBLE PRECISION NOT NULL)",
            what="write",
        )
        self._run(
            f"INSERT INTO {MIGRATIONS_TABLE} (version, name, applied_at) VALUES ($1, $2, $3)",
            (int(version), name, time.time()),
            "write",
        )

    def tables(self) -> list[str]:
        rows = self._run(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() "
            f"AND tablename != '{MIGRATIONS_TABLE}' ORDER BY tablename"
        )
        return [str(row[0]) for row in rows]

    def enable_wal(self) -> None:
        """Nothing to do: the server keeps its own write-ahead log."""

    def listen(self, channel: str, callback: Callable[[str | None], None]) -> Callable[[], None]:
        """Call ``callback(payload)`` for each notification on ``channel`` (``None``: some may
        have been missed; look again), from a thread of the store's; returns the function
        that unsubscribes. The first call starts the listening (``pg_listen.py``)."""
        with self._clock:
            if self._listener is None:
                from .pg_listen import Listener

                self._listener = Listener(self.open_connection, self.location)
            listener = self._listener
        return listener.subscribe(channel, callback)

    @property
    def listening(self) -> bool:
        """Whether notifications are heard now (something subscribed, and connected)."""
        listener = self._listener
        return listener is not None and listener.connected.is_set()

    def close(self) -> None:
        if self._listener is not None:
            self._listener.close()
        self._pool.close()

    @property
    def closed(self) -> bool:
        return self._pool.closed


def _params(params: Sequence[Any]) -> tuple[Any, ...]:
    """SQLite's values as PostgreSQL takes them: booleans as the integers SQLite stores, and
    text without NUL characters (PostgreSQL's text cannot hold them; U+FFFD takes their place)."""
    out = []
    for value in params:
        if isinstance(value, bool):
            value = int(value)
        elif isinstance(value, str) and "\x00" in value:
            value = value.replace("\x00", "\ufffd")
        elif isinstance(value, (bytearray, memoryview)):
            value = bytes(value)
        out.append(value)
    return tuple(out)


def _rows(context: Any) -> list[Row]:
    rows = context.rows or []
    if not rows:
        return []
    index: dict[str, int] = {}
    for number, column in enumerate(context.columns or ()):
        index.setdefault(column["name"], number)
    return [PgRow(values, index) for values in rows]


def _ends_session(exc: BaseException) -> bool:
    """Whether the server closed the session with this error (shutdown, terminated backend,
    lost connection): the connection must not be used again."""
    fields = exc.args[0] if exc.args and isinstance(exc.args[0], dict) else {}
    code = str(fields.get("C", ""))
    return fields.get("S") in ("FATAL", "PANIC") or code.startswith(("57P", "08"))


def _message(exc: BaseException, settings: Settings | None = None) -> str:
    """pg8000's error as one line: the server's message (and detail), or the client's."""
    first = exc.args[0] if exc.args else ""
    if isinstance(first, dict):
        text = str(first.get("M", "error"))
        if first.get("D"):
            text += f" ({first['D']})"
    else:
        text = str(first or exc.__class__.__name__)
    for secret in settings.secrets if settings else ():
        text = text.replace(secret, "****")
    return text
