"""McpClient behaviour the SDK's server cannot be made to show: a scripted in-memory transport.

(Everything the real server can do is tested against it, in test_mcp_stdio.py and
test_mcp_http.py.) The scripted server answers initialize with a chosen protocol version, can
send requests of its own, and can page tools/list forever.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from tea_agent_mini.mcp.client import PROTOCOL_VERSION, McpClient
from tea_agent_mini.mcp.errors import McpProtocolError, McpRpcError, McpTimeout
from tea_agent_mini.mcp.jsonrpc import (
    ErrorResponse,
    Message,
    Notification,
    Request,
    Response,
    error_response,
)


class ScriptedTransport:
    """Answers requests with ``handler(request)``: a result dict, an ErrorResponse, or None."""

    description = "scripted"

    def __init__(self, handler: Callable[[Request], Any], version: str = PROTOCOL_VERSION):
        self.handler = handler
        self.version = version
        self.sent: list[Message] = []
        self.ready_with: str | None = None
        self.closed = False
        self._deliver: Callable[[Message], None] | None = None

    async def start(self, on_message, on_close) -> None:
        self._deliver = on_message

    async def ready(self, protocol_version: str) -> None:
        self.ready_with = protocol_version

    async def send(self, message: Message) -> None:
        self.sent.append(message)
        if not isinstance(message, Request):
            return
        if message.method == "initialize":
            reply: Any = {"protocolVersion": self.version, "capabilities": {}, "serverInfo": {}}
        else:
            reply = self.handler(message)
        if isinstance(reply, dict):
            self.inject(Response(message.id, reply))
        elif reply is not None:
            self.inject(reply)

    def inject(self, message: Message) -> None:
        assert self._deliver is not None
        asyncio.get_running_loop().call_soon(self._deliver, message)

    async def close(self) -> None:
        self.closed = True


def no_requests(request: Request) -> Any:
    raise AssertionError(f"unexpected request {request.method}")


@pytest.mark.parametrize("version", ["2025-06-18", "2025-03-26", "2024-11-05"])
def test_the_server_may_answer_with_an_older_version_the_client_speaks(version):
    async def scenario():
        transport = ScriptedTransport(no_requests, version)
        client = McpClient(transport)
        info = await client.connect()
        await client.close()
        return transport, info

    transport, info = asyncio.run(scenario())
    assert info.protocol_version == version == transport.ready_with
    first, second = transport.sent[:2]
    assert isinstance(first, Request) and first.method == "initialize"
    assert first.params["protocolVersion"] == PROTOCOL_VERSION
    assert first.params["clientInfo"]["name"] == "tea-agent-mini"
    assert second == Notification("notifications/initialized")


def test_a_version_the_client_does_not_speak_ends_the_connection():
    async def scenario():
        transport = ScriptedTransport(no_requests, "2099-01-01")
        client = McpClient(transport)
        with pytest.raises(McpProtocolError, match="2099-01-01"):
            await client.connect()
        return transport, client

    transport, client = asyncio.run(scenario())
    assert transport.closed and client.closed
    assert not any(isinstance(m, Notification) for m in transport.sent)


def test_pings_from_the_server_are_answered_and_other_requests_refused():
    async def scenario():
        transport = ScriptedTransport(no_requests)
        client = McpClient(transport)
        await client.connect()
        transport.inject(Request("s1", "ping"))
        transport.inject(Request("s2", "sampling/createMessage", {}))
        for _ in range(10):
            await asyncio.sleep(0)
        await client.close()
        return transport.sent

    sent = asyncio.run(scenario())
    assert Response("s1", {}) in sent
    refused = [m for m in sent if isinstance(m, ErrorResponse)]
    assert [(m.id, m.error.code) for m in refused] == [("s2", -32601)]


def test_an_error_response_raises_rpc_error():
    def handler(request: Request) -> Any:
        return error_response(request.id, -32602, "Unknown tool: nope")

    async def scenario():
        client = McpClient(ScriptedTransport(handler))
        await client.connect()
        try:
            await client.call_tool("nope", {})
        finally:
            await client.close()

    with pytest.raises(McpRpcError, match="Unknown tool: nope") as info:
        asyncio.run(scenario())
    assert info.value.code == -32602


def test_a_timed_out_request_is_cancelled_on_the_server():
    async def scenario():
        transport = ScriptedTransport(lambda request: None)  # never answers
        client = McpClient(transport, request_timeout=0.05)
        await client.connect()
        with pytest.raises(McpTimeout, match="tools/call"):
            await client.call_tool("slow", {})
        await asyncio.sleep(0.01)
        await client.close()
        return transport.sent

    sent = asyncio.run(scenario())
    call = next(m for m in sent if isinstance(m, Request) and m.method == "tools/call")
    cancel = next(m for m in sent if isinstance(m, Notification) and "cancel" in m.method)
    assert cancel.method == "notifications/cancelled"
    assert cancel.params["requestId"] == call.id


def test_a_server_that_repeats_a_cursor_is_stopped():
    def handler(request: Request) -> Any:
        return {"tools": [{"name": "t", "inputSchema": {"type": "object"}}], "nextCursor": "same"}

    async def scenario():
        client = McpClient(ScriptedTransport(handler))
        await client.connect()
        try:
            await client.list_tools()
        finally:
            await client.close()

    with pytest.raises(McpProtocolError, match="repeated a cursor"):
        asyncio.run(scenario())


def test_malformed_tools_are_skipped():
    def handler(request: Request) -> Any:
        return {"tools": [{"name": ""}, "junk", {"name": "ok", "inputSchema": "bad"}]}

    async def scenario():
        client = McpClient(ScriptedTransport(handler))
        await client.connect()
        tools = await client.list_tools()
        await client.close()
        return tools

    (tool,) = asyncio.run(scenario())
    assert tool.name == "ok" and tool.input_schema == {"type": "object"}
