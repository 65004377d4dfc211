"""Copying an SQLite home's store into PostgreSQL (``tea-agent-mini migrate --to``, issue 17)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tea_agent_mini.errors import StoreError
from tea_agent_mini.store import Evaluation, JobSpec, Lesson, Store, transfer
from tea_agent_mini.store.database import Database
from tea_agent_mini.store.migrations import MIGRATIONS, migrate
from tea_agent_mini.types import Message

pytest.importorskip("pg8000")


def make_home(path: Path, topics: int = 3) -> dict[str, object]:
    """An SQLite store with a bit of everything, made through the repositories."""
    made: dict[str, object] = {}
    with Store.open(path) as store:
        ids = []
        for n in range(topics):
            topic = store.topics.create(f"topic {n}", profile="work" if n else "")
            ids.append(topic.id)
            for m in range(7):
                role = "user" if m % 2 == 0 else "assistant"
                store.messages.add(topic.id, Message(role=role, content=f"t{n} m{m} é 中文"))
        store.messages.add(ids[0], Message(role="assistant", content=None, duration=1.25))
        gone = store.memories.add("deleted memory", now=1.0)
        store.memories.soft_delete(gone.id)
        made["memory"] = store.memories.add(
            "the user prefers tabs over spaces",
            tags=["style"],
            embedding=[0.6, 0.8, 0.0],
            embedding_model="m",
            pinned=True,
        )
        store.memories.add("the deploy runs on fridays", importance=5)
        store.state.put("topic:" + ids[0], "todo", [{"text": "x", "done": False}])
        task = store.tasks.add(name="news", kind="prompt", schedule="daily:08:30", next_run_at=None)
        made["task"] = task
        evaluation = store.evaluations.add(
            Evaluation(ids[0], 1, "success", 4, "heuristic", tools=("toolkit_exec",))
        )
        store.lessons.add(
            Lesson("forgot", "remember", evaluation_id=evaluation.id, embedding=b"\x00\x01")
        )
        store.jobs.add_many([JobSpec("evaluate", {"a": 1}, ids[0])], owner="me")
        store.inbox.send("lead", "topic:" + ids[0], "hello")
        store.teammates.add("ann", "tester", "test things", None, ids[-1])
        store.prompts.add("be brief", source="user", parent=0)
        store.skill_stats.used("pdf")
        # a deleted message: its id is never handed out again (sqlite_sequence)
        last = store.messages.add(ids[-1], Message(role="user", content="to delete"))
        store.messages.delete_after(ids[-1], last.id, inclusive=True)
        made["topics"] = ids
        made["deleted_message"] = last.id
    return made


def counts(target: str) -> dict[str, int]:
    with Store.open(target) as store:
        return {
            name: int(store.db.query_one(f"SELECT count(*) FROM {name}")[0])
            for name in store.db.tables()
            # SQLite's FTS shadow tables; PostgreSQL's change counters (migration 16)
            if not name.startswith("memories_fts_") and name != "store_changes"
        }


@pytest.fixture
def home(tmp_path) -> tuple[Path, dict[str, object]]:
    path = tmp_path / "chat.db"
    return path, make_home(path)


def test_copies_every_table_field_by_field(home, empty_postgres_url):
    path, made = home
    seen = []
    report = transfer.copy_to_postgres(path, empty_postgres_url, batch=4, on_table=seen.append)
    assert report.copied > 0 and not report.mismatches
    assert [t.name for t in report.tables] == [t.name for t in seen]
    source, target = counts(str(path)), counts(empty_postgres_url)
    assert source.keys() - {"memories_fts"} <= target.keys()
    for name, count in source.items():
        assert target[name] == count, name
    assert target["messages"] == 3 * 7 + 1 and target["memories_fts"] == 2

    with Store.open(path) as old, Store.open(empty_postgres_url) as new:
        topics = made["topics"]
        assert new.topics.get(topics[1]) == old.topics.get(topics[1])
        for topic_id in topics:
            assert new.messages.of_topic(topic_id) == old.messages.of_topic(topic_id)
        memory = made["memory"]
        assert new.memories.get(memory.id) == old.memories.get(memory.id)
        raw = new.db.query_one(
            "SELECT embedding, expires_at FROM memories WHERE id = ?", (memory.id,)
        )
        assert bytes(raw[0]) == bytes(
            old.db.query_one("SELECT embedding FROM memories WHERE id = ?", (memory.id,))[0]
        )
        assert raw[1] is None
        assert new.tasks.get(made["task"].id) == old.tasks.get(made["task"].id)
        assert new.evaluations.recent() == old.evaluations.recent()
        assert new.lessons.recent() == old.lessons.recent()
        assert new.state.items("topic:" + topics[0]) == old.state.items("topic:" + topics[0])
        assert new.prompts.newest() == old.prompts.newest()
        assert new.teammates.all() == old.teammates.all()
        # the topics keep their order of creation (the emulated rowid)
        order = "SELECT id FROM topics ORDER BY rowid"
        assert [r[0] for r in new.db.query(order)] == [r[0] for r in old.db.query(order)]
        # new rows do not collide, and a deleted message's id is not handed out again
        added = new.messages.add(topics[2], Message(role="user", content="after the copy"))
        assert added.id > made["deleted_message"]
        assert new.topics.create("new").id
        assert new.memories.add("a new memory").id > memory.id
        # the keyword index was rebuilt from the memories
        hits = new.memories.search_keyword("tabs spaces")
        assert [m.id for m, _ in hits] == [memory.id]


def test_a_second_run_copies_nothing(home, empty_postgres_url):
    path, _ = home
    first = transfer.copy_to_postgres(path, empty_postgres_url)
    again = transfer.copy_to_postgres(path, empty_postgres_url)
    assert first.copied > 0 and again.copied == 0
    assert [(t.name, t.after) for t in again.tables] == [(t.name, t.after) for t in first.tables]


def test_a_crash_mid_copy_then_a_rerun_completes(home, empty_postgres_url, monkeypatch):
    path, _ = home
    real = transfer._insert
    calls = {"messages": 0}

    def failing(dst, plan, rows):
        if plan.name == "messages":
            calls["messages"] += 1
            if calls["messages"] == 2:
                raise StoreError("the connection went away")
        return real(dst, plan, rows)

    monkeypatch.setattr(transfer, "_insert", failing)
    with pytest.raises(StoreError, match="went away"):
        transfer.copy_to_postgres(path, empty_postgres_url, batch=5)
    partial = counts(empty_postgres_url)
    assert partial["messages"] == 5  # the first batch committed, the second rolled back
    monkeypatch.setattr(transfer, "_insert", real)
    report = transfer.copy_to_postgres(path, empty_postgres_url, batch=5)
    messages = next(t for t in report.tables if t.name == "messages")
    assert messages.before == 5 and messages.copied == 3 * 7 + 1 - 5 and messages.matches
    assert counts(empty_postgres_url) == {**counts(str(path)), "memories_fts": 2}


def test_dry_run_changes_nothing(home, empty_postgres_url):
    path, _ = home
    report = transfer.copy_to_postgres(path, empty_postgres_url, dry_run=True)
    assert report.dry_run and report.copied == 0
    assert {t.name: t.source for t in report.tables}["messages"] == 22
    assert any("target to be migrated" in note for note in report.notes)
    with Store.open(empty_postgres_url) as store:
        assert int(store.db.query_one("SELECT count(*) FROM messages")[0]) == 0


def test_a_count_mismatch_fails_loudly(home, postgres_url):
    path, made = home
    with Store.open(postgres_url) as store:  # a row the source does not have
        store.topics.create("only in the target")
    with pytest.raises(StoreError, match="row counts differ.*topics 4 of 3"):
        transfer.copy_to_postgres(path, postgres_url)


def test_refuses_a_newer_target(tmp_path, empty_postgres_url):
    path = tmp_path / "chat.db"
    make_home(path, topics=1)
    latest = MIGRATIONS[-1][0]
    with Store.open(empty_postgres_url) as store:
        store.db.record_migration(latest + 1, "from the future")
    with pytest.raises(StoreError, match="newer than the source"):
        transfer.copy_to_postgres(path, empty_postgres_url)


def test_an_older_source_is_migrated_first(tmp_path, empty_postgres_url):
    path = tmp_path / "chat.db"
    db = Database.open(path)  # a store made by a version that knew migration 1 only
    migrate(db, MIGRATIONS[:1])
    db.execute("INSERT INTO topics (id, title, created_at, updated_at) VALUES ('t1', 'old', 1, 1)")
    db.close()
    dry = transfer.copy_to_postgres(path, empty_postgres_url, dry_run=True)
    assert [(t.name, t.source) for t in dry.tables if t.source] == [("topics", 1)]
    assert any("source to be migrated from schema version 1" in note for note in dry.notes)
    report = transfer.copy_to_postgres(path, empty_postgres_url)
    assert any("source migrated from schema version 1" in note for note in report.notes)
    with Store.open(empty_postgres_url) as store:
        assert store.topics.get("t1").title == "old"


def test_refuses_what_is_not_a_store(tmp_path, empty_postgres_url):
    with pytest.raises(StoreError, match="no SQLite store"):
        transfer.copy_to_postgres(tmp_path / "missing.db", empty_postgres_url)
    with pytest.raises(StoreError, match="postgresql://"):
        transfer.copy_to_postgres(tmp_path / "missing.db", str(tmp_path / "other.db"))
