"""JSON-RPC 2.0 messages as typed records, and their translation to and from JSON.

MCP speaks JSON-RPC 2.0: requests (with an id), notifications (without), and responses that carry
either a ``result`` or an ``error`` object. Transports move these records; only this module sees
the wire dictionaries.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any

from tea_agent_mini.mcp.errors import McpProtocolError, McpRpcError

VERSION = "2.0"

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

RequestId = int | str


@dataclass(frozen=True)
class Request:
    id: RequestId
    method: str
    params: dict[str, Any] | None = None


@dataclass(frozen=True)
class Notification:
    method: str
    params: dict[str, Any] | None = None


@dataclass(frozen=True)
class Response:
    id: RequestId
    result: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ErrorObject:
    code: int
    message: str
    data: Any = None

    def to_exception(self) -> McpRpcError:
        return McpRpcError(self.code, self.message, self.data)


@dataclass(frozen=True)
class ErrorResponse:
    id: RequestId | None  # None when the server could not read the request's id
    error: ErrorObject


Message = Request | Notification | Response | ErrorResponse


class IdCounter:
    """Request ids: increasing integers, never reused within one client."""

    def __init__(self, start: int = 1) -> None:
        self._counter = itertools.count(start)

    def next_id(self) -> int:
        return next(self._counter)


def to_wire(message: Message) -> dict[str, Any]:
    """The JSON object for ``message``."""
    wire: dict[str, Any] = {"jsonrpc": VERSION}
    if isinstance(message, (Request, Notification)):
        if isinstance(message, Request):
            wire["id"] = message.id
        wire["method"] = message.method
        if message.params is not None:
            wire["params"] = message.params
    elif isinstance(message, Response):
        wire["id"] = message.id
        wire["result"] = message.result
    else:
        error: dict[str, Any] = {"code": message.error.code, "message": message.error.message}
        if message.error.data is not None:
            error["data"] = message.error.data
        wire["id"] = message.id
        wire["error"] = error
    return wire


def dumps(message: Message) -> str:
    """One line of compact JSON (JSON escapes newlines inside strings, so none can appear)."""
    return json.dumps(to_wire(message), ensure_ascii=False, separators=(",", ":"))


def loads(text: str | bytes) -> list[Message]:
    """Parse a JSON document holding one message or a batch (array) of them."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise McpProtocolError(f"not JSON: {_preview(text)}") from exc
    if isinstance(data, list):
        if not data:
            raise McpProtocolError("empty JSON-RPC batch")
        return [from_wire(item) for item in data]
    return [from_wire(data)]


def from_wire(data: Any) -> Message:
    """The typed message for a decoded JSON object. Raises McpProtocolError when malformed."""
    if not isinstance(data, dict):
        raise McpProtocolError(f"a JSON-RPC message must be an object, got {type(data).__name__}")
    version = data.get("jsonrpc", VERSION)
    if version != VERSION:
        raise McpProtocolError(f"unsupported JSON-RPC version {version!r}")
    if "method" in data:
        return _request_or_notification(data)
    if "id" not in data:
        raise McpProtocolError("a JSON-RPC message needs a method or an id")
    if "error" in data:
        return ErrorResponse(_optional_id(data["id"]), _error_object(data["error"]))
    if "result" not in data:
        raise McpProtocolError("a JSON-RPC response needs a result or an error")
    result = data["result"]
    if not isinstance(result, dict):
        raise McpProtocolError(f"an MCP result must be an object, got {type(result).__name__}")
    return Response(_request_id(data["id"]), result)


def error_response(request_id: RequestId, code: int, message: str) -> ErrorResponse:
    return ErrorResponse(request_id, ErrorObject(code, message))


def _request_or_notification(data: dict[str, Any]) -> Request | Notification:
    method = data["method"]
    if not isinstance(method, str) or not method:
        raise McpProtocolError(f"method must be a non-empty string, got {method!r}")
    params = data.get("params")
    if params is not None and not isinstance(params, dict):
        raise McpProtocolError(f"{method}: params must be an object, got {type(params).__name__}")
    if "id" in data:
        return Request(_request_id(data["id"]), method, params)
    return Notification(method, params)


def _request_id(value: Any) -> RequestId:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise McpProtocolError(f"a request id must be a string or an integer, got {value!r}")
    return value


def _optional_id(value: Any) -> RequestId | None:
    return None if value is None else _request_id(value)


def _error_object(value: Any) -> ErrorObject:
    if not isinstance(value, dict):
        raise McpProtocolError(f"a JSON-RPC error must be an object, got {value!r}")
    code = value.get("code")
    if isinstance(code, bool) or not isinstance(code, int):
        code = INTERNAL_ERROR
    return ErrorObject(code, str(value.get("message", "")) or "unknown error", value.get("data"))


def _preview(text: str | bytes) -> str:
    shown = text if isinstance(text, str) else text.decode("utf-8", errors="replace")
    return repr(shown[:80] + ("..." if len(shown) > 80 else ""))
