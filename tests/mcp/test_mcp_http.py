"""McpClient over streamable HTTP against a real SDK server run by uvicorn.

Each test runs against both answer styles the transport allows: an SSE stream per request
("sse") and a plain JSON body ("json").
"""

from __future__ import annotations

import asyncio

import httpx
import pytest

from tea_agent_mini.mcp.client import McpClient
from tea_agent_mini.mcp.errors import McpTimeout, McpTransportError
from tea_agent_mini.mcp.http import HttpTransport

pytest.importorskip(
    "mcp.server.mcpserver", reason="needs the official mcp SDK >= 2 (test dependency)"
)

MODES = ["sse", "json"]
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t"}},
}


async def connected(url: str, **options) -> tuple[McpClient, HttpTransport]:
    transport = HttpTransport(url, **options)
    client = McpClient(transport, request_timeout=10)
    await client.connect()
    return client, transport


@pytest.mark.parametrize(
    ("mode", "content_type"), [("sse", "text/event-stream"), ("json", "application/json")]
)
def test_the_two_servers_really_answer_in_their_styles(http_servers, mode, content_type):
    headers = {"Accept": "application/json, text/event-stream"}
    response = httpx.post(http_servers[mode].url, json=INITIALIZE, headers=headers)
    assert response.headers["content-type"].startswith(content_type)


@pytest.mark.parametrize("mode", MODES)
def test_initialize_list_and_call(http_servers, mode):
    async def scenario():
        client, transport = await connected(http_servers[mode].url)
        try:
            session = transport.session_id
            tools = {tool.name: tool for tool in await client.list_tools()}
            added = await client.call_tool("add", {"a": 20, "b": 22})
            image = await client.call_tool("picture", {})
            await client.ping()
            return client.server_info, session, tools, added, image
        finally:
            await client.close()

    info, session, tools, added, image = asyncio.run(scenario())
    assert info.name == "tea-test-server" and info.protocol_version == "2025-06-18"
    assert session  # the server handed out a session id with the initialize response
    assert tools["add"].input_schema["properties"]["b"]["type"] == "integer"
    assert (added.text, added.is_error) == ("42", False)
    assert image.text == "a red dot\n[image image/png, 70 bytes]"


@pytest.mark.parametrize("mode", MODES)
def test_failures_come_back_as_error_results(http_servers, mode):
    async def scenario():
        client, _ = await connected(http_servers[mode].url)
        try:
            return await client.call_tool("fail", {})
        finally:
            await client.close()

    result = asyncio.run(scenario())
    assert result.is_error and "fail" in result.text


@pytest.mark.parametrize("mode", MODES)
def test_a_slow_call_times_out_and_the_session_stays_usable(http_servers, mode):
    async def scenario():
        client, _ = await connected(http_servers[mode].url)
        try:
            with pytest.raises(McpTimeout):
                await client.call_tool("slow", {"seconds": 5}, timeout=0.2)
            return (await client.call_tool("echo", {"text": "still here"})).text
        finally:
            await client.close()

    assert asyncio.run(scenario()) == "still here"


def test_a_tool_list_change_during_a_call_refreshes_the_tools(http_servers):
    async def scenario():
        client, _ = await connected(http_servers["sse"].url)
        changed = asyncio.Event()
        client.on_tools_changed = lambda tools: changed.set()
        try:
            await client.call_tool("grow", {"name": "grown_http"})
            await asyncio.wait_for(changed.wait(), 10)
            return {tool.name for tool in client.tools}
        finally:
            await client.close()

    assert "grown_http" in asyncio.run(scenario())


def test_close_ends_the_session_on_the_server(http_servers):
    url = http_servers["sse"].url

    async def scenario():
        client, transport = await connected(url, listen=False)
        session = transport.session_id
        await client.close()
        return session

    session = asyncio.run(scenario())
    headers = {
        "Accept": "application/json, text/event-stream",
        "Mcp-Session-Id": session,
        "MCP-Protocol-Version": "2025-06-18",
    }
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    assert httpx.post(url, json=ping, headers=headers).status_code == 404


def test_an_expired_session_is_initialized_again(http_servers):
    """The server ends the session (here: a DELETE from outside); the next calls get 404,
    one new handshake runs, and every call is answered."""
    url = http_servers["sse"].url

    async def scenario():
        client, transport = await connected(url, listen=False)
        try:
            before = transport.session_id
            headers = {"Mcp-Session-Id": before, "MCP-Protocol-Version": "2025-06-18"}
            async with httpx.AsyncClient() as outsider:
                assert (await outsider.delete(url, headers=headers)).status_code == 200
            calls = [client.call_tool("add", {"a": i, "b": 2}) for i in range(4)]
            results = await asyncio.gather(*calls)
            return before, transport.session_id, [result.text for result in results], client
        finally:
            await client.close()

    before, after, texts, client = asyncio.run(scenario())
    assert texts == ["2", "3", "4", "5"]
    assert after and after != before
    assert client._session == 2  # the first handshake and exactly one renewal


def test_an_unreachable_server_is_a_transport_error():
    async def scenario():
        client = McpClient(HttpTransport("http://127.0.0.1:9/mcp", connect_timeout=2))
        await client.connect()

    with pytest.raises(McpTransportError, match="127.0.0.1:9"):
        asyncio.run(scenario())


def test_a_non_mcp_endpoint_is_reported_with_its_status(http_servers):
    async def scenario():
        client = McpClient(HttpTransport(http_servers["sse"].url.replace("/mcp", "/nothing")))
        await client.connect()

    with pytest.raises(McpTransportError, match="HTTP 404"):
        asyncio.run(scenario())
