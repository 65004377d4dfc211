"""Shared fixtures: an isolated home directory for every test, the scripted model server, and a
throwaway PostgreSQL for the tests that run on it."""

from __future__ import annotations

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


@pytest.fixture(autouse=True)
def tea_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own empty TEA_AGENT_HOME and no model settings from the environment."""
    home = tmp_path_factory.mktemp("tea_home")
    monkeypatch.setenv("TEA_AGENT_HOME", str(home))
    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)
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
