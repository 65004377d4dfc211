"""``tea-agent-mini scheduler`` and ``tea-agent-mini tasks`` as a user runs them: subprocesses."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tea_agent_mini.scheduler.service import TaskService
from tests.pg import home_store

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def shell_config(write_config, workspace: Path) -> Path:
    return write_config({"agent": {"workspace": str(workspace)}})


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tea_agent_mini", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )


def wait_for(condition, what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGTERM is POSIX")
def test_scheduler_runs_tasks_headless_and_stops_cleanly_on_sigterm(
    shell_config, tea_home: Path, workspace: Path
):
    with home_store(tea_home) as store:
        TaskService(store).add("tick", "interval:1", command="echo tick >> ticks.txt")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tea_agent_mini", "scheduler"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stderr), daemon=True)
    reader.start()
    try:
        wait_for(lambda: any("scheduler running" in line for line in lines), "the start")
        assert "1 enabled task(s)" in lines[0]
        wait_for(lambda: (workspace / "ticks.txt").exists(), "the first run")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader.join(timeout=5)
    assert lines[-1].strip() == "scheduler stopped"
    assert not any("Traceback" in line for line in lines)
    with home_store(tea_home) as store:
        task = store.tasks.find("tick")
        runs = store.tasks.runs(task.id)
        assert (
            runs and runs[-1].status == "ok" and runs[-1].output == "" and runs[-1].exit_code == 0
        )
        assert task.lease_owner is None  # nothing left claimed after the stop


def test_tasks_command_adds_and_reports_mistakes(shell_config, tea_home: Path):
    added = cli("tasks", "add", "--name", "hello", "--schedule", "daily:09:00 tz=UTC",
                "--command", "echo hi")  # fmt: skip
    assert added.returncode == 0, added.stderr
    assert added.stdout.startswith("Added:\n#1 hello [shell, enabled] daily:09:00 tz=UTC")
    with home_store(tea_home) as store:
        assert store.tasks.find("hello").command == "echo hi"
    wrong = cli("tasks", "add", "--name", "bad", "--schedule", "at 9", "--command", "true")
    assert wrong.returncode == 1
    assert wrong.stderr.startswith("error: unknown schedule kind in 'at 9'")


def test_tasks_test_previews_a_named_tasks_schedule(shell_config, tea_home: Path):
    added = cli("tasks", "add", "--name", "hello", "--schedule", "daily:09:00 tz=UTC",
                "--kind", "command", "--command", "echo hi")  # fmt: skip
    assert added.returncode == 0, added.stderr
    assert "[shell, enabled]" in added.stdout  # "command" is the web UI's word for shell
    tested = cli("tasks", "test", "hello", "--count", "2")
    assert tested.returncode == 0, tested.stderr
    assert tested.stdout.count("09:00") >= 2 and "UTC" in tested.stdout
    given = cli("tasks", "test", "--schedule", "interval:60", "--count", "1")
    assert given.returncode == 0, given.stderr
    missing = cli("tasks", "test", "nobody")
    assert missing.returncode == 1 and "no task with id or name 'nobody'" in missing.stderr
