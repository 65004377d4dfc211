"""The server's log: an access line per request, and where the lines go.

:class:`AccessLog` writes ``METHOD /path STATUS 12.3 ms`` for every request once its response
has ended (streams included). The query string is never written (it can carry keys, as in
``?api_key=``), and neither are headers. :func:`configure` is called by ``serve`` only: the INFO
lines of the package (requests, turn failures, task runs) then go to stderr and to
``<home>/logs/server.log``, rotated, with every configured secret masked.
"""

from __future__ import annotations

import logging
import logging.handlers
import time
from collections.abc import Iterable
from pathlib import Path

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..redact import guard_logs

LOG_FILE = Path("logs") / "server.log"
MAX_BYTES = 5 * 1024 * 1024
BACKUPS = 3
FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
PATH_CHARS = 200

access_log = logging.getLogger("tea_agent_mini.server.access")


class AccessLog:
    """ASGI middleware: one INFO line per HTTP request."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 0

        async def record(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, record)
        finally:
            elapsed = (time.perf_counter() - started) * 1000
            path = scope.get("path", "")[:PATH_CHARS]
            # status 0: the client went away (or the app failed) before any response started
            access_log.info("%s %s %d %.1f ms", scope.get("method", ""), path, status, elapsed)


def log_path(home: Path) -> Path:
    return home / LOG_FILE


def configure(home: Path, secrets: Iterable[str]) -> Path:
    """Send the package's INFO lines to stderr and to the rotated ``server.log``; returns its
    path. Calling it again (another server in the same process) replaces the file handler."""
    path = log_path(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    root = logging.getLogger()
    for handler in [h for h in root.handlers if getattr(h, "tea_server_log", False)]:
        root.removeHandler(handler)
        handler.close()
    handler = logging.handlers.RotatingFileHandler(
        path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8"
    )
    handler.setFormatter(logging.Formatter(FORMAT))
    handler.tea_server_log = True  # type: ignore[attr-defined]  # a mark: replaced on the next call
    root.addHandler(handler)
    if not root.handlers[:-1]:  # nobody set up stderr (serve() called from Python)
        stream = logging.StreamHandler()
        stream.setFormatter(logging.Formatter(FORMAT))
        root.addHandler(stream)
    # INFO at least; DEBUG when the CLI asked for it (-v)
    logging.getLogger("tea_agent_mini").setLevel(min(root.getEffectiveLevel(), logging.INFO))
    guard_logs(secrets)
    return path
