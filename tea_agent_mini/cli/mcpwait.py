"""One-shot commands (run, tools, doctor) see the configured MCP servers' tools: they wait,
bounded and saying so on stderr, for the servers to start."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..mcp.manager import ServerStatus
    from ..runtime import Runtime


def wait_for_mcp(runtime: Runtime) -> list[ServerStatus]:
    """The runtime's toolkit with every configured server's tools in it (as far as the servers
    started within their startup timeout); the servers' final states. Blocks: call it from a
    worker thread inside an event loop."""
    runtime.toolkit  # noqa: B018 - a cached property: loading it starts the servers
    manager = runtime.mcp
    if manager is None:
        return []
    print("waiting for MCP servers to start...", file=sys.stderr, flush=True)
    return manager.wait_ready(manager.startup_timeout)


def report_failures(statuses: list[ServerStatus]) -> None:
    for status in statuses:
        if status.state != "ready":
            line = f"MCP server {status.name}: {status.state} {status.error}"
            print(line.rstrip(), file=sys.stderr)
