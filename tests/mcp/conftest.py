"""Fixtures for the MCP client tests: the SDK-built test server, over stdio and over HTTP.

The server needs the official ``mcp`` SDK (a test dependency only); the modules that run it skip
without it. Server processes are shared per session where the tests allow it, because each start
costs about a second (the SDK is slow to import).
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

SERVER_SCRIPT = Path(__file__).with_name("mcp_test_server.py")


def server_command(transport: str, *options: str) -> list[str]:
    """The test server's command line, as [command, *args]; transport is "stdio" or "http"."""
    return [sys.executable, str(SERVER_SCRIPT), transport, *options]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class HttpServer:
    """The test server run with uvicorn in a subprocess; ``url`` is its MCP endpoint."""

    port: int
    options: tuple[str, ...] = ()
    process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def start(self) -> HttpServer:
        command = server_command("http", "--port", str(self.port), *self.options)
        self.process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        return self

    def wait_ready(self, timeout: float = 20.0) -> HttpServer:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.process is not None and self.process.poll() is None, "server died"
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return self
            except OSError:
                time.sleep(0.05)
        raise TimeoutError(f"the MCP test server on port {self.port} did not start")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture(scope="session")
def http_servers() -> Iterator[dict[str, HttpServer]]:
    """Two HTTP servers, started together: "sse" answers with event streams, "json" with JSON."""
    servers = {
        "sse": HttpServer(free_port()).start(),
        "json": HttpServer(free_port(), ("--json",)).start(),
    }
    try:
        for server in servers.values():
            server.wait_ready()
        yield servers
    finally:
        for server in servers.values():
            server.stop()


@pytest.fixture(scope="session")
def stdio_server() -> list[str]:
    """The stdio test server's command line; each client starts its own process."""
    return server_command("stdio")
