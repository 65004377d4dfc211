"""A tiny stdio MCP server for the ``use_mcp_tool`` task: plain JSON-RPC, no ``mcp`` SDK.

    python mcp_server.py          (EVAL_MCP_PREFIX set in its environment)

One JSON message per line on stdin and stdout. Its one tool, ``order_status``, answers with a
tracking code made from ``EVAL_MCP_PREFIX``, which only the server knows, so an answer that
contains the code shows the agent really called the tool.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

SUPPORTED_VERSIONS = ("2025-06-18", "2025-03-26", "2024-11-05")
TOOL = {
    "name": "order_status",
    "description": "Look up an order by its number: shipping status and tracking code.",
    "inputSchema": {
        "type": "object",
        "properties": {"order_id": {"type": "integer", "description": "the order number"}},
        "required": ["order_id"],
    },
}


def tracking_code(secret: str, order_id: int) -> str:
    return f"{secret}-{order_id}"


def call_tool(name: str, arguments: dict[str, Any], secret: str) -> dict[str, Any]:
    if name != TOOL["name"]:
        return _text(f"unknown tool {name!r}", error=True)
    try:
        order_id = int(str(arguments.get("order_id")))
    except ValueError:
        return _text("order_id must be an integer", error=True)
    code = tracking_code(secret, order_id)
    return _text(f"order {order_id}: shipped, tracking code {code}")


def _text(text: str, *, error: bool = False) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": error}


def handle(message: dict[str, Any], secret: str) -> dict[str, Any] | None:
    """The response to one message, or None for a notification (no id)."""
    if "id" not in message:
        return None
    method, params = message.get("method"), message.get("params") or {}
    result: dict[str, Any] | None = None
    if method == "initialize":
        asked = params.get("protocolVersion")
        version = asked if asked in SUPPORTED_VERSIONS else SUPPORTED_VERSIONS[0]
        result = {
            "protocolVersion": version,
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "eval-orders", "version": "1.0"},
        }
    elif method == "ping":
        result = {}
    elif method == "tools/list":
        result = {"tools": [TOOL]}
    elif method == "tools/call":
        result = call_tool(str(params.get("name")), params.get("arguments") or {}, secret)
    if result is None:
        error = {"code": -32601, "message": f"method not found: {method}"}
        return {"jsonrpc": "2.0", "id": message["id"], "error": error}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def serve(secret: str) -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            reply: dict[str, Any] | None = {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": -32700, "message": "parse error"},
            }
        else:
            reply = handle(message, secret) if isinstance(message, dict) else None
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    serve(os.environ.get("EVAL_MCP_PREFIX", "UNSET"))
