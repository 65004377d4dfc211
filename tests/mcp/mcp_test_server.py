"""A small MCP server built with the official SDK (mcp >= 2), for the client tests only.

    python mcp_test_server.py stdio [--page-size N]
    python mcp_test_server.py http --port P [--json] [--page-size N]

Tools: add, echo, fail (raises), slow (sleeps), crash (exits the process), picture (an image),
grow (adds a tool and tells the client the tool list changed), odd.name-tool (needs sanitising).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import sys

# mcp 2.x API (MCPServer, formerly FastMCP); ListToolsResult takes snake_case field names
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ImageContent, ListToolsResult

PNG_1x1 = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


class PagedServer(MCPServer):
    """Serves tools/list in pages of ``page_size`` so the client has to follow nextCursor."""

    page_size = 0

    async def _handle_list_tools(self, ctx, params):
        tools = await self.list_tools()
        if not self.page_size:
            return ListToolsResult(tools=tools)
        start = int(params.cursor) if params is not None and params.cursor else 0
        end = start + self.page_size
        next_cursor = str(end) if end < len(tools) else None
        return ListToolsResult(tools=tools[start:end], next_cursor=next_cursor)


def build_server(page_size: int) -> PagedServer:
    server = PagedServer("tea-test-server", log_level="WARNING")
    server.page_size = page_size

    @server.tool()
    def add(a: int, b: int) -> str:
        """Add two integers."""
        return str(a + b)

    @server.tool()
    def echo(text: str) -> str:
        """Echo the text back."""
        return text

    @server.tool()
    def fail() -> str:
        """Always fails."""
        raise ValueError("this tool always fails")

    @server.tool()
    async def slow(seconds: float) -> str:
        """Sleep, then answer."""
        await asyncio.sleep(seconds)
        return f"slept {seconds}"

    @server.tool()
    def crash() -> str:
        """Exit the server process at once (a crash, as the client sees it)."""
        print("crashing on purpose", file=sys.stderr, flush=True)
        os._exit(3)

    @server.tool()
    def picture() -> list:
        """Return a caption and a tiny PNG."""
        image = ImageContent(
            type="image", data=base64.b64encode(PNG_1x1).decode(), mime_type="image/png"
        )
        return ["a red dot", image]

    @server.tool(name="odd.name-tool")
    def odd_name() -> str:
        """A tool whose name needs sanitising."""
        return "odd"

    @server.tool()
    async def grow(name: str, ctx: Context) -> str:
        """Add a tool named ``name`` and notify the client that the tool list changed."""

        def added() -> str:
            return f"I am {name}"

        server.add_tool(added, name=name, description=f"added at runtime: {name}")
        await ctx.session.send_tool_list_changed()
        return f"added {name}"

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("transport", choices=["stdio", "http"])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="answer POSTs with plain JSON")
    parser.add_argument("--page-size", type=int, default=0)
    options = parser.parse_args()
    server = build_server(options.page_size)
    print(f"test server starting ({options.transport})", file=sys.stderr, flush=True)
    if options.transport == "stdio":
        server.run("stdio")
        return
    import uvicorn

    app = server.streamable_http_app(json_response=options.json)
    uvicorn.run(app, host="127.0.0.1", port=options.port, log_level="warning")


if __name__ == "__main__":
    main()
