"""Errors of the MCP client, all below ``ToolError`` so a failing MCP tool reads like any tool.

ToolError
└── McpError               an MCP server could not do what was asked
    ├── McpTransportError  the server cannot be reached, or its process/connection ended
    │   └── SessionExpired the HTTP server forgot our session (HTTP 404); initialize again
    ├── McpProtocolError   the server broke the protocol (bad JSON-RPC, unsupported version)
    ├── McpTimeout         no answer within the request timeout
    └── McpRpcError        the server answered with a JSON-RPC error object
"""

from __future__ import annotations

from typing import Any

from tea_agent_mini.errors import ToolError


class McpError(ToolError):
    """Something went wrong talking to an MCP server."""


class McpTransportError(McpError):
    """The connection to the server failed or ended (the process exited, HTTP failed)."""


class SessionExpired(McpTransportError):
    """The HTTP server answered 404 to our session id: the session must be initialized again."""


class McpProtocolError(McpError):
    """The server sent something the protocol does not allow."""


class McpTimeout(McpError):
    """A request got no response in time (the request was cancelled on the server)."""


class McpRpcError(McpError):
    """A JSON-RPC error response: ``code``, ``message`` and optional ``data`` from the server."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} (JSON-RPC error {code})")
        self.code = code
        self.rpc_message = message
        self.data = data
