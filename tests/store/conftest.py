"""The store's tests run on both backends: ``store_target`` is an SQLite file path or the URL of
a fresh PostgreSQL database (skipped, with the reason, where PostgreSQL cannot be started), and
``store`` is that target opened. A test about what only SQLite has (its file, its WAL, its query
plans and statement trace) keeps to it with
``@pytest.mark.parametrize("store_target", ["sqlite"], indirect=True)`` or uses ``tmp_path``;
one about what only PostgreSQL has uses ``postgres_url``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tea_agent_mini.store import Store

BACKENDS = ["sqlite", "postgres"]


@pytest.fixture(params=BACKENDS)
def store_target(request, tmp_path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "chat.db")
    return request.getfixturevalue("postgres_url")


@pytest.fixture(params=BACKENDS)
def empty_target(request, tmp_path) -> str:
    """Like ``store_target``, but a database without any table yet (for migration tests)."""
    if request.param == "sqlite":
        return str(tmp_path / "chat.db")
    return request.getfixturevalue("empty_postgres_url")


@pytest.fixture
def store(store_target) -> Iterator[Store]:
    with Store.open(store_target) as opened:
        yield opened


@pytest.fixture
def statements(store, monkeypatch) -> list[tuple[str, tuple]]:
    """``(sql, params)`` of every statement the repositories run through ``store.db`` from now
    on, as they write it (before any translation): which statements a call makes, on either
    backend. Clear it after the setup a test does not want to see."""
    seen: list[tuple[str, tuple]] = []
    for name in ("query", "query_one", "execute"):

        def spy(sql, params=(), _run=getattr(store.db, name)):
            seen.append((sql, tuple(params)))
            return _run(sql, params)

        monkeypatch.setattr(store.db, name, spy)
    return seen
