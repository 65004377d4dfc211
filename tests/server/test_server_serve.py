"""``serve()`` and ``python -m tea_agent_mini.server``: refusing unsafe binds, startup, SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

import httpx
import pytest

from tea_agent_mini.config import load_config
from tea_agent_mini.server.app import bind_refusal, serve
from tea_agent_mini.shell import proctree
from tea_agent_mini.shell.orphans import Job, JobTable
from tests.fakes.scripted_server import Reply

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20", "example.org"])
def test_serve_refuses_public_bind_without_key(host, capsys):
    assert serve(load_config(), host=host, port=1) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "api key" in err.lower() and host in err


@pytest.mark.parametrize(
    ("host", "key", "refused"),
    [
        ("127.0.0.1", None, False),
        ("localhost", None, False),
        ("::1", None, False),
        ("127.0.0.5", None, False),
        ("[::1]", None, False),
        ("127.0.0.1", "short", False),
        ("0.0.0.0", "k" * 16, False),
        ("0.0.0.0", None, True),
        ("10.0.0.1", "", True),
        ("10.0.0.1", " \t ", True),
    ],
)
def test_bind_refusal(host, key, refused):
    assert (bind_refusal(host, key) is not None) is refused


@pytest.mark.parametrize("key", ["k" * 15, "  " + "k" * 15 + "  "])
def test_a_short_key_is_refused_beyond_loopback(key, capsys):
    assert serve(load_config(), host="0.0.0.0", port=1, api_key=key) == 2
    err = capsys.readouterr().err
    assert "API key of 15 characters" in err and "at least 16" in err


def test_a_whitespace_key_is_no_key(capsys):
    assert serve(load_config(), host="10.0.0.1", port=1, api_key="   ") == 2
    assert "without an API key" in capsys.readouterr().err


def ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as sock:
            sock.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.skipif(not ipv6_loopback(), reason="no IPv6 loopback here")
def test_a_bracketed_ipv6_host_binds_and_is_shown_with_one_pair(tea_home: Path):
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "tea_agent_mini.server", "--host", "[::1]", "--port", str(port)],
        env=_env(tea_home),
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_healthy(f"http://[::1]:{port}", process)
    finally:
        process.terminate()
        process.wait(timeout=15)
    banner = process.stderr.read()
    assert f"serving http://[::1]:{port}/ " in banner and "[[" not in banner, banner


def _env(home: Path) -> dict[str, str]:
    return {**os.environ, "TEA_AGENT_HOME": str(home), "PYTHONPATH": str(ROOT)}


def test_module_entry_point_refuses_too(tea_home: Path):
    result = subprocess.run(
        [sys.executable, "-m", "tea_agent_mini.server", "--host", "0.0.0.0", "--port", "1"],
        capture_output=True,
        text=True,
        env=_env(tea_home),
        timeout=30,
    )
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "refusing" in result.stderr


def test_importing_the_package_does_not_load_the_server_stack(tea_home: Path):
    code = (
        "import sys, tea_agent_mini, tea_agent_mini.server; "
        "print(sorted(m for m in ('starlette', 'uvicorn', 'multipart') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=_env(tea_home)
    )
    assert result.stdout.strip() == "[]", result.stderr


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_healthy(url: str, process: subprocess.Popen, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"server exited: {process.stderr.read()}")
        try:
            if httpx.get(url + "/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.05)
    raise AssertionError("server did not become healthy")


@pytest.mark.sqlite_only
def test_sigterm_stops_a_running_turn_and_closes_the_database(
    model_config, scripted_server, tea_home: Path
):
    scripted_server.on(lambda request: True, Reply(text="z" * 200, delay=0.1, chunk_chars=4))
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "tea_agent_mini.server", "--port", str(port)],
        env=_env(tea_home),
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, process)
        with httpx.Client(base_url=url, timeout=20) as http:
            session = http.post("/v1/sessions", json={}).json()
            with http.stream(
                "POST", f"/v1/sessions/{session['id']}/messages", json={"content": "long"}
            ) as response:
                lines = response.iter_lines()
                assert any(line.startswith("event: token") for line in lines)
                process.send_signal(signal.SIGTERM)
                rest = list(lines)  # the stream ends instead of hanging
        # uvicorn re-raises the signal after its graceful shutdown (the Unix convention)
        assert process.wait(timeout=15) in (0, -signal.SIGTERM)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    stderr = process.stderr.read()
    assert "Traceback" not in stderr, stderr
    assert any('"kind":"cancelled"' in line for line in rest), rest[-4:]
    assert not (tea_home / "chat.db-wal").exists() or (tea_home / "chat.db-wal").stat().st_size == 0
    with sqlite3.connect(tea_home / "chat.db") as db:
        roles = [r[0] for r in db.execute("SELECT role FROM messages ORDER BY id")]
    assert roles[0] == "user"


@pytest.mark.skipif(not proctree.has_proc(), reason="process start times need /proc (Linux)")
def test_start_up_stops_the_commands_a_killed_server_left_running(tea_home: Path, live_factory):
    orphan = subprocess.Popen(["sleep", "300"], start_new_session=True)
    try:
        leader, me = proctree.read_stat(orphan.pid), proctree.read_stat(os.getpid())
        assert leader is not None and me is not None
        # recorded by an earlier process with our pid, which is gone
        job = Job(orphan.pid, leader.start, me.pid, me.start - 1, proctree.boot_id(), "sleep 300")
        folder = JobTable.at(tea_home).folder
        folder.mkdir()
        (folder / f"{me.pid}-{orphan.pid}.json").write_text(json.dumps(asdict(job)))
        live_factory()
        assert orphan.wait(timeout=30) == -signal.SIGTERM
        assert not list(folder.iterdir())
    finally:
        orphan.kill()
        orphan.wait()
