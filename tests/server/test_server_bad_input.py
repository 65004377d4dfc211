"""Input the server must refuse with a 4xx, never a 500: deep JSON, lone surrogates, numbers
beyond int64, ids that cannot name a row; and the JSON 500 that keeps the connection open."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from tea_agent_mini.server.api_errors import ApiError, LastResort
from tea_agent_mini.server.bodies import MAX_DEPTH, check_values, natural, parse_json
from tests.fakes.background import turn_requests


def refusal(body: bytes | str) -> str:
    with pytest.raises(ApiError) as caught:
        parse_json(body.encode() if isinstance(body, str) else body)
    assert caught.value.status == 400
    return caught.value.message


@pytest.mark.parametrize(
    "body",
    [
        "[" * 100_000 + "]" * 100_000,
        '{"a":' * 100_000 + "1" + "}" * 100_000,
        "[" * 8_000_000,
        "[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1),
    ],
)
def test_deep_json_is_refused_before_it_is_parsed(body):
    assert f"nests deeper than {MAX_DEPTH}" in refusal(body)


def test_depth_counts_brackets_outside_strings_only():
    assert parse_json(("[" * MAX_DEPTH + "]" * MAX_DEPTH).encode())
    text = '{"a": "' + "[{" * 5000 + '\\"[[[ \\\\", "b": ["]]]"]}'
    assert parse_json(text.encode())["b"] == ["]]]"]


@pytest.mark.parametrize(
    ("body", "named"),
    [
        ('{"content": "\\ud800"}', "field 'content'"),
        ('{"messages": [{"content": "a \\udfff b"}]}', "field 'messages[0].content'"),
        ('{"tags": ["ok", "\\udbff\\udbff"]}', "field 'tags[1]'"),
        ('{"args": {"\\ud800": 1}}', "key 'args."),
        (b'{"content": "\xed\xa0\x80"}', "malformed JSON body"),
    ],
)
def test_lone_surrogates_are_refused_naming_the_field(body, named):
    message = refusal(body)
    assert named in message
    assert "surrogate" in message or "decode" in message


def test_parsed_yaml_is_checked_the_same_way():
    check_values(
        {1: "a", None: [True, 2.5], "k": {"x": [2**63 - 1]}}
    )  # YAML's keys need not be str
    deep: Any = "leaf"
    for _ in range(MAX_DEPTH + 1):
        deep = [deep]
    with pytest.raises(ApiError, match="nests deeper"):
        check_values({"agent": deep})
    with pytest.raises(ApiError, match="field 'main_model.temperature'"):
        check_values({"main_model": {"temperature": float("inf")}})


def test_a_surrogate_pair_is_one_character():
    assert parse_json(b'{"a": "\\ud83d\\ude00"}') == {"a": "\U0001f600"}


@pytest.mark.parametrize(
    ("literal", "accepted"),
    [
        (str(2**63 - 1), True),
        (str(-(2**63)), True),
        (str(2**63), False),
        (str(-(2**64)), False),
        ("1.7e308", True),
        ("1e309", False),
        ("-Infinity", False),
        ("NaN", False),
    ],
)
def test_numbers_beyond_int64_or_float_are_refused(literal, accepted):
    body = f'{{"n": [{literal}]}}'
    if accepted:
        assert parse_json(body.encode())["n"][0] == json.loads(literal)
    else:
        assert "field 'n[0]'" in refusal(body)


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ("12", 12),
        (" 7 ", 7),
        (str(2**63 - 1), 2**63 - 1),
        (str(2**63), None),
        ("9" * 5000, None),
        ("\u00b2", None),
        ("-1", None),
        ("1e3", None),
        ("", None),
    ],
)
def test_natural_takes_ascii_digits_within_int64(raw, value):
    assert natural(raw) == value


def test_a_surrogate_message_is_refused_before_its_stream_starts(http, scripted_server):
    session = http.post("/v1/sessions", json={}).json()
    url = f"/v1/sessions/{session['id']}/messages"
    body = b'{"content": "hello \\ud800"}'
    response = http.post(url, content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 400
    assert response.headers["content-type"].startswith("application/json")
    assert "field 'content'" in response.json()["error"]["message"]
    assert http.get(f"/v1/sessions/{session['id']}").json()["message_count"] == 0
    assert turn_requests(scripted_server) == []


def test_an_error_quoting_a_surrogate_still_renders(http):
    body = b'{"\\ud800": 1}'
    response = http.post("/v1/sessions", content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 400
    assert response.json()["error"]["message"].startswith("key '\\ud800' holds a lone surrogate")


@pytest.mark.parametrize("ident", [str(2**63), str(2**64), "9" * 40, "\u00b2"])
@pytest.mark.parametrize("collection", ["memory", "tasks"])
def test_ids_beyond_int64_are_not_found(http, collection, ident):
    for method in ("GET", "PATCH", "DELETE"):
        response = http.request(method, f"/v1/{collection}/{ident}", json={"enabled": True})
        assert response.status_code == 404, (method, response.text)
        assert response.json()["error"]["type"] == "not_found_error"


def test_an_unexpected_error_is_a_json_500_on_a_connection_that_stays_open(live, http, monkeypatch):
    def broken(**kwargs: Any) -> Any:
        raise RuntimeError("secret detail")

    monkeypatch.setattr(live.runtime.store.topics, "recent", broken)
    failed = http.get("/v1/sessions")
    assert failed.status_code == 500
    assert failed.json()["error"] == {
        "message": "internal server error",
        "type": "server_error",
        "param": None,
        "code": None,
    }
    port = failed.extensions["network_stream"].get_extra_info("client_addr")[1]
    after = http.get("/health")
    assert after.status_code == 200
    assert after.extensions["network_stream"].get_extra_info("client_addr")[1] == port


def run_guarded(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What ``LastResort`` sends around an app that sends ``messages`` and then fails."""
    sent: list[dict[str, Any]] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        for message in messages:
            await send(message)
        raise RuntimeError("boom")

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Any) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "GET", "path": "/x", "headers": []}
    asyncio.run(LastResort(app)(scope, receive, send))
    return sent


START = {"type": "http.response.start", "status": 200, "headers": []}


def test_last_resort_answers_500_when_nothing_was_sent():
    sent = run_guarded([])
    assert sent[0]["status"] == 500
    assert json.loads(sent[1]["body"])["error"]["type"] == "server_error"


def test_last_resort_keeps_a_finished_response():
    done = {"type": "http.response.body", "body": b"ok", "more_body": False}
    assert run_guarded([START, done]) == [START, done]


def test_last_resort_lets_a_broken_stream_fail():
    part = {"type": "http.response.body", "body": b"data", "more_body": True}
    with pytest.raises(RuntimeError, match="boom"):
        run_guarded([START, part])
