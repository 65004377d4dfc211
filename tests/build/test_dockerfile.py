"""The Dockerfile without a Docker engine (none runs on this machine or in CI): its shape is read
from the file, and its own CMD and HEALTHCHECK commands are run here as the container would run
them (same shell line, same environment, the port moved to a free one), against this checkout's
``tea-agent-mini``."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "Dockerfile"
TOKEN = "container-token-1234"


def instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text(encoding="utf-8"))
    found = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            found.append((word.upper(), rest.strip()))
    return found


def one(name: str) -> str:
    values = [rest for word, rest in instructions() if word == name]
    assert len(values) == 1, f"expected one {name}, found {values}"
    return values[0]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_shape_slim_python_non_root_data_volume_healthcheck():
    assert re.fullmatch(r"python:3\.\d+-slim", one("FROM"))
    assert one("USER") not in ("root", "0")
    assert json.loads(one("VOLUME")) == ["/data"]
    assert one("EXPOSE") == "8080"
    env = one("ENV")
    assert "TEA_AGENT_HOME=/data" in env
    assert "pip install" in one("RUN") and "useradd" in one("RUN")
    assert "dist/" in one("COPY")
    ignore = (ROOT / ".dockerignore").read_text().split()
    assert "*" in ignore and any("dist/*.whl" in line for line in ignore)


@pytest.fixture
def container_env(tmp_path: Path) -> dict[str, str]:
    """What the image puts on PATH (``python``, ``tea-agent-mini``) and its ENV."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    launcher = bin_dir / "tea-agent-mini"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m tea_agent_mini "$@"\n')
    launcher.chmod(0o755)
    keep = {k: v for k, v in os.environ.items() if k in ("LANG", "LC_ALL", "SYSTEMROOT")}
    return {
        **keep,
        "PATH": f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin",
        "PYTHONPATH": str(ROOT),
        "HOME": str(tmp_path / "user"),
        "TEA_AGENT_HOME": str(tmp_path / "data"),
        "PYTHONUNBUFFERED": "1",
    }


def commands(port: int) -> tuple[list[str], list[str]]:
    cmd = json.loads(one("CMD").replace("8080", str(port)))
    check = one("HEALTHCHECK")
    check_cmd = json.loads(check[check.index("CMD") + 3 :].replace("8080", str(port)))
    return cmd, check_cmd


@pytest.mark.skipif(sys.platform.startswith("win"), reason="the image runs a POSIX shell")
def test_cmd_refuses_without_a_token(container_env):
    (Path(container_env["TEA_AGENT_HOME"])).mkdir()
    cmd, _ = commands(free_port())
    result = subprocess.run(cmd, env=container_env, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "0.0.0.0" in result.stderr and "api" in result.stderr.lower(), result.stderr


@pytest.mark.skipif(sys.platform.startswith("win"), reason="the image runs a POSIX shell")
def test_cmd_serves_with_the_token_from_the_environment(container_env):
    data = Path(container_env["TEA_AGENT_HOME"])
    data.mkdir()
    port = free_port()
    cmd, health_cmd = commands(port)
    env = {**container_env, "TEA_AGENT_API_KEY": TOKEN}
    server = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while True:
            check = subprocess.run(health_cmd, env=env, capture_output=True, timeout=30)
            if check.returncode == 0:
                break
            assert server.poll() is None, server.stdout.read().decode()
            assert time.monotonic() < deadline, check.stderr.decode()
            time.sleep(0.2)
        assert (data / "workspace").is_dir()
        base = f"http://127.0.0.1:{port}"
        assert httpx.get(f"{base}/v1/models").status_code == 401
        auth = {"Authorization": f"Bearer {TOKEN}"}
        assert httpx.get(f"{base}/v1/config", headers=auth).status_code == 200
        assert TOKEN not in httpx.get(f"{base}/v1/config", headers=auth).text
    finally:
        server.terminate()
        server.wait(timeout=15)
