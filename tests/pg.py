"""A throwaway PostgreSQL cluster for the tests: initdb in a temp directory, pg_ctl start on a free
port of 127.0.0.1 (trust authentication: nothing else can reach it), stopped and deleted at the
end. One cluster per test session. A test gets the session's migrated database, emptied after
it (:meth:`Cluster.shared`), or a new empty one of its own (:meth:`Cluster.database`).

PostgreSQL refuses to run as root, so under root the server runs as the ``postgres`` user.
Without the binaries (``apt-get install postgresql``) or pg8000 the tests that need it skip,
saying why.
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SHARED = "tea_shared"


def home_store(home: Path) -> Any:
    """The store of the test home ``home``: its ``chat.db``, or under ``--store postgres``
    the database the home's config names through TEA_AGENT_STORE_URL (set for the test)."""
    from tea_agent_mini.store import Store

    return Store.open(os.environ.get("TEA_AGENT_STORE_URL") or home / "chat.db")


SERVER_USER = "postgres"


def find_bindir() -> Path | None:
    """The directory of initdb and pg_ctl: pg_config's, PATH's, or Debian's newest."""
    pg_config = shutil.which("pg_config")
    if pg_config:
        done = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True)
        bindir = Path(done.stdout.strip())
        if done.returncode == 0 and (bindir / "initdb").is_file():
            return bindir
    initdb = shutil.which("initdb")
    if initdb and shutil.which("pg_ctl"):
        return Path(initdb).resolve().parent
    debian = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=_major, reverse=True)
    return Path(debian[0]).parent if debian else None


def _major(path: str) -> int:
    version = Path(path).parent.parent.name
    return int(version) if version.isdigit() else 0


def unavailable() -> str | None:
    """Why a cluster cannot be started here, or None when it can."""
    try:
        import pg8000  # noqa: F401
    except ImportError:
        return "pg8000 is not installed (pip install 'tea_agent_mini[postgres]')"
    if find_bindir() is None:
        return "PostgreSQL is not installed (apt-get install postgresql)"
    if os.name == "posix" and os.geteuid() == 0:
        import pwd

        try:
            pwd.getpwnam(SERVER_USER)
        except KeyError:
            return f"running as root and there is no {SERVER_USER!r} user to run PostgreSQL as"
        if shutil.which("runuser") is None:
            return "running as root without runuser to start PostgreSQL as another user"
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Cluster:
    """A running cluster; :meth:`shared` and :meth:`database` hand out databases."""

    def __init__(self, bindir: Path, root: Path, port: int) -> None:
        self.bindir = bindir
        self.root = root
        self.data = root / "data"
        self.port = port
        self._names = itertools.count(1)
        self._shared: frozenset[str] | None = None  # the shared database's tables

    @classmethod
    @contextlib.contextmanager
    def running(cls) -> Iterator[Cluster]:
        bindir = find_bindir()
        assert bindir is not None
        root = Path(tempfile.mkdtemp(prefix="tea-pg-"))
        cluster = cls(bindir, root, free_port())
        try:
            cluster._start()
            yield cluster
        finally:
            cluster._stop()
            shutil.rmtree(root, ignore_errors=True)

    def url(self, database: str) -> str:
        return f"postgresql://{SERVER_USER}@127.0.0.1:{self.port}/{database}"

    def _run(self, *args: str) -> None:
        command = [str(self.bindir / args[0]), *args[1:]]
        if os.name == "posix" and os.geteuid() == 0:
            command = ["runuser", "-u", SERVER_USER, "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            log = self.root / "server.log"
            tail = log.read_text(errors="replace")[-2000:] if log.is_file() else ""
            raise RuntimeError(f"{' '.join(command)} failed:\n{done.stdout}{done.stderr}{tail}")

    def _start(self) -> None:
        if os.name == "posix" and os.geteuid() == 0:
            shutil.chown(self.root, SERVER_USER)
        self._run(
            "initdb", "-D", str(self.data), "-U", SERVER_USER, "-A", "trust", "-E", "UTF8",
            "--locale=C.UTF-8", "--no-sync",
        )  # fmt: skip
        options = (
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        log = str(self.root / "server.log")
        self._run("pg_ctl", "-D", str(self.data), "-l", log, "-o", options, "-w", "start")

    def _stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            with contextlib.suppress(RuntimeError, subprocess.TimeoutExpired):
                self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def admin(self, sql: str, database: str = "postgres") -> list[Any]:
        """Run one statement as the superuser; its rows."""
        with self._connect(database) as conn:
            return conn.run(sql) or []

    @contextlib.contextmanager
    def database(self) -> Iterator[str]:
        """The URL of a new, empty database, dropped when the block ends (half a second)."""
        name = f"test_{next(self._names)}"
        self.admin(f"CREATE DATABASE {name}")
        try:
            yield self.url(name)
        finally:
            self.admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    @contextlib.contextmanager
    def shared(self) -> Iterator[str]:
        """The URL of the session's migrated database, emptied when the block ends (a fresh
        database costs half a second, emptying this one a twentieth). A test that changed its
        schema or left a transaction open gets it dropped and made again instead."""
        if self._shared is None:
            self._shared = self._make_shared()
        try:
            yield self.url(SHARED)
        finally:
            if not self._empty_shared():
                self.admin(f"DROP DATABASE IF EXISTS {SHARED} WITH (FORCE)")
                self._shared = None

    def _make_shared(self) -> frozenset[str]:
        """Create and migrate the shared database; the names of its tables."""
        from tea_agent_mini.store import Store

        self.admin(f"CREATE DATABASE {SHARED}")
        Store.open(self.url(SHARED)).close()
        return frozenset(self._tables())

    def _tables(self) -> list[str]:
        with self._connect(SHARED) as conn:
            rows = conn.run("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        return [row[0] for row in rows]

    def _empty_shared(self) -> bool:
        """Empty every table but schema_migrations (ids start at 1 again); False when the
        schema is not the migrated one or a lock held by a test got in the way."""
        import pg8000.native

        try:
            with self._connect(SHARED) as conn:
                tables = {row[0] for row in conn.run(
                    "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
                )}  # fmt: skip
                if tables != self._shared:
                    return False
                conn.run("SET lock_timeout = '2s'")
                kept = sorted(tables - {"schema_migrations"})
                conn.run(f"TRUNCATE {', '.join(kept)} RESTART IDENTITY CASCADE")
        except pg8000.native.Error:
            return False
        return True

    @contextlib.contextmanager
    def _connect(self, database: str) -> Iterator[Any]:
        import pg8000.native

        conn = pg8000.native.Connection(
            SERVER_USER, host="127.0.0.1", port=self.port, database=database
        )
        try:
            yield conn
        finally:
            conn.close()
