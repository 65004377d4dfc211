"""Connections to PostgreSQL for ``postgres.py``: the ``store.url`` taken apart, the pool the
threads share, and the rows and write results the repositories read. No pg8000 here: the
pool is handed the function that connects."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from ..errors import StoreError

__all__ = ["ConnectionPool", "PgResult", "PgRow", "Settings", "parse_url"]

log = logging.getLogger(__name__)

POOL_SIZE = 8
POOL_WAIT_SECONDS = 60.0
OPTIONS = ("sslmode", "connect_timeout", "application_name", "pool_size", "host")


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
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise StoreError(
            f"store.url: unknown option(s) {', '.join(unknown)}; expected {', '.join(OPTIONS)}"
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


class ConnectionPool:
    """Up to ``size`` connections made by ``open_one``, opened when first needed; a thread
    waiting for one gives up after :data:`POOL_WAIT_SECONDS`."""

    def __init__(self, open_one: Callable[[], Any], size: int, location: str) -> None:
        self._open_one = open_one
        self._size = size
        self._location = location
        self._idle: list[Any] = []
        self._opened = 0
        self._closed = False
        self._ready = threading.Condition()

    def take(self) -> Any:
        deadline = time.monotonic() + POOL_WAIT_SECONDS
        with self._ready:
            while True:
                if self._closed:
                    raise StoreError(f"the store {self._location} is closed")
                if self._idle:
                    return self._idle.pop()
                if self._opened < self._size:
                    self._opened += 1
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    raise StoreError(
                        f"all {self._size} connections to {self._location} stayed busy for "
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

    def give(self, conn: Any, *, broken: bool = False) -> None:
        """Take ``conn`` back; a broken one (or any, once closed) is closed instead."""
        with self._ready:
            if not (broken or self._closed):
                self._idle.append(conn)
                self._ready.notify()
                return
            self._opened -= 1
            self._ready.notify()
        _close_quietly(conn)

    def close(self) -> None:
        """Close the idle connections; busy ones close when given back. Safe to call twice."""
        with self._ready:
            self._closed, idle, self._idle = True, self._idle, []
            self._opened -= len(idle)
            self._ready.notify_all()
        for conn in idle:
            _close_quietly(conn)

    @property
    def closed(self) -> bool:
        return self._closed


def _close_quietly(conn: Any) -> None:
    try:
        conn.close()
    except Exception as exc:  # the server may be gone already; nothing to tell the caller
        log.debug("closing a PostgreSQL connection failed: %s", exc)
