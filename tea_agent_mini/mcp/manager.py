"""`McpManager`: the configured MCP servers, their state, and their tools as toolkit tools.

    manager = McpManager(config.mcp_servers, config.home)
    manager.register_into(toolkit)     # starts the servers, adds mcp_<server>_<tool> tools
    ...
    manager.close()

Each server is ``stopped``, ``starting``, ``ready`` or ``failed`` (with the error). A server that
crashed is started again by the next call to one of its tools, after a backoff that doubles with
each consecutive failure; after ``max_restarts`` failures in a row it stays failed until
``restart`` is asked for (``toolkit_mcp action=restart``).

All connections live on one event loop in one background thread (`BackgroundLoop`), the one
bridge between event loops in the package: connections must outlive any one caller's loop (the
CLI runs each command on a loop of its own). The tools' functions are ``async``: the executor
awaits them on the turn's loop while the call runs on this one; synchronous callers block on
``call_tool``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tea_agent_mini.errors import ToolError
from tea_agent_mini.mcp.client import CallResult, McpClient, McpTool
from tea_agent_mini.mcp.errors import McpError, McpTimeout, McpTransportError
from tea_agent_mini.mcp.loop import BackgroundLoop
from tea_agent_mini.mcp.naming import build_specs
from tea_agent_mini.mcp.servers import ServerConfig, load_servers
from tea_agent_mini.redact import mask_text
from tea_agent_mini.toolkit.registry import Toolkit, ToolSpec

logger = logging.getLogger(__name__)

STOPPED, STARTING, READY, FAILED = "stopped", "starting", "ready", "failed"


@dataclass(frozen=True)
class ServerStatus:
    """A snapshot of one server for display (``toolkit_mcp``, the web UI)."""

    name: str
    state: str
    error: str
    transport: str
    target: str
    tools: tuple[str, ...] = ()  # the toolkit names, mcp_<server>_<tool>
    failures: int = 0
    pid: int | None = None
    server_name: str = ""
    protocol_version: str = ""


@dataclass
class _Server:
    config: ServerConfig
    state: str = STOPPED
    error: str = ""
    client: McpClient | None = None
    tools: list[McpTool] = field(default_factory=list)
    names: dict[str, str] = field(default_factory=dict)  # toolkit name -> MCP tool name
    specs: list[ToolSpec] = field(default_factory=list)
    failures: int = 0  # consecutive failed starts and crashes
    last_failure: float = 0.0
    lock: asyncio.Lock | None = None  # created on the loop


class McpManager:
    """Runs the MCP servers of one runtime. Thread-safe: call it from any thread."""

    def __init__(
        self,
        config_servers: Mapping[str, Any] | None,
        home: Path,
        *,
        request_timeout: float = 60.0,
        startup_timeout: float = 30.0,
        max_restarts: int = 3,
        backoff: float = 1.0,
    ) -> None:
        self.home = Path(home)
        self.request_timeout = request_timeout
        self.startup_timeout = startup_timeout
        self.max_restarts = max_restarts
        self.backoff = backoff
        found = load_servers(config_servers, self.home)
        self.config_errors = list(found.file_errors)  # files that could not be read at all
        self._servers = {name: _Server(config) for name, config in found.servers.items()}
        for name, error in found.errors.items():
            # a bad entry shows up as a failed server, so toolkit_mcp can say what is wrong
            self._servers[name] = _Server(ServerConfig(name=name, enabled=False), FAILED, error)
        for error in [*found.file_errors, *found.errors.values()]:
            logger.warning("MCP server config: %s", error)
        self._toolkits: list[Any] = []
        self._loop = BackgroundLoop()

    # ---- sync API (any thread) ----

    def names(self) -> list[str]:
        return list(self._servers)

    def start(self, names: list[str] | None = None) -> list[ServerStatus]:
        """Start the enabled servers that are not running (concurrently) and wait for them."""
        selected = [self._record(name) for name in names] if names else self._startable()
        if selected:
            self._loop.run(self._start_all(selected), self.startup_timeout + 10)
        return self.status()

    def register_into(self, toolkit: Toolkit, *, wait: bool = True) -> None:
        """Add every ready server's tools to ``toolkit``, and keep it in sync from now on.

        ``wait=False`` returns at once; each server's tools appear when it is ready.
        """
        if not any(known is toolkit for known in self._toolkits):
            self._toolkits.append(toolkit)
        if not self._servers:
            return
        # toolkits are changed on the loop only, where restarts and list changes happen too
        if wait:
            self.start()
            self._loop.run(self._sync_into(toolkit), 10.0)
        else:
            self._loop.submit(self._sync_into(toolkit))
            self._loop.submit(self._start_all(self._startable()))

    def pending(self) -> bool:
        """Whether an enabled server is not up yet: asked to start (a toolkit registered with
        ``wait=False``) or starting."""
        return any(
            r.config.enabled and r.state in (STOPPED, STARTING) for r in self._servers.values()
        )

    def wait_ready(self, timeout: float) -> list[ServerStatus]:
        """Wait (at most ``timeout`` seconds) until every enabled server is ready or failed, then
        bring the toolkits up to date: for one-shot commands, whose first request should offer
        the servers' tools."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and any(
            r.config.enabled and r.state in (STOPPED, STARTING) for r in self._servers.values()
        ):
            time.sleep(0.05)
        for toolkit in self._toolkits:
            self._loop.run(self._sync_into(toolkit), 10.0)
        return self.status()

    def call_tool(
        self, server: str, tool: str, arguments: dict[str, Any], *, timeout: float | None = None
    ) -> str:
        """Call ``tool`` on ``server`` and return its text, from synchronous code.

        Raises ToolError when the tool fails, McpError when the server cannot be reached."""
        record = self._record(server)
        limit = timeout or record.config.timeout or self.request_timeout
        with _named_errors(record):
            result = self._loop.run(self._call(record, tool, arguments, limit), self._outer(limit))
        return _result_text(record, server, tool, result)

    async def acall_tool(
        self, server: str, tool: str, arguments: dict[str, Any], *, timeout: float | None = None
    ) -> str:
        """:meth:`call_tool` for code on another event loop (the tool functions the toolkit
        awaits): the call runs on this manager's loop while the caller's loop stays free."""
        record = self._record(server)
        limit = timeout or record.config.timeout or self.request_timeout
        with _named_errors(record):
            result = await self._loop.wait(
                self._call(record, tool, arguments, limit), self._outer(limit)
            )
        return _result_text(record, server, tool, result)

    def restart(self, server: str) -> ServerStatus:
        """Stop the server if it runs, forget its failures, and start it again."""
        record = self._record(server)
        if not record.config.enabled:
            raise McpError(_unusable(record))
        self._loop.run(self._restart(record), self.startup_timeout + 10)
        return self.server_status(server)

    def status(self) -> list[ServerStatus]:
        return [self.server_status(name) for name in self._servers]

    def server_status(self, name: str) -> ServerStatus:
        record = self._record(name)
        client = record.client
        info = client.server_info if client is not None else None
        pid = getattr(client.transport, "pid", None) if client is not None else None
        return ServerStatus(
            name=name,
            state=record.state,
            error=record.error,
            transport=record.config.transport,
            target=record.config.target,
            tools=tuple(record.names),
            failures=record.failures,
            pid=pid if record.state == READY else None,
            server_name=info.name if info else "",
            protocol_version=info.protocol_version if info else "",
        )

    def close(self) -> None:
        """Stop every server and the background loop; remove the tools from the toolkits."""
        if self._loop.running:
            try:
                self._loop.run(self._stop_all(), 15.0)
            except McpError as exc:
                logger.warning("closing MCP servers: %s", exc)
        self._loop.stop()
        for record in self._servers.values():
            for toolkit in self._toolkits:
                for name in record.names:
                    _unregister_ours(toolkit, name, record.config.name)
        self._toolkits.clear()

    # ---- on the loop ----

    async def _start_all(self, records: list[_Server]) -> None:
        results = await asyncio.gather(
            *(self._ensure_ready(record) for record in records), return_exceptions=True
        )
        for record, result in zip(records, results, strict=True):
            if isinstance(result, BaseException) and not isinstance(result, McpError):
                logger.error("MCP server %s: %r", record.config.name, result)

    async def _sync_into(self, toolkit: Toolkit) -> None:
        for record in self._servers.values():
            _sync(toolkit, record)

    async def _call(
        self, record: _Server, tool: str, arguments: dict[str, Any], timeout: float
    ) -> CallResult:
        client = await self._ensure_ready(record)
        try:
            result = await client.call_tool(tool, arguments, timeout=timeout)
        except McpTimeout:
            raise
        except McpTransportError as exc:
            self._mark_failed(record, exc)
            raise McpTransportError(
                f"MCP server {record.config.name!r} failed during {tool!r}: {exc}. "
                "It will be started again on the next call."
            ) from exc
        record.failures = 0
        return result

    async def _ensure_ready(self, record: _Server) -> McpClient:
        if record.lock is None:
            record.lock = asyncio.Lock()
        async with record.lock:
            client = record.client
            if record.state == READY and client is not None and not client.closed:
                return client
            name = record.config.name
            if not record.config.enabled:
                raise McpError(_unusable(record))
            if record.failures > self.max_restarts:
                raise McpError(
                    f"MCP server {name!r} failed {record.failures} times in a row; last error: "
                    f"{record.error}. Use toolkit_mcp action=restart to try again."
                )
            if record.failures:
                wait = self._backoff(record.failures) - (time.monotonic() - record.last_failure)
                if wait > 0:
                    await asyncio.sleep(wait)
            return await self._start(record)

    async def _start(self, record: _Server) -> McpClient:
        name = record.config.name
        record.state, record.error = STARTING, ""
        client = McpClient(
            self._transport(record.config),
            request_timeout=record.config.timeout or self.request_timeout,
        )
        client.on_tools_changed = lambda tools: self._tools_changed(record, client, tools)
        client.on_close = lambda error: self._closed(record, client, error)
        try:
            await asyncio.wait_for(self._connect(client), self.startup_timeout)
        except (McpError, OSError, asyncio.TimeoutError) as exc:
            await client.close()
            message = _clean(record, str(exc)) or f"no answer within {self.startup_timeout:g}s"
            self._mark_failed(record, McpError(message))
            raise McpError(f"MCP server {name!r} could not start: {message}") from exc
        record.client, record.state = client, READY
        self._set_tools(record, client.tools)
        logger.info("MCP server %s ready with %d tools", name, len(client.tools))
        return client

    async def _connect(self, client: McpClient) -> None:
        await client.connect(timeout=self.startup_timeout)
        await client.list_tools()

    async def _restart(self, record: _Server) -> None:
        await self._stop(record)
        record.failures = 0
        await self._ensure_ready(record)

    async def _stop_all(self) -> None:
        await asyncio.gather(*(self._stop(r) for r in self._servers.values()))

    async def _stop(self, record: _Server) -> None:
        client, record.client = record.client, None
        if record.state in (READY, STARTING):
            record.state = STOPPED
        if client is not None:
            await client.close()

    def _transport(self, config: ServerConfig) -> Any:
        if config.url:
            from tea_agent_mini.mcp.http import HttpTransport

            return HttpTransport(config.url, config.headers)
        from tea_agent_mini.mcp.stdio import StdioTransport

        log = self.home / "logs" / f"mcp-{config.name}.log"
        return StdioTransport(
            config.command, config.args, env=config.env, cwd=config.cwd, stderr_path=log
        )

    def _closed(self, record: _Server, client: McpClient, error: McpError) -> None:
        if record.client is client:
            self._mark_failed(record, error)

    def _tools_changed(self, record: _Server, client: McpClient, tools: list[McpTool]) -> None:
        if record.client is client:
            self._set_tools(record, tools)

    def _mark_failed(self, record: _Server, error: Exception) -> None:
        if record.state == FAILED and record.client is None:
            return  # already counted (the close callback and the call both report a crash)
        record.state, record.error, record.client = FAILED, _clean(record, str(error)), None
        record.failures += 1
        record.last_failure = time.monotonic()
        logger.warning("MCP server %s failed: %s", record.config.name, record.error)

    def _set_tools(self, record: _Server, tools: list[McpTool]) -> None:
        record.tools = tools
        specs = build_specs(record.config.name, tools, self._tool_func)
        record.names = {spec.name: tool for spec, tool in specs}
        record.specs = [spec for spec, _ in specs]
        for toolkit in self._toolkits:
            _sync(toolkit, record)

    def _tool_func(self, server: str, tool: str) -> Any:
        async def run(_ctx: Any, /, **arguments: Any) -> str:
            return await self.acall_tool(server, tool, arguments)

        return run

    # ---- helpers ----

    def _record(self, name: str) -> _Server:
        record = self._servers.get(name)
        if record is None:
            known = ", ".join(self._servers) or "none configured"
            raise McpError(f"no MCP server named {name!r} (servers: {known})")
        return record

    def _startable(self) -> list[_Server]:
        return [r for r in self._servers.values() if r.config.enabled and r.state == STOPPED]

    def _backoff(self, failures: int) -> float:
        return min(self.backoff * 2 ** (failures - 1), 30.0)

    def _outer(self, timeout: float) -> float:
        """How long a caller waits in all: the call plus a possible restart."""
        return timeout + self.startup_timeout + self._backoff(self.max_restarts) + 5


def _sync(toolkit: Toolkit, record: _Server) -> None:
    """Make ``toolkit`` hold exactly this server's current tools."""
    server = record.config.name
    wanted = {spec.name: spec for spec in record.specs}
    with toolkit.lock:
        for spec in toolkit.specs():
            if spec.module == f"mcp:{server}" and spec.name not in wanted:
                toolkit.unregister(spec.name)
        for name, spec in wanted.items():
            if toolkit.get(name) is spec:
                continue
            _unregister_ours(toolkit, name, server)
            try:
                toolkit.register(spec)
            except ValueError as exc:
                logger.warning("MCP server %s: tool %s not added: %s", server, name, exc)


def _unregister_ours(toolkit: Toolkit, name: str, server: str) -> None:
    existing = toolkit.get(name)
    if existing is not None and existing.module == f"mcp:{server}":
        toolkit.unregister(name)


@contextlib.contextmanager
def _named_errors(record: _Server) -> Iterator[None]:
    """A timeout or a transport error names the command line; cleaned of secrets here."""
    try:
        yield
    except McpError as exc:
        text = _clean(record, str(exc))
        if text != str(exc):
            exc.args = (text,)
        raise


def _result_text(record: _Server, server: str, tool: str, result: Any) -> str:
    if result.is_error:
        text = _clean(record, result.text)
        raise ToolError(f"MCP tool {tool!r} on server {server!r} failed: {text}")
    return _clean(record, result.text)


def _clean(record: _Server, text: str) -> str:
    """``text`` (an error, a tool's output) without the secrets of the server's entry."""
    return mask_text(text, record.config.secrets)


def _unusable(record: _Server) -> str:
    name = record.config.name
    if record.error:  # an entry that could not be parsed
        return f"MCP server {name!r} cannot be used: {record.error}"
    return f"MCP server {name!r} is disabled in the configuration"
