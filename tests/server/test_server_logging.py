"""The server's log: ``serve`` writes an access line per request (no query strings, no keys),
upstream failures and task runs, to stderr and ``<home>/logs/server.log``;
``tea-agent-mini logs`` prints it."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

from tea_agent_mini.cli.logs import follow
from tests.fakes.background import is_background
from tests.fakes.scripted_server import Reply, last_user_text
from tests.server.test_server_serve import _env, free_port, wait_healthy

KEY = "k3y-" + "s" * 20
QUERY_SECRET = "query-secret-value"


def start(home: Path, port: int) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "tea_agent_mini", "serve", "--port", str(port), "--api-key", KEY],
        env=_env(home),
        stderr=subprocess.PIPE,
        text=True,
    )


def exercise(url: str) -> None:
    auth = {"Authorization": f"Bearer {KEY}"}
    with httpx.Client(base_url=url, timeout=20) as http:
        http.get("/health", params={"api_key": QUERY_SECRET})
        assert http.get("/v1/sessions").status_code == 401
        assert http.get("/v1/sessions", headers=auth).status_code == 200
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        assert http.post("/v1/chat/completions", json=body, headers=auth).status_code == 502
        task = {"name": "nightly", "schedule": "interval:3600", "kind": "prompt", "prompt": "go"}
        task_id = http.post("/v1/tasks", json=task, headers=auth).json()["id"]
        assert http.post(f"/v1/tasks/{task_id}/run", headers=auth).status_code == 200


def test_serve_logs_requests_upstream_errors_and_task_runs(
    model_config, scripted_server, tea_home: Path
):
    upstream = Reply(status=400, error_message="upstream says no")
    scripted_server.on(lambda r: not is_background(r) and last_user_text(r) == "hi", upstream)
    port = free_port()
    process = start(tea_home, port)
    try:
        wait_healthy(f"http://127.0.0.1:{port}", process)
        exercise(f"http://127.0.0.1:{port}")
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    stderr = process.stderr.read()
    log = (tea_home / "logs" / "server.log").read_text()
    for text in (log, stderr):
        assert "GET /health 200 " in text and " ms" in text
        assert "GET /v1/sessions 401 " in text and "GET /v1/sessions 200 " in text
        assert "POST /v1/chat/completions 502 " in text
        assert "upstream says no" in text
        assert "task #1 (nightly) started" in text and "task #1 (nightly): ok after" in text
        assert QUERY_SECRET not in text and "api_key=" not in text and KEY not in text
    banner = next(line for line in stderr.splitlines() if "serving http" in line)
    assert f"log: {tea_home / 'logs' / 'server.log'}" in banner


def run_cli(home: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tea_agent_mini", "logs", *args],
        capture_output=True,
        text=True,
        env=_env(home),
        timeout=30,
    )


def test_logs_prints_the_last_lines(tea_home: Path):
    missing = run_cli(tea_home)
    assert missing.returncode == 1 and "no server log" in missing.stderr
    (tea_home / "logs").mkdir()
    (tea_home / "logs" / "server.log").write_text("".join(f"line {i}\n" for i in range(100)))
    assert run_cli(tea_home, "-n", "3").stdout == "line 97\nline 98\nline 99\n"
    assert run_cli(tea_home).stdout.count("\n") == 50
    assert run_cli(tea_home, "-n", "0").stdout.count("\n") == 100


def test_follow_prints_new_lines_across_a_rotation(tmp_path: Path):
    path = tmp_path / "server.log"
    path.write_text("old\n")
    out = io.StringIO()

    def write() -> None:
        time.sleep(0.3)
        with path.open("a") as handle:
            handle.write("first\nhalf")
        time.sleep(0.4)
        with path.open("a") as handle:
            handle.write(" done\n")
        time.sleep(0.4)
        os.replace(path, tmp_path / "server.log.1")  # what RotatingFileHandler does
        path.write_text("after rotation\n")

    writer = threading.Thread(target=write)
    writer.start()
    follow(path, len("old\n"), out, stop=time.monotonic() + 2.5)
    writer.join()
    assert out.getvalue() == "first\nhalf done\nafter rotation\n"
