"""Client behaviour on wire shapes the scripted server does not produce (other providers'
quirks), played through httpx.MockTransport, httpx's own test seam."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from tea_agent_mini.config import ModelConfig
from tea_agent_mini.errors import StreamInterrupted, UpstreamError
from tea_agent_mini.llm.client import OpenAIChatClient
from tea_agent_mini.types import Completion, Notice, ReasoningDelta, TextDelta

USER = [{"role": "user", "content": "hi"}]


def chunk(delta: dict | None = None, finish: str | None = None, **extra: Any) -> dict:
    choices = [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    return {"object": "chat.completion.chunk", "model": "m", "choices": choices, **extra}


def sse(*payloads: dict | str) -> bytes:
    lines = [f"data: {p if isinstance(p, str) else json.dumps(p)}\n\n" for p in payloads]
    return "".join(lines).encode()


class Wire:
    """Answers the n-th request with the n-th scripted response; records request bodies."""

    def __init__(self, *responses: httpx.Response) -> None:
        self.responses = list(responses)
        self.bodies: list[dict] = []
        self.delays: list[float] = []

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.bodies.append(json.loads(request.content))
        return self.responses.pop(0)

    def run(self) -> list[Any]:
        async def sleep(seconds: float) -> None:
            self.delays.append(seconds)

        async def go() -> list[Any]:
            async with httpx.AsyncClient(transport=httpx.MockTransport(self.handle)) as http:
                config = ModelConfig(api_url="http://provider.test/v1", model_name="m")
                client = OpenAIChatClient(config, http_client=http, sleep=sleep, rng=lambda: 1.0)
                return [event async for event in client.stream(USER)]

        return asyncio.run(go())


def stream_response(body: bytes) -> httpx.Response:
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)


def test_finish_reason_without_done_is_complete():
    wire = Wire(stream_response(sse(chunk({"content": "hi"}), chunk({}, "stop"))))
    result = wire.run()[-1]
    assert isinstance(result, Completion)
    assert (result.content, result.finish_reason) == ("hi", "stop")


def test_done_without_finish_reason_counts_as_stop():
    wire = Wire(stream_response(sse(chunk({"content": "hi"}), "[DONE]")))
    assert wire.run()[-1].finish_reason == "stop"


def test_eof_without_finish_or_done_after_text_is_interrupted():
    wire = Wire(stream_response(sse(chunk({"content": "half an ans"}))))
    with pytest.raises(StreamInterrupted):
        wire.run()


def test_empty_stream_is_retried():
    wire = Wire(stream_response(b""), stream_response(sse(chunk({"content": "ok"}, "stop"))))
    events = wire.run()
    assert isinstance(events[0], Notice) and events[-1].content == "ok"
    assert wire.delays == [0.5]


def test_usage_after_finish_and_junk_lines_are_handled():
    body = (
        b": keep-alive\n\n"
        + sse(chunk({"reasoning": "r"}), "not json", chunk({"content": "c"}, "stop"))
        + sse(chunk(None, usage={"prompt_tokens": 9, "completion_tokens": 2}), "[DONE]")
    )
    events = Wire(stream_response(body.replace(b"\n", b"\r\n"))).run()
    assert events[:2] == [ReasoningDelta("r"), TextDelta("c")]
    assert events[-1].usage.total_tokens == 11


def test_json_answer_to_a_stream_request_is_accepted():
    whole = {
        "model": "m",
        "choices": [{"message": {"content": "all at once", "reasoning_content": "t"},
                     "finish_reason": "stop"}],
    }  # fmt: skip
    events = Wire(httpx.Response(200, json=whole)).run()
    assert events[:2] == [ReasoningDelta("t"), TextDelta("all at once")]
    assert events[-1].content == "all at once"


def test_error_payload_before_output_is_retried_when_retryable():
    wire = Wire(
        stream_response(sse({"error": {"code": 503, "message": "model is loading"}})),
        stream_response(sse(chunk({"content": "ready"}, "stop"))),
    )
    events = wire.run()
    assert "model is loading" in events[0].message
    assert events[-1].content == "ready"


def test_error_payload_after_output_is_interrupted_with_the_providers_words():
    body = sse(chunk({"content": "par"}), {"error": {"message": "upstream hiccup"}})
    with pytest.raises(StreamInterrupted) as info:
        Wire(stream_response(body)).run()
    assert "upstream hiccup" in str(info.value)


def test_non_retryable_error_payload_raises():
    body = sse({"error": {"message": "content policy violation", "type": "invalid_request"}})
    with pytest.raises(UpstreamError) as info:
        Wire(stream_response(body)).run()
    assert "content policy" in str(info.value)


def test_rejected_stream_options_are_dropped_and_the_call_repeated():
    error = {"error": {"message": "Unrecognized request argument supplied: stream_options"}}
    wire = Wire(
        httpx.Response(400, json=error), stream_response(sse(chunk({"content": "ok"}, "stop")))
    )
    events = wire.run()
    assert events[-1].content == "ok"
    assert "stream_options" in wire.bodies[0] and "stream_options" not in wire.bodies[1]
    assert wire.delays == [] and not any(isinstance(e, Notice) for e in events)
