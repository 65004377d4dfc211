"""Shared fixtures: an isolated home directory for every test, the scripted model server, and a
throwaway PostgreSQL for the tests that run on it."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

ENV_VARS = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "TEA_AGENT_MODEL",
    "TEA_AGENT_PROFILE",
    "TEA_AGENT_API_KEY",
    "TEA_AGENT_STORE_URL",
)


# Which backend the suite's stores use: ``--store postgres`` (or TEA_TEST_STORE=postgres) runs
# every test on a throwaway PostgreSQL: the home's store is the cluster's migrated database,
# emptied after each test, and ``store_target`` gives that database too. The default, sqlite,
# runs the store's own tests on both backends and the rest on SQLite. A test about what only
# SQLite has (its file, its WAL, sqlite3 itself) is marked ``sqlite_only``.
def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--store",
        choices=("sqlite", "postgres"),
        default=os.environ.get("TEA_TEST_STORE", "sqlite"),
        help="the backend of every test's store (default sqlite; env TEA_TEST_STORE)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "sqlite_only: about SQLite itself; skipped under --store postgres"
    )


def on_postgres(config: pytest.Config) -> bool:
    return config.getoption("--store") == "postgres"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not on_postgres(config):
        return
    skip = pytest.mark.skip(reason="about SQLite itself (--store postgres)")
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if item.get_closest_marker("sqlite_only") or "sqlite" in (
            params.get("store_target"),
            params.get("empty_target"),
        ):
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def tea_home(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> Path:
    """Every test gets its own empty TEA_AGENT_HOME and no model settings from the environment;
    under ``--store postgres`` its store is the cluster's database (TEA_AGENT_STORE_URL)."""
    home = tmp_path_factory.mktemp("tea_home")
    monkeypatch.setenv("TEA_AGENT_HOME", str(home))
    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    if on_postgres(request.config):
        monkeypatch.setenv("TEA_AGENT_STORE_URL", request.getfixturevalue("postgres_url"))
    return home


@pytest.fixture(scope="session")
def postgres_cluster():
    """A throwaway PostgreSQL cluster for the session (tests/pg.py); skips without one."""
    from tests.pg import Cluster, unavailable

    reason = unavailable()
    if reason:
        pytest.skip(reason)
    with Cluster.running() as cluster:
        yield cluster


@pytest.fixture
def postgres_url(postgres_cluster) -> Iterator[str]:
    """The URL of a migrated database with no rows, emptied again afterwards."""
    with postgres_cluster.shared() as url:
        yield url


@pytest.fixture
def empty_postgres_url(postgres_cluster) -> Iterator[str]:
    """The URL of a new database without any table, dropped afterwards."""
    with postgres_cluster.database() as url:
        yield url


# The store on both backends. ``store_target`` is an SQLite file path or the URL of a migrated
# PostgreSQL database with no rows (the postgres case skips, saying why, where PostgreSQL cannot
# be started); ``store`` is that target opened. A test about what only SQLite has (its file, its
# WAL, its query plans and statement trace) keeps to it with
# ``@pytest.mark.parametrize("store_target", ["sqlite"], indirect=True)`` or uses ``tmp_path``;
# one about what only PostgreSQL has uses ``postgres_url``.
BACKENDS = ["sqlite", "postgres"]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """``store_target`` and ``empty_target`` run on both backends, or only on PostgreSQL under
    ``--store postgres`` (the SQLite runs are the default suite's)."""
    backends = ["postgres"] if on_postgres(metafunc.config) else BACKENDS
    for name in ("store_target", "empty_target"):
        if name in metafunc.fixturenames and not _parametrized(metafunc, name):
            metafunc.parametrize(name, backends, indirect=True)


def _parametrized(metafunc: pytest.Metafunc, name: str) -> bool:
    return any(name in mark.args[0] for mark in metafunc.definition.iter_markers("parametrize"))


@pytest.fixture
def store_target(request, tmp_path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "chat.db")
    return request.getfixturevalue("postgres_url")


@pytest.fixture
def empty_target(request, tmp_path) -> str:
    """Like ``store_target``, but a database without any table yet (for migration tests)."""
    if request.param == "sqlite":
        return str(tmp_path / "chat.db")
    return request.getfixturevalue("empty_postgres_url")


@pytest.fixture
def store(store_target):
    from tea_agent_mini.store import Store

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


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    path = tmp_path / "workspace"
    path.mkdir()
    return path


@pytest.fixture
def scripted_server():
    from tests.fakes.background import answer_background
    from tests.fakes.scripted_server import ScriptedServer

    with ScriptedServer() as server:
        # title, summary and memory-extraction prompts are answered by rule, never from the queue
        answer_background(server)
        yield server


@pytest.fixture
def write_config(tea_home: Path):
    """Write ``config.yaml`` (or a named profile) into the test home from a dict."""
    import yaml

    def write(data: dict, name: str = "config") -> Path:
        path = tea_home / f"{name}.yaml"
        path.write_text(yaml.safe_dump(data), encoding="utf-8")
        return path

    return write


@pytest.fixture
def model_config(scripted_server, write_config, workspace: Path) -> Path:
    """A config.yaml pointing the main model at the scripted server and the agent at workspace."""
    return write_config(
        {
            "main_model": {
                "api_key": "sk-test-key-0000",
                "api_url": scripted_server.base_url,
                "model_name": "scripted-model",
                "max_retries": 3,
            },
            "agent": {"workspace": str(workspace)},
        }
    )
