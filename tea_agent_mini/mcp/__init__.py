"""A Model Context Protocol client: MCP servers' tools as tea_agent_mini tools.

    manager = McpManager(config.mcp_servers, config.home)   # mcp_servers: + mcp_servers.json
    manager.register_into(toolkit)                          # tools named mcp_<server>_<tool>
    manager.close()

Lower down, ``McpClient`` speaks the protocol (JSON-RPC 2.0) with one server over a transport:
``StdioTransport`` (a subprocess) or ``HttpTransport`` (streamable HTTP). Only the standard
library and httpx are used. Names load lazily, so importing this package is cheap.
"""

from __future__ import annotations

from .._lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "client": ("CallResult", "McpClient", "McpTool", "ServerInfo"),
        "errors": (
            "McpError",
            "McpProtocolError",
            "McpRpcError",
            "McpTimeout",
            "McpTransportError",
        ),
        "http": ("HttpTransport",),
        "manager": ("McpManager", "ServerStatus"),
        "servers": ("ServerConfig", "load_servers"),
        "stdio": ("StdioTransport",),
    },
)
