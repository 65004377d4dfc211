"""A Model Context Protocol client: MCP servers' tools as tea_agent_mini tools.

    manager = McpManager(config.mcp_servers, config.home)   # mcp_servers: + mcp_servers.json
    manager.register_into(toolkit)                          # tools named mcp_<server>_<tool>
    manager.close()

Lower down, ``McpClient`` speaks the protocol (JSON-RPC 2.0) with one server over a transport:
``StdioTransport`` (a subprocess) or ``HttpTransport`` (streamable HTTP). Only the standard
library and httpx are used. Names load lazily, so importing this package is cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .client import CallResult, McpClient, McpTool, ServerInfo
    from .errors import McpError, McpProtocolError, McpRpcError, McpTimeout, McpTransportError
    from .http import HttpTransport
    from .manager import McpManager, ServerStatus
    from .servers import ServerConfig, load_servers
    from .stdio import StdioTransport

__all__ = [
    "CallResult",
    "HttpTransport",
    "McpClient",
    "McpError",
    "McpManager",
    "McpProtocolError",
    "McpRpcError",
    "McpTimeout",
    "McpTool",
    "McpTransportError",
    "ServerConfig",
    "ServerInfo",
    "ServerStatus",
    "StdioTransport",
    "load_servers",
]

_HOMES = {
    "CallResult": "client",
    "McpClient": "client",
    "McpTool": "client",
    "ServerInfo": "client",
    "McpError": "errors",
    "McpProtocolError": "errors",
    "McpRpcError": "errors",
    "McpTimeout": "errors",
    "McpTransportError": "errors",
    "HttpTransport": "http",
    "McpManager": "manager",
    "ServerStatus": "manager",
    "ServerConfig": "servers",
    "load_servers": "servers",
    "StdioTransport": "stdio",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
