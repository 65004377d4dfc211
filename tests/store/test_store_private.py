"""chat.db, its -wal and -shm are 0600; a home the store creates is 0700, an existing one keeps
its mode. Checked with os.stat on the real files."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tea_agent_mini.store import Store

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")

ROOT = Path(__file__).resolve().parents[2]


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def database_files(db: Path) -> list[Path]:
    return [db, db.with_name("chat.db-wal"), db.with_name("chat.db-shm")]


def test_a_new_home_is_0700_and_the_database_files_0600(tmp_path: Path):
    home = tmp_path / "a" / "home"
    db = home / "chat.db"
    with Store.open(db) as store:
        store.topics.create("private")
        assert all(path.exists() for path in database_files(db))
        assert [mode(path) for path in database_files(db)] == [0o600] * 3
    assert mode(home) == 0o700 and mode(tmp_path / "a") == 0o700


def test_existing_files_are_tightened_and_an_existing_home_is_left(tmp_path: Path):
    home = tmp_path / "home"
    home.mkdir()
    home.chmod(0o755)
    db = home / "chat.db"
    with Store.open(db) as store:
        store.topics.create("before")
    db.chmod(0o644)
    shm = db.with_name("chat.db-shm")
    shm.write_bytes(b"")  # a stale one left by an older build
    shm.chmod(0o644)
    with Store.open(db) as store:
        assert mode(db) == 0o600 and mode(shm) == 0o600
        store.topics.create("after")
        assert mode(db.with_name("chat.db-wal")) == 0o600
    assert mode(home) == 0o755


@pytest.mark.sqlite_only
def test_the_cli_creates_its_home_private(tmp_path: Path):
    home = tmp_path / "fresh-home"
    env = {**os.environ, "TEA_AGENT_HOME": str(home), "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "tea_agent_mini", "tasks"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert mode(home) == 0o700 and mode(home / "chat.db") == 0o600
