"""Subprocess and HTTP plumbing for the proofs: start, wait for readiness, probe, stop."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


class ProcError(Exception):
    """A process did not start, answer or finish as expected; the message says how."""


@dataclass
class Response:
    status: int
    content_type: str
    body: bytes


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def http_get(url: str, timeout: float = 5.0) -> Response:
    """GET without raising on HTTP error statuses; raises OSError when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as reply:
            return Response(reply.status, reply.headers.get("content-type", ""), reply.read())
    except urllib.error.HTTPError as exc:
        return Response(exc.code, exc.headers.get("content-type", ""), exc.read())


def run(
    command: Sequence[str], *, cwd: Path, env: dict[str, str], timeout: float = 120.0
) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            list(command), cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired as exc:
        raise ProcError(f"{command[0]} did not finish within {timeout:.0f} s") from exc
    except OSError as exc:
        raise ProcError(f"cannot run {command[0]}: {exc}") from exc


class Background:
    """A long-running child whose stdout and stderr are collected by reader threads."""

    def __init__(self, command: Sequence[str], *, cwd: Path, env: dict[str, str]) -> None:
        self.command = list(command)
        self.lines: list[str] = []
        self.errors: list[str] = []
        try:
            self.proc = subprocess.Popen(
                self.command,
                cwd=cwd,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        except OSError as exc:
            raise ProcError(f"cannot start {self.command[0]}: {exc}") from exc
        self._readers = [
            threading.Thread(target=self._pump, args=(stream, sink), daemon=True)
            for stream, sink in ((self.proc.stdout, self.lines), (self.proc.stderr, self.errors))
        ]
        for reader in self._readers:
            reader.start()

    @staticmethod
    def _pump(stream, sink: list[str]) -> None:
        for line in stream:
            sink.append(line.rstrip("\n"))

    def output_tail(self, count: int = 12) -> str:
        return "\n".join((self.lines + self.errors)[-count:])

    def exited(self) -> str:
        """'' while running, else a description of how it ended (with its last output)."""
        code = self.proc.poll()
        if code is None:
            return ""
        time.sleep(0.1)  # let the reader threads drain the pipes
        return f"exited with code {code}: {self.output_tail() or '(no output)'}"

    def wait_for_line(self, prefix: str, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in self.lines:
                if line.startswith(prefix):
                    return line[len(prefix) :].strip()
            ended = self.exited()
            if ended:
                raise ProcError(f"{self.command[0]} {ended}")
            time.sleep(0.02)
        raise ProcError(f"no {prefix!r} line within {timeout:.0f} s: {self.output_tail()}")

    def wait_for_http(self, url: str, timeout: float) -> tuple[Response, float]:
        """Poll until ``url`` answers 200; returns the response and the seconds it took."""
        started = time.monotonic()
        last = "no answer yet"
        while time.monotonic() - started < timeout:
            ended = self.exited()
            if ended:
                raise ProcError(f"the server {ended}")
            try:
                response = http_get(url, timeout=2.0)
            except OSError as exc:
                last = str(exc)
            else:
                if response.status == 200:
                    return response, time.monotonic() - started
                last = f"HTTP {response.status}"
            time.sleep(0.05)
        raise ProcError(f"{url} gave no 200 within {timeout:.0f} s ({last})")

    def stop(self, grace: float = 10.0) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(grace)
        for reader in self._readers:
            reader.join(2.0)
        for stream in (self.proc.stdout, self.proc.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.close()

    def __enter__(self) -> Background:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
