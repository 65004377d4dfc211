"""Load what a turn needs when the first client shows up, not at start and not in its first turn.

Importing the turn loop, the model client and the tools takes a few hundred milliseconds (much
more on a Raspberry Pi) and some megabytes. Doing it at start would slow the cold start and grow
an idle server; doing it in the first turn delays the first answer. So the first request for the
UI or an API route starts it in a worker thread, and the user is usually still typing.

Warming up starts the configured MCP servers, which are processes: on a server with an API key only
an authenticated ``/v1`` request may cause that, not a visit to the public UI page.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from typing import TYPE_CHECKING

from starlette.types import ASGIApp, Receive, Scope, Send

if TYPE_CHECKING:
    from ..runtime import Runtime

log = logging.getLogger(__name__)

WARM_MODULES = (
    "tea_agent_mini.agent.session",
    "tea_agent_mini.context.prompts",
    "tea_agent_mini.context.history",
    "tea_agent_mini.llm.client",
    "tea_agent_mini.llm.tokens",
    "tea_agent_mini.llm.textcalls",
    "tea_agent_mini.toolkit.executor",
)


def warm_up(runtime: Runtime) -> None:
    for name in WARM_MODULES:
        importlib.import_module(name)
    runtime.toolkit  # noqa: B018 - a cached property: loading it is the point
    runtime.memory.warm()


class WarmUp:
    """ASGI middleware: the first request to ``/v1`` (or to ``/`` on a server without a key)
    starts :func:`warm_up`. It must sit inside ``RequestGuard``, so a ``/v1`` request that
    reaches it has passed the key check."""

    def __init__(self, app: ASGIApp, runtime: Runtime, keyed: bool = False) -> None:
        self.app = app
        self.runtime = runtime
        self.keyed = keyed
        self.started = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self.started and scope["type"] == "http" and self._starts(scope.get("path", "")):
            self.started = True
            loop = asyncio.get_running_loop()
            loop.run_in_executor(None, warm_up, self.runtime).add_done_callback(_report)
        await self.app(scope, receive, send)

    def _starts(self, path: str) -> bool:
        return path.startswith("/v1/") or (path == "/" and not self.keyed)


def _report(future: asyncio.Future[None]) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.warning("warming up failed: %s", future.exception())
