"""``serve`` says it serves once it listens, says clearly when the port is taken or no model is
set, and a model api_url that reaches tea-agent-mini itself is named as the problem."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tea_agent_mini.server.listen import points_at
from tests.test_cli import cli, cli_env


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_serve(*args: str) -> tuple[subprocess.Popen[str], list[str]]:
    """``serve`` in a subprocess, once it printed its "serving" line; the stderr lines so far."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tea_agent_mini", "serve", *args],
        stderr=subprocess.PIPE,
        text=True,
        env=cli_env(),
    )
    lines: list[str] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line:
            raise AssertionError(f"serve ended: {''.join(lines)}")
        lines.append(line.rstrip("\n"))
        if "serving http" in line:
            return process, lines
    process.kill()
    raise AssertionError("serve did not start")


def stop(process: subprocess.Popen[str]) -> list[str]:
    """The rest of its stderr (all the lines printed right after "serving" are in by now)."""
    process.terminate()
    process.wait(timeout=30)
    return process.stderr.read().splitlines()


def test_serving_is_printed_once_it_listens_with_a_hint_without_model(tea_home: Path):
    port = free_port()
    process, _ = start_serve("--port", str(port))
    try:
        # no retry: the line means the socket is listening
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass
    finally:
        rest = stop(process)
    assert f"no model is configured yet: open http://127.0.0.1:{port}/ to set one up" in rest


def test_a_port_in_use_is_one_clear_line(tea_home: Path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = cli("serve", "--port", str(port), timeout=60)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"error: port {port} is already in use on 127.0.0.1 (another tea-agent-mini, or a "
        "model server?); stop that program, or pass --port / set server.port"
    ]


def test_a_model_url_pointing_at_this_server_is_named(write_config, tea_home: Path):
    port = free_port()
    url = f"http://127.0.0.1:{port}/v1"
    write_config(
        {"main_model": {"api_url": url, "model_name": "m", "max_retries": 0}, "server": {}}
    )
    process, _ = start_serve("--port", str(port))
    try:
        ran = cli("run", "hello")
        doctor = cli("doctor")
    finally:
        rest = stop(process)
    assert f"warning: main_model.api_url {url} is this server itself" in "\n".join(rest)
    said = f"api_url {url} is a tea-agent-mini server (maybe this one), not a model server"
    assert ran.returncode == 1 and said in ran.stderr, ran.stderr
    assert "Traceback" not in ran.stderr
    model_line = next(line for line in doctor.stdout.splitlines() if "] model:" in line)
    assert model_line.startswith("[FAIL]") and said in model_line


@pytest.mark.parametrize(
    ("api_url", "host", "port", "expected"),
    [
        ("http://127.0.0.1:8080/v1", "127.0.0.1", 8080, True),
        ("http://localhost:8080/v1", "127.0.0.1", 8080, True),
        ("http://127.0.0.1:8080/v1", "0.0.0.0", 8080, True),
        ("http://[::1]:8080/v1", "::1", 8080, True),
        ("http://127.0.0.1:8090/v1", "127.0.0.1", 8080, False),
        ("http://127.0.0.1/v1", "127.0.0.1", 80, True),
        ("https://api.openai.com/v1", "0.0.0.0", 443, False),
        ("http://192.168.1.5:8080/v1", "127.0.0.1", 8080, False),
        ("http://[broken/v1", "127.0.0.1", 8080, False),
    ],
)
def test_points_at(api_url, host, port, expected):
    assert points_at(api_url, host, port) is expected
