"""kill -9 during memory extraction, start again, and the extraction completes: the follow-up
jobs of a turn are rows in the store until done, and the next start takes over those whose
process is gone."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

from tests.fakes.background import is_extraction
from tests.fakes.scripted_server import Reply
from tests.pg import home_store
from tests.test_cli import cli, cli_env

FRUIT = '{"memories": [{"content": "The user\'s favourite fruit is mango", "kind": "fact"}]}'


def wait_until(check, deadline: float = 60.0, what: str = "the condition") -> None:
    end = time.monotonic() + deadline
    while not check():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def job_rows(home: Path) -> list[tuple[str, str, int]]:
    with home_store(home) as store:
        return [(j.kind, j.status, j.attempts) for j in reversed(store.jobs.recent(50))]


def memories(home: Path) -> list[str]:
    with home_store(home) as store:
        return [m.content for m in store.memories.matching(now=time.time())]


def test_a_killed_extraction_completes_at_the_next_start(model_config, scripted_server, tea_home):
    entered, release = threading.Event(), threading.Event()

    def extraction(request: dict) -> Reply:
        if "mango" not in request["messages"][1]["content"]:
            return Reply(text='{"memories": []}')
        if not release.is_set():
            entered.set()
            release.wait(60)  # held until the process asking has been killed
            return Reply(text='{"memories": []}')  # to nobody: that process is gone
        return Reply(text=FRUIT)

    scripted_server.on(is_extraction, extraction)
    scripted_server.push(Reply(text="Noted, mango it is."))
    first = subprocess.Popen(
        [sys.executable, "-m", "tea_agent_mini", "run", "remember: my favourite fruit is mango"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=cli_env(),
    )
    try:
        wait_until(entered.is_set, what="the extraction request")
        assert ("memory", "running", 1) in job_rows(tea_home)
        first.kill()  # SIGKILL: no drain, no cleanup
        first.wait(timeout=30)
    finally:
        release.set()
        if first.poll() is None:
            first.kill()
            first.wait(timeout=30)
    assert first.returncode == -9
    assert memories(tea_home) == []

    result = cli("run", "what is the weather?")
    assert result.returncode == 0, result.stderr
    assert "The user's favourite fruit is mango" in memories(tea_home)
    kinds = {(kind, status) for kind, status, _ in job_rows(tea_home)}
    assert ("memory", "running") not in kinds and ("memory", "pending") not in kinds
    memory_rows = [row for row in job_rows(tea_home) if row[0] == "memory"]
    assert memory_rows[0] == ("memory", "done", 2)  # the killed attempt, then the one that worked
