"""What only the PostgreSQL backend has: its URL, its schema and migrations table, its pool of
connections and transactions across threads, its errors, and that nothing imports pg8000 unless
a postgresql:// URL is opened. The repositories' behaviour on it is in the other store tests."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tea_agent_mini.errors import StoreError
from tea_agent_mini.store import Store
from tea_agent_mini.store.database import Database
from tea_agent_mini.store.migrations import MIGRATIONS
from tea_agent_mini.store.pg_connections import parse_url
from tests.store.test_store_memories import MEMORY_COLUMNS

ROOT = Path(__file__).resolve().parents[2]
LATEST = MIGRATIONS[-1][0]


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60
    )


# -- no server needed --------------------------------------------------------------------------


def test_the_url_taken_apart_keeps_the_password_out_of_the_location():
    settings = parse_url("postgresql://tea:s3cr%2Ft@db.example:6543/agents?sslmode=require")
    assert settings.location == "postgresql://db.example:6543/agents"
    assert settings.connect["password"] == "s3cr/t" and settings.connect["user"] == "tea"
    assert settings.connect["ssl_context"] is not None
    assert "s3cr" not in repr(settings)
    socket = parse_url("postgres://tea@/agents?host=/run/postgresql&pool_size=2")
    assert socket.connect["unix_sock"] == "/run/postgresql/.s.PGSQL.5432"
    assert socket.pool_size == 2 and socket.location == "postgresql:///run/postgresql/agents"


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("postgresql://tea@host/agents?colour=blue", "unknown option"),
        ("postgresql://host/agents", "expected postgresql://user"),
        ("postgresql://tea@host/", "expected postgresql://user"),
        ("postgresql://tea@host/agents?sslmode=sometimes", "sslmode"),
        ("postgresql://tea@host/agents?pool_size=many", "pool_size must be a number"),
    ],
)
def test_a_wrong_url_is_refused_with_what_is_wrong(url, problem):
    with pytest.raises(StoreError, match=problem):
        parse_url(url)


def test_opening_sqlite_never_imports_pg8000(tmp_path):
    done = run_python(
        "import sys\n"
        "from tea_agent_mini.store import Store\n"
        f"Store.open({str(tmp_path / 'chat.db')!r}).close()\n"
        "assert 'pg8000' not in sys.modules, 'pg8000 imported'\n"
        "assert 'tea_agent_mini.store.postgres' not in sys.modules\n"
    )
    assert done.returncode == 0, done.stderr


def test_without_pg8000_a_postgresql_url_says_how_to_install_it():
    done = run_python(
        "import sys\n"
        "sys.modules['pg8000'] = None  # as if it were not installed\n"
        "from tea_agent_mini.errors import StoreError\n"
        "from tea_agent_mini.store import Store\n"
        "try:\n"
        "    Store.open('postgresql://tea:pw@127.0.0.1/agents')\n"
        "except StoreError as exc:\n"
        "    print(exc)\n"
    )
    assert done.returncode == 0, done.stderr
    assert "pip install 'tea_agent_mini[postgres]'" in done.stdout


def test_an_unreachable_server_is_named_without_the_password():
    pytest.importorskip("pg8000", reason="pg8000 is not installed (the postgres extra)")
    from tests.pg import free_port

    url = f"postgresql://tea:hunter2-secret@127.0.0.1:{free_port()}/agents"
    with pytest.raises(StoreError, match="cannot connect") as info:
        Store.open(url)
    assert "postgresql://127.0.0.1:" in str(info.value)
    assert "hunter2" not in str(info.value)


# -- on the test cluster -----------------------------------------------------------------------


@pytest.fixture
def pg(postgres_url):
    with Store.open(postgres_url) as opened:
        yield opened


def test_the_server_and_its_extensions_are_read_at_start(pg):
    db = pg.db
    assert db.dialect == "postgresql" and db.server_version[:2].isdigit()
    assert "plpgsql" in db.extensions
    assert db.has_pgvector == ("vector" in db.extensions)
    assert pg.path is None and pg.location.startswith("postgresql://127.0.0.1:")


def test_migrations_are_recorded_in_their_table(pg):
    rows = pg.db.query("SELECT version, name FROM schema_migrations ORDER BY version")
    assert [(row[0], row[1]) for row in rows] == [(v, name) for v, name, _ in MIGRATIONS]
    assert pg.db.schema_version() == LATEST
    assert "schema_migrations" not in pg.db.tables()


def test_the_memories_table_has_the_columns_sqlite_has(pg):
    rows = pg.db.query(
        "SELECT column_name, data_type FROM information_schema.columns "
        "WHERE table_name = 'memories' ORDER BY ordinal_position"
    )
    assert [row["column_name"] for row in rows] == MEMORY_COLUMNS
    types = {row[0]: row[1] for row in rows}
    assert types["id"] == "bigint" and types["embedding"] == "bytea"
    assert types["updated_at"] == "double precision"


def test_task_names_stay_unique_ignoring_case_in_the_table_itself(pg):
    pg.db.execute(
        "INSERT INTO tasks (name, kind, schedule, created_at, updated_at, anchor_at) "
        "VALUES ('Backup', 'shell', 'hourly:00', 1, 1, 1)"
    )
    with pytest.raises(StoreError, match="duplicate key"):
        pg.db.execute(
            "INSERT INTO tasks (name, kind, schedule, created_at, updated_at, anchor_at) "
            "VALUES ('BACKUP', 'shell', 'hourly:00', 1, 1, 1)"
        )
    assert pg.tasks.find("backup").name == "Backup"


def test_lastrowid_comes_from_the_identity_column(pg):
    topic = pg.topics.create("t")
    first = pg.db.execute(
        "INSERT INTO agent_messages (created_at, sender, recipient, kind, text) "
        "VALUES (1, 'a', 'b', 'message', 'hi')"
    )
    second = pg.inbox.send("a", "b", "again")
    assert first.lastrowid is not None and second.id == first.lastrowid + 1
    state = pg.db.execute(
        "INSERT INTO state (scope, key, value, updated_at) VALUES ('s', 'k', '1', 0)"
    )
    assert state.rowcount == 1 and state.lastrowid is None  # no id column
    assert pg.db.execute("UPDATE topics SET title = 'u' WHERE id = ?", (topic.id,)).rowcount == 1


def test_nul_characters_are_replaced_as_postgresql_text_cannot_hold_them(pg):
    from tea_agent_mini.types import Message

    topic = pg.topics.create("binary output")
    saved = pg.messages.add(topic.id, Message(role="tool", content="a\x00b", tool_call_id="c"))
    assert pg.messages.get(saved.id).content == "a\ufffdb"


def test_a_transaction_holds_back_the_others_and_hides_its_rows_until_it_commits(pg):
    inside, release, entered = threading.Event(), threading.Event(), threading.Event()
    made: list[str] = []

    def first() -> None:
        with pg.transaction():
            made.append(pg.topics.create("in a transaction").id)
            inside.set()
            release.wait(10)

    def second() -> None:
        with pg.transaction():
            entered.set()

    one = threading.Thread(target=first)
    one.start()
    assert inside.wait(10)
    assert not pg.topics.exists(made[0])  # another thread, another connection: not committed
    two = threading.Thread(target=second)
    two.start()
    assert not entered.wait(0.3)  # waits for the advisory lock the first one holds
    release.set()
    one.join(10)
    two.join(10)
    assert entered.is_set() and pg.topics.exists(made[0])


def test_data_version_moves_when_another_connection_commits(pg, postgres_url):
    before = pg.db.data_version()
    assert pg.db.data_version() == before  # nothing happened
    with Store.open(postgres_url) as other:
        other.topics.create("elsewhere")
    assert pg.db.data_version() != before


def test_more_threads_than_connections_share_the_pool(postgres_url):
    with Store.open(postgres_url + "?pool_size=2") as small:
        topic = small.topics.create("busy").id
        errors: list[BaseException] = []

        def work() -> None:
            try:
                for _ in range(10):
                    small.topics.add_usage(topic, 1, 0)
                    small.topics.get(topic)
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=work) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert errors == [] and small.topics.get(topic).prompt_tokens == 60


def test_a_connection_the_server_dropped_is_replaced(pg, postgres_cluster):
    topic = pg.topics.create("before")
    pid = pg.db.query_one("SELECT pg_backend_pid()")[0]
    postgres_cluster.admin(f"SELECT pg_terminate_backend({int(pid)})")
    time.sleep(0.1)
    with pytest.raises(StoreError):
        pg.topics.get(topic.id)  # the connection it had is gone
    assert pg.topics.get(topic.id).title == "before"  # a new one took its place


def test_instances_starting_together_migrate_an_empty_database_once(empty_postgres_url):
    barrier = threading.Barrier(4)
    opened: list[Store] = []
    errors: list[BaseException] = []

    def start() -> None:
        try:
            barrier.wait()
            opened.append(Store.open(empty_postgres_url))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    try:
        assert errors == [] and len(opened) == 4
        versions = opened[0].db.query("SELECT version FROM schema_migrations ORDER BY version")
        assert [row[0] for row in versions] == list(range(1, LATEST + 1))  # each ran once
        opened[1].topics.create("from the second")
        assert [t.title for t in opened[3].topics.recent()] == ["from the second"]
    finally:
        for store in opened:
            store.close()


def test_the_database_url_is_opened_by_database_open(postgres_url):
    db = Database.open(postgres_url)
    try:
        assert db.dialect == "postgresql" and db.schema_version() == LATEST
    finally:
        db.close()
    assert db.closed
    with pytest.raises(StoreError, match="closed"):
        db.query("SELECT 1")
