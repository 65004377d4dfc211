"""Helpers for the server tests: the real app on uvicorn on 127.0.0.1 (a free port, in a thread)
and a small SSE reader."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx

from tea_agent_mini.config import load_config
from tea_agent_mini.runtime import Runtime
from tea_agent_mini.server.app import build_server, create_app


@dataclass
class LiveServer:
    url: str
    port: int
    app: Any
    runtime: Runtime
    server: Any
    thread: threading.Thread

    def client(self, **kwargs: Any) -> httpx.Client:
        kwargs.setdefault("timeout", 20.0)
        return httpx.Client(base_url=self.url, **kwargs)

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=15)


def start_server(
    api_key: str | None = None, configure: Callable[[Any], None] | None = None
) -> LiveServer:
    config = load_config()
    if configure is not None:
        configure(config)
    runtime = Runtime(config)
    app = create_app(runtime, api_key=api_key)
    server = build_server(app, "127.0.0.1", 0)
    thread = threading.Thread(target=server.run, name="uvicorn-test", daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    return LiveServer(f"http://127.0.0.1:{port}", port, app, runtime, server, thread)


@dataclass
class SSE:
    event: str | None
    data: Any
    id: int | None = None
    raw: str = ""
    comments: list[str] = field(default_factory=list)


def parse_sse(lines: Iterator[str]) -> Iterator[SSE]:
    """Events from an SSE line stream; ``data`` is decoded JSON (or the raw text)."""
    event: dict[str, Any] = {}
    data: list[str] = []
    for line in lines:
        if line == "":
            if data:
                text = "\n".join(data)
                try:
                    value = json.loads(text)
                except ValueError:
                    value = text
                event_id = event.get("id")
                yield SSE(event.get("event"), value, int(event_id) if event_id else None, text)
            event, data = {}, []
        elif line.startswith(":"):
            continue
        else:
            name, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if name == "data":
                data.append(value)
            else:
                event[name] = value


def read_events(
    client: httpx.Client,
    method: str,
    url: str,
    *,
    until: Callable[[SSE], bool] | None = None,
    **kwargs: Any,
) -> tuple[httpx.Response, list[SSE]]:
    """Send a request answered with SSE; collect events until the stream ends (or ``until``)."""
    events: list[SSE] = []
    with client.stream(method, url, **kwargs) as response:
        if response.status_code != 200:
            response.read()
            return response, events
        for item in parse_sse(response.iter_lines()):
            events.append(item)
            if until is not None and until(item):
                break
    return response, events


def types_of(events: list[SSE]) -> list[str]:
    return [e.event or "" for e in events]
