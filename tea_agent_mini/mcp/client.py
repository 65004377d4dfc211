"""`McpClient`: one connection to one MCP server, over any transport.

    client = McpClient(StdioTransport("python", ["server.py"]))
    info = await client.connect()            # start the transport, then the initialize handshake
    tools = await client.list_tools()        # follows nextCursor across pages
    result = await client.call_tool("add", {"a": 1, "b": 2})
    await client.close()

Requests are matched to responses by id; each has a timeout, after which the server is told to
cancel it. Messages the server sends on its own are handled here: ``ping`` is answered,
``notifications/tools/list_changed`` refreshes the tool list, log messages go to the logger.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from tea_agent_mini._version import __version__
from tea_agent_mini.mcp.content import render_content
from tea_agent_mini.mcp.errors import (
    McpError,
    McpProtocolError,
    McpTimeout,
    McpTransportError,
    SessionExpired,
)
from tea_agent_mini.mcp.jsonrpc import (
    METHOD_NOT_FOUND,
    ErrorResponse,
    IdCounter,
    Message,
    Notification,
    Request,
    Response,
    error_response,
)

logger = logging.getLogger(__name__)

PROTOCOL_VERSION = "2025-06-18"
SUPPORTED_VERSIONS = ("2025-06-18", "2025-03-26", "2024-11-05")
MAX_PAGES = 100
_LOG_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "notice": logging.INFO}
_LOG_LEVELS.update({"warning": logging.WARNING, "error": logging.ERROR})


class Transport(Protocol):
    """What the client needs from a transport (``StdioTransport``, ``HttpTransport``)."""

    @property
    def description(self) -> str: ...

    async def start(
        self, on_message: Callable[[Message], None], on_close: Callable[[McpError], None]
    ) -> None: ...

    async def ready(self, protocol_version: str) -> None: ...

    async def send(self, message: Message) -> None: ...

    async def close(self) -> None: ...


@dataclass(frozen=True)
class ServerInfo:
    """What the server said about itself in the initialize handshake."""

    name: str
    version: str
    protocol_version: str
    capabilities: dict[str, Any] = field(default_factory=dict)
    instructions: str = ""


@dataclass(frozen=True)
class McpTool:
    name: str
    description: str
    input_schema: dict[str, Any]
    title: str = ""
    annotations: dict[str, Any] = field(default_factory=dict)

    @property
    def read_only(self) -> bool:
        """The server promises the tool changes nothing (``readOnlyHint``)."""
        return self.annotations.get("readOnlyHint") is True


@dataclass(frozen=True)
class CallResult:
    """A ``tools/call`` result: ``text`` for the model, ``is_error`` when the tool failed."""

    text: str
    is_error: bool = False
    content: list[Any] = field(default_factory=list)
    structured: Any = None


class McpClient:
    """Speaks MCP with one server. All methods run on the event loop that called ``connect``."""

    def __init__(
        self,
        transport: Transport,
        *,
        request_timeout: float = 60.0,
        client_name: str = "tea-agent-mini",
        on_tools_changed: Callable[[list[McpTool]], None] | None = None,
        on_close: Callable[[McpError], None] | None = None,
    ) -> None:
        self.transport = transport
        self.request_timeout = request_timeout
        self.client_name = client_name
        self.on_tools_changed = on_tools_changed
        self.on_close = on_close
        self.server_info: ServerInfo | None = None
        self.tools: list[McpTool] = []
        self.closed = False
        self.close_reason: McpError | None = None
        self._ids = IdCounter()
        self._pending: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._session = 0  # how many handshakes have completed
        self._handshake_lock = asyncio.Lock()

    async def connect(self, *, timeout: float | None = None) -> ServerInfo:
        """Start the transport and run the handshake. On failure the transport is closed.

        ``timeout`` bounds the handshake (servers can be slow to start); default: the request
        timeout.
        """
        await self.transport.start(self._on_message, self._on_transport_closed)
        try:
            return await self.initialize(timeout=timeout)
        except BaseException:
            await self.close()
            raise

    async def initialize(self, *, timeout: float | None = None) -> ServerInfo:
        """The ``initialize`` request, version check, then ``notifications/initialized``."""
        params = {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": {"name": self.client_name, "version": __version__},
        }
        limit = self.request_timeout if timeout is None else timeout
        result = await self._request_once("initialize", params, limit)
        version = result.get("protocolVersion")
        if version not in SUPPORTED_VERSIONS:
            raise McpProtocolError(
                f"{self.transport.description}: the server speaks MCP {version!r}; this client "
                f"speaks {', '.join(SUPPORTED_VERSIONS)}"
            )
        info = result.get("serverInfo")
        server = info if isinstance(info, dict) else {}
        capabilities = result.get("capabilities")
        self.server_info = ServerInfo(
            name=str(server.get("name", "")),
            version=str(server.get("version", "")),
            protocol_version=version,
            capabilities=capabilities if isinstance(capabilities, dict) else {},
            instructions=str(result.get("instructions") or ""),
        )
        await self.transport.ready(version)
        await self.notify("notifications/initialized")
        self._session += 1
        return self.server_info

    async def request(
        self, method: str, params: dict[str, Any] | None = None, *, timeout: float | None = None
    ) -> dict[str, Any]:
        """Send a request and return its result. Raises McpRpcError, McpTimeout, McpTransportError.

        When an HTTP server has forgotten the session, the handshake runs again and the request
        is sent once more.
        """
        limit = self.request_timeout if timeout is None else timeout
        session = self._session
        try:
            return await self._request_once(method, params, limit)
        except SessionExpired:
            async with self._handshake_lock:
                if self._session == session:  # not already renewed by a concurrent request
                    logger.info(
                        "%s: MCP session expired; initializing again", self.transport.description
                    )
                    await self.initialize()
            return await self._request_once(method, params, limit)

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        self._check_open()
        await self.transport.send(Notification(method, params))

    async def ping(self, *, timeout: float | None = None) -> None:
        await self.request("ping", timeout=timeout)

    async def list_tools(self) -> list[McpTool]:
        """All the server's tools, following ``nextCursor`` until the last page."""
        tools: list[McpTool] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(MAX_PAGES):
            result = await self.request("tools/list", {"cursor": cursor} if cursor else None)
            raw_tools = result.get("tools")
            for raw in raw_tools if isinstance(raw_tools, list) else []:
                parsed = _parse_tool(raw)
                if parsed is None:
                    logger.warning(
                        "%s: skipped a malformed tool %r", self.transport.description, raw
                    )
                else:
                    tools.append(parsed)
            cursor = result.get("nextCursor") or None
            if cursor is None:
                break
            if cursor in seen:
                raise McpProtocolError("tools/list: the server repeated a cursor")
            seen.add(cursor)
        self.tools = tools
        return tools

    async def call_tool(
        self, name: str, arguments: dict[str, Any] | None = None, *, timeout: float | None = None
    ) -> CallResult:
        """Call a tool. A tool that fails comes back with ``is_error``; nothing is raised for it."""
        params = {"name": name, "arguments": arguments or {}}
        result = await self.request("tools/call", params, timeout=timeout)
        parts = result.get("content")
        content = parts if isinstance(parts, list) else []
        structured = result.get("structuredContent")
        return CallResult(
            text=render_content(content, structured),
            is_error=result.get("isError") is True,
            content=content,
            structured=structured,
        )

    async def close(self) -> None:
        """Fail what is still waiting, stop background work and close the transport."""
        if not self.closed:
            self.closed = True
            self._fail_pending(McpTransportError(f"{self.transport.description}: client closed"))
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.transport.close()

    async def _request_once(
        self, method: str, params: dict[str, Any] | None, timeout: float
    ) -> dict[str, Any]:
        self._check_open()
        request_id = self._ids.next_id()
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            return await asyncio.wait_for(
                self._exchange(Request(request_id, method, params), future), timeout
            )
        except asyncio.TimeoutError:
            if method != "initialize":  # the spec forbids cancelling the handshake
                self._spawn(self._cancel(request_id, f"no response within {timeout:g}s"))
            raise McpTimeout(
                f"{method}: no response from {self.transport.description} within {timeout:g}s"
            ) from None
        finally:
            self._pending.pop(request_id, None)
            if future.done() and not future.cancelled():
                future.exception()  # failed by the close while a failed send raised: mark it read

    async def _exchange(
        self, request: Request, future: asyncio.Future[dict[str, Any]]
    ) -> dict[str, Any]:
        await self.transport.send(request)
        return await future

    async def _cancel(self, request_id: Any, reason: str) -> None:
        try:
            await self.notify(
                "notifications/cancelled", {"requestId": request_id, "reason": reason}
            )
        except McpError as exc:
            logger.debug("could not cancel request %s: %s", request_id, exc)

    def _check_open(self) -> None:
        if self.closed:
            reason = self.close_reason or McpTransportError("the client is closed")
            raise McpTransportError(f"{self.transport.description}: {reason}")

    def _on_message(self, message: Message) -> None:
        if isinstance(message, (Response, ErrorResponse)):
            self._resolve(message)
        elif isinstance(message, Request):
            self._spawn(self._answer(message))
        else:
            self._on_notification(message)

    def _resolve(self, message: Response | ErrorResponse) -> None:
        future = self._pending.get(message.id)
        if future is None or future.done():
            if isinstance(message, ErrorResponse):
                logger.warning("%s: error response: %s", self.transport.description, message.error)
            return
        if isinstance(message, Response):
            future.set_result(message.result)
        else:
            future.set_exception(message.error.to_exception())

    async def _answer(self, request: Request) -> None:
        # we declare no client capabilities, so ping is the only request a server may send
        if request.method == "ping":
            reply: Message = Response(request.id, {})
        else:
            reply = error_response(request.id, METHOD_NOT_FOUND, f"unsupported: {request.method}")
        try:
            await self.transport.send(reply)
        except McpError as exc:
            logger.debug("could not answer %s: %s", request.method, exc)

    def _on_notification(self, message: Notification) -> None:
        params = message.params or {}
        if message.method == "notifications/tools/list_changed":
            self._spawn(self._refresh_tools())
        elif message.method == "notifications/message":
            level = _LOG_LEVELS.get(str(params.get("level")), logging.WARNING)
            logger.log(level, "[%s] %s", self.transport.description, params.get("data"))
        else:
            logger.debug("%s: %s %s", self.transport.description, message.method, params)

    async def _refresh_tools(self) -> None:
        try:
            tools = await self.list_tools()
        except McpError as exc:
            logger.warning("%s: refreshing tools failed: %s", self.transport.description, exc)
            return
        if self.on_tools_changed is not None:
            self.on_tools_changed(tools)

    def _on_transport_closed(self, error: McpError) -> None:
        if self.closed:
            return
        self.closed = True
        self.close_reason = error
        self._fail_pending(error)
        if self.on_close is not None:
            self.on_close(error)

    def _fail_pending(self, error: McpError) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(error)

    def _spawn(self, coroutine: Any) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def _parse_tool(raw: Any) -> McpTool | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str) or not raw["name"]:
        return None
    schema = raw.get("inputSchema")
    annotations = raw.get("annotations")
    return McpTool(
        name=raw["name"],
        description=str(raw.get("description") or ""),
        input_schema=schema if isinstance(schema, dict) else {"type": "object"},
        title=str(raw.get("title") or ""),
        annotations=annotations if isinstance(annotations, dict) else {},
    )
