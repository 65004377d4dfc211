"""The PostgreSQL backend, through pg8000 (pure Python; the ``postgres`` extra), imported only
when a ``postgresql://`` URL is opened.

A small pool of connections serves the threads; a thread inside :meth:`transaction` keeps its
connection for the whole block, so every statement it runs there (through any repository) is
part of it. Outside a transaction each statement commits on its own. Each outermost transaction
first takes one transaction-level advisory lock, so transactions run one at a time across
threads and instances, as they do on SQLite (``BEGIN IMMEDIATE``): the repositories' "read,
decide, write" blocks keep their meaning. The SQL is translated by ``dialect.py``; an INSERT into
a table with an identity ``id`` gets ``RETURNING id`` so that ``lastrowid`` works as on SQLite.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, unquote, urlsplit

from ..errors import StoreError
from .database import Database, Row
from .dialect import is_ddl, translate

if TYPE_CHECKING:
    from pg8000.native import Connection

__all__ = ["PostgresDatabase", "Settings", "parse_url"]

log = logging.getLogger(__name__)

INSTALL_HINT = "pip install 'tea_agent_mini[postgres]'"
POOL_SIZE = 8
POOL_WAIT_SECONDS = 60.0
# the advisory lock every outermost transaction takes (any fixed number; "tea_agent")
TRANSACTION_LOCK = 0x7465615F6167656E
MIGRATIONS_TABLE = "schema_migrations"
_OPTIONS = ("sslmode", "connect_timeout", "application_name", "pool_size", "host")


@dataclass(frozen=True)
class Settings:
    """A ``postgresql://`` URL taken apart: what pg8000 needs, and the URL without secrets."""

    location: str
    connect: dict[str, Any] = field(repr=False)
    pool_size: int = POOL_SIZE
    secrets: tuple[str, ...] = field(default=(), repr=False)


def parse_url(url: str) -> Settings:
    """``postgresql://user:password@host:port/database?sslmode=require&pool_size=4``.

    ``host`` in the query names a directory holding the server's Unix socket.

    Raises:
        StoreError: the URL cannot be used (the message never holds the password).
    """
    parts = urlsplit(url)
    host = parts.hostname or ""
    try:
        port = parts.port or 5432
    except ValueError as exc:
        raise StoreError(f"store.url: the port is not a number ({exc})") from None
    database = unquote(parts.path.lstrip("/"))
    user = unquote(parts.username or "")
    password = unquote(parts.password or "") or None
    options = dict(parse_qsl(parts.query))
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise StoreError(
            f"store.url: unknown option(s) {', '.join(unknown)}; expected {', '.join(_OPTIONS)}"
        )
    if not user or not database:
        raise StoreError("store.url: expected postgresql://user[:password]@host[:port]/database")
    connect: dict[str, Any] = {
        "user": user,
        "password": password,
        "database": database,
        "application_name": options.get("application_name", "tea_agent_mini"),
    }
    socket_dir = options.get("host", "")
    if socket_dir:
        connect["unix_sock"] = f"{socket_dir.rstrip('/')}/.s.PGSQL.{port}"
    else:
        connect.update(host=host or "localhost", port=port)
    if "connect_timeout" in options:
        # pg8000 applies it to every wait on the socket, not only to connecting
        connect["timeout"] = _number(options, "connect_timeout", float)
    connect["ssl_context"] = _ssl_context(options.get("sslmode", "prefer"))
    where = socket_dir or f"{host or 'localhost'}:{port}"
    size = _number(options, "pool_size", int) if "pool_size" in options else POOL_SIZE
    return Settings(
        location=f"postgresql://{where}/{database}",
        connect=connect,
        pool_size=max(1, size),
        secrets=tuple(s for s in (password, parts.password) if s),
    )


def _number(options: dict[str, str], name: str, kind: Callable[[str], Any]) -> Any:
    try:
        return kind(options[name])
    except ValueError:
        raise StoreError(f"store.url: {name} must be a number, got {options[name]!r}") from None


def _ssl_context(mode: str) -> Any:
    """pg8000's ssl_context for a libpq ``sslmode``: None (plain) or an SSLContext."""
    import ssl

    if mode in ("disable", "allow", "prefer"):
        # pg8000 cannot fall back from TLS to plain text, so "prefer" means plain, as "allow"
        return None
    if mode == "require":
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        return context
    if mode in ("verify-ca", "verify-full"):
        context = ssl.create_default_context()
        context.check_hostname = mode == "verify-full"
        return context
    raise StoreError(f"store.url: unknown sslmode {mode!r}")


class PgRow:
    """A row read by index or by column name, like ``sqlite3.Row``."""

    __slots__ = ("_index", "_values")

    def __init__(self, values: list[Any], index: dict[str, int]) -> None:
        self._values = values
        self._index = index

    def __getitem__(self, key: int | str) -> Any:
        if isinstance(key, str):
            try:
                return self._values[self._index[key]]
            except KeyError:
                return self._values[self._index[key.lower()]]
        return self._values[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def keys(self) -> list[str]:
        return list(self._index)

    def __repr__(self) -> str:
        return f"PgRow({self._values!r})"


@dataclass(frozen=True)
class PgResult:
    rowcount: int
    lastrowid: int | None


class _Pool:
    """Up to ``size`` connections, opened when first needed."""

    def __init__(self, open_one: Callable[[], Connection], size: int) -> None:
        self._open_one = open_one
        self._size = size
        self._idle: list[Connection] = []
        self._opened = 0
        self._closed = False
        self._ready = threading.Condition()

    def take(self, location: str) -> Connection:
        deadline = time.monotonic() + POOL_WAIT_SECONDS
        with self._ready:
            while True:
                if self._closed:
                    raise StoreError(f"the store {location} is closed")
                if self._idle:
                    return self._idle.pop()
                if self._opened < self._size:
                    self._opened += 1
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    raise StoreError(
                        f"all {self._size} connections to {location} stayed busy for "
                        f"{POOL_WAIT_SECONDS:.0f} s"
                    )
                self._ready.wait(left)
        try:
            return self._open_one()
        except BaseException:
            with self._ready:
                self._opened -= 1
                self._ready.notify()
            raise

    def give(self, conn: Connection, *, broken: bool = False) -> None:
        with self._ready:
            if not (broken or self._closed):
                self._idle.append(conn)
                self._ready.notify()
                return
            self._opened -= 1
            self._ready.notify()
        _close_quietly(conn)

    def close(self) -> bool:
        """Close the idle connections (busy ones close when given back); False if already."""
        with self._ready:
            if self._closed:
                return False
            self._closed, idle, self._idle = True, self._idle, []
            self._opened -= len(idle)
            self._ready.notify_all()
        for conn in idle:
            _close_quietly(conn)
        return True

    @property
    def closed(self) -> bool:
        return self._closed


def _close_quietly(conn: Connection) -> None:
    try:
        conn.close()
    except Exception as exc:  # the server may be gone already; nothing to tell the caller
        log.debug("closing a PostgreSQL connection failed: %s", exc)


class PostgresDatabase(Database):
    """The store's tables in one PostgreSQL database (its current schema)."""

    dialect = "postgresql"
    elsewhere = "point store.url at another database"

    def __init__(self, settings: Settings, pool: _Pool) -> None:
        super().__init__(settings.location)
        self._settings = settings
        self._pool = pool
        self._local = threading.local()  # .conn and .depth of this thread's transaction
        self._id_tables: frozenset[str] | None = None
        self._snapshot = ("", 0)  # the last server snapshot seen, and data_version's count
        self.server_version = ""
        self.extensions: dict[str, str] = {}  # installed extension -> version
        self.available: frozenset[str] = frozenset()  # extensions the server could install

    @classmethod
    def connect(cls, url: str) -> PostgresDatabase:
        """Connect once (to fail early), and read the server version and the extensions.

        Raises:
            StoreError: pg8000 is missing, the URL is wrong, or the server cannot be reached
                or refuses the login (the message names the database, never the password).
        """
        try:
            import pg8000.native
        except ImportError as exc:
            raise StoreError(
                f"store.url names a PostgreSQL database, which needs pg8000: {INSTALL_HINT}"
            ) from exc
        settings = parse_url(url)

        def open_one() -> Connection:
            try:
                return pg8000.native.Connection(**settings.connect)
            except (pg8000.native.Error, OSError) as exc:
                raise StoreError(
                    f"cannot connect to the store {settings.location}: {_message(exc, settings)}"
                ) from None

        db = cls(settings, _Pool(open_one, settings.pool_size))
        try:
            db._inspect()
        except BaseException:
            db.close()
            raise
        return db

    def _inspect(self) -> None:
        row = self.query_one("SELECT current_setting('server_version')")
        self.server_version = str(row[0]) if row else ""
        rows = self._run("SELECT extname, extversion FROM pg_extension ORDER BY extname")
        self.extensions = {str(name): str(version) for name, version in rows}
        rows = self._run("SELECT name FROM pg_available_extensions WHERE name IN ('vector')")
        self.available = frozenset(str(row[0]) for row in rows)
        vectors = "pgvector present" if self.has_pgvector else "no pgvector"
        log.info("store: PostgreSQL %s at %s (%s)", self.server_version, self.location, vectors)

    @property
    def has_pgvector(self) -> bool:
        return "vector" in self.extensions

    # -- running statements --------------------------------------------------------------

    @contextmanager
    def _connection(self, what: str) -> Iterator[Connection]:
        """This thread's transaction connection, or one from the pool for one statement."""
        import pg8000.native

        held = getattr(self._local, "conn", None)
        conn = held if held is not None else self._pool.take(self.location)
        broken = False
        try:
            yield conn
        except pg8000.native.DatabaseError as exc:
            broken = _ends_session(exc)
            raise StoreError(f"{what} failed on {self.location}: {_message(exc)}") from exc
        except (pg8000.native.Error, OSError) as exc:
            broken = True  # the connection itself failed: never hand it out again
            raise StoreError(f"{what} failed on {self.location}: {_message(exc)}") from exc
        except BaseException:
            broken = True  # interrupted halfway through the protocol: its state is unknown
            raise
        finally:
            if held is None:
                self._pool.give(conn, broken=broken)
            elif broken:
                self._local.broken = True

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

    def _select(self, sql: str, params: Sequence[Any]) -> list[Row]:
        (statement,) = self._statements(sql)
        with self._connection("query") as conn:
            context = conn.execute_unnamed(statement, vals=_params(params))
        return _rows(context)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> PgResult:
        statements = self._statements(sql)
        if len(statements) > 1:  # DDL made of several statements: atomic like the one it was
            with self.transaction():
                for statement in statements:
                    self._run(statement, what="write")
            return PgResult(0, None)
        statement = statements[0]
        returning = self._returns_id(statement)
        if returning:
            statement += " RETURNING id"
        with self._connection("write") as conn:
            context = conn.execute_unnamed(statement, vals=_params(params))
        rows = context.rows or []
        lastrowid = int(rows[-1][0]) if returning and rows else None
        return PgResult(max(context.row_count, 0), lastrowid)

    def _returns_id(self, statement: str) -> bool:
        words = statement.split(None, 3)
        if len(words) < 3 or words[0].upper() != "INSERT" or "RETURNING" in statement.upper():
            return False
        table = words[2].split("(")[0].strip().lower()
        tables = self._id_tables
        if tables is None:
            rows = self._run(
                "SELECT table_name FROM information_schema.columns "
                "WHERE table_schema = current_schema() AND column_name = 'id' "
                "AND (is_identity = 'YES' OR column_default LIKE 'nextval(%')"
            )
            tables = self._id_tables = frozenset(str(row[0]) for row in rows)
        return table in tables

    # -- transactions --------------------------------------------------------------------

    @contextmanager
    def transaction(self) -> Iterator[Database]:
        depth = getattr(self._local, "depth", 0)
        if depth:
            yield from self._savepoint(depth)
            return
        conn = self._pool.take(self.location)
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

    def data_version(self) -> int:
        """Changes whenever a transaction that wrote has ended since the last call (anyone's,
        ours too): the server's snapshot, ``pg_current_snapshot()``, is the witness."""
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

    def close(self) -> None:
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
