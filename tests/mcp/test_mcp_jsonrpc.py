from __future__ import annotations

import json

import pytest

from tea_agent_mini.errors import ToolError
from tea_agent_mini.mcp.errors import McpProtocolError, McpRpcError
from tea_agent_mini.mcp.jsonrpc import (
    METHOD_NOT_FOUND,
    ErrorObject,
    ErrorResponse,
    IdCounter,
    Notification,
    Request,
    Response,
    dumps,
    error_response,
    from_wire,
    loads,
)


@pytest.mark.parametrize(
    "message",
    [
        Request(1, "tools/list"),
        Request("abc", "tools/call", {"name": "add", "arguments": {"a": 1}}),
        Notification("notifications/initialized"),
        Notification("notifications/cancelled", {"requestId": 3, "reason": "timeout"}),
        Response(7, {"tools": []}),
        ErrorResponse(8, ErrorObject(METHOD_NOT_FOUND, "no such method", {"m": "x"})),
        ErrorResponse(None, ErrorObject(-32700, "parse error")),
    ],
)
def test_messages_survive_a_round_trip_through_one_line_of_json(message):
    line = dumps(message)
    assert "\n" not in line
    assert json.loads(line)["jsonrpc"] == "2.0"
    assert loads(line) == [message]


def test_newlines_inside_strings_stay_escaped_on_the_wire():
    line = dumps(Request(1, "tools/call", {"arguments": {"text": "two\nlines"}}))
    assert "\n" not in line
    assert loads(line)[0].params == {"arguments": {"text": "two\nlines"}}


def test_a_batch_array_is_split_into_messages():
    text = json.dumps(
        [{"jsonrpc": "2.0", "id": 1, "result": {}}, {"jsonrpc": "2.0", "method": "ping", "id": 2}]
    )
    assert loads(text) == [Response(1, {}), Request(2, "ping")]


def test_the_wire_form_omits_absent_params_and_data():
    assert json.loads(dumps(Notification("x"))) == {"jsonrpc": "2.0", "method": "x"}
    wire = json.loads(dumps(error_response(4, -32601, "nope")))
    assert wire == {"jsonrpc": "2.0", "id": 4, "error": {"code": -32601, "message": "nope"}}


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        "[]",
        "42",
        '{"jsonrpc": "1.0", "id": 1, "result": {}}',
        '{"jsonrpc": "2.0"}',
        '{"jsonrpc": "2.0", "id": 1}',
        '{"jsonrpc": "2.0", "id": true, "result": {}}',
        '{"jsonrpc": "2.0", "id": 1.5, "method": "x"}',
        '{"jsonrpc": "2.0", "id": 1, "result": [1, 2]}',
        '{"jsonrpc": "2.0", "method": ""}',
        '{"jsonrpc": "2.0", "method": "x", "params": [1]}',
        '{"jsonrpc": "2.0", "id": 1, "error": "bad"}',
    ],
)
def test_malformed_messages_raise_protocol_errors(text):
    with pytest.raises(McpProtocolError):
        loads(text)


def test_an_error_object_becomes_a_tool_error_with_code_and_data():
    message = from_wire(
        {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "bad", "data": [1]}}
    )
    assert isinstance(message, ErrorResponse)
    exc = message.error.to_exception()
    assert isinstance(exc, McpRpcError) and isinstance(exc, ToolError)
    assert (exc.code, exc.rpc_message, exc.data) == (-32602, "bad", [1])
    assert "bad" in str(exc) and "-32602" in str(exc)


def test_an_error_without_a_usable_code_is_an_internal_error():
    message = from_wire({"jsonrpc": "2.0", "id": 1, "error": {"message": "broken"}})
    assert message.error == ErrorObject(-32603, "broken")


def test_request_ids_increase_and_are_not_reused():
    ids = IdCounter()
    assert [ids.next_id() for _ in range(3)] == [1, 2, 3]
