"""OpenAIChatClient end to end over real HTTP against the scripted server (tests/fakes, the
``scripted_server`` fixture of tests/conftest.py)."""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

import pytest

from tea_agent_mini.config import ModelConfig
from tea_agent_mini.errors import (
    ConfigError,
    ContextTooLong,
    LLMError,
    RateLimited,
    StreamInterrupted,
    UpstreamError,
)
from tea_agent_mini.llm.client import OpenAIChatClient
from tea_agent_mini.llm.repair import parse_tool_arguments
from tea_agent_mini.types import Completion, Message, Notice, ReasoningDelta, TextDelta
from tests.fakes import Reply, ToolCallSpec

KEY = "sk-test-abcdefghijklmnop1234"
USER = [{"role": "user", "content": "hello"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "toolkit_file",
            "description": "read a file",
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        },
    }
]


class Harness:
    """A client whose sleeps are recorded instead of slept, and whose jitter is always 1.0."""

    def __init__(self, url: str, **config: Any) -> None:
        self.delays: list[float] = []
        self.events: list[Any] = []
        config.setdefault("model_name", "test-model")
        self.client = OpenAIChatClient(
            ModelConfig(api_url=url, **config), sleep=self._sleep, rng=lambda: 1.0
        )

    async def _sleep(self, seconds: float) -> None:
        self.delays.append(seconds)

    def stream(self, messages=USER, tools=None, **params) -> list[Any]:
        async def run() -> list[Any]:
            try:
                async for event in self.client.stream(messages, tools, **params):
                    self.events.append(event)
            finally:
                await self.client.aclose()
            return self.events

        return asyncio.run(run())

    def call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        async def run() -> Any:
            try:
                return await getattr(self.client, method)(*args, **kwargs)
            finally:
                await self.client.aclose()

        return asyncio.run(run())

    @property
    def notices(self) -> list[Notice]:
        return [e for e in self.events if isinstance(e, Notice)]

    @property
    def text(self) -> str:
        return "".join(e.text for e in self.events if isinstance(e, TextDelta))


def completion_of(events: list[Any]) -> Completion:
    assert isinstance(events[-1], Completion)
    assert sum(isinstance(e, Completion) for e in events) == 1
    return events[-1]


# -- streaming ------------------------------------------------------------------------------


def test_stream_text_request_shape_and_usage(scripted_server):
    scripted_server.push(
        Reply(text="Hello there, tea drinker.", prompt_tokens=21, completion_tokens=6)
    )
    harness = Harness(scripted_server.base_url)
    events = harness.stream()
    result = completion_of(events)
    assert [type(e) for e in events[:-1]] == [TextDelta] * len(events[:-1])
    assert len(events) > 3  # really streamed in pieces
    assert harness.text == result.content == "Hello there, tea drinker."
    assert result.finish_reason == "stop"
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (21, 6)
    assert result.model == "scripted-model"
    body = scripted_server.requests[0]
    assert body == {
        "model": "test-model",
        "messages": USER,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    headers = scripted_server.headers[0]
    assert "authorization" not in headers
    assert headers["accept"] == "text/event-stream"
    assert headers["user-agent"].startswith("tea_agent_mini/")


def test_stream_sends_tools_config_params_and_auth(scripted_server):
    scripted_server.api_key = KEY
    scripted_server.push(Reply(text="ok"))
    harness = Harness(
        scripted_server.base_url + "/",
        api_key=KEY,
        temperature=0.2,
        max_tokens=64,
        extra_headers={"X-Title": "tea"},
    )
    harness.stream(USER, TOOLS, max_tokens=None, top_p=0.9)
    body = scripted_server.requests[0]
    assert body["tools"] == TOOLS and body["tool_choice"] == "auto"
    assert body["temperature"] == 0.2 and body["top_p"] == 0.9
    assert "max_tokens" not in body  # dropped by passing None
    assert scripted_server.headers[0]["authorization"] == f"Bearer {KEY}"
    assert scripted_server.headers[0]["x-title"] == "tea"


def test_message_objects_are_converted(scripted_server):
    harness = Harness(scripted_server.base_url)
    harness.stream([Message(role="system", content="be brief"), Message(role="user", content="hi")])
    assert scripted_server.requests[0]["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hi"},
    ]
    assert harness.text == "echo: hi"


def test_streamed_tool_calls_in_fragments(scripted_server):
    scripted_server.push(
        Reply(
            text="Let me check.",
            tool_calls=[
                ToolCallSpec("toolkit_file", {"path": "notes/today.txt"}, id="call_x"),
                ToolCallSpec("toolkit_shell", {"cmd": "ls -la", "timeout": 30}),
            ],
            chunk_chars=3,
        )
    )
    result = completion_of(Harness(scripted_server.base_url).stream(USER, TOOLS))
    assert result.content == "Let me check."
    assert result.finish_reason == "tool_calls"
    assert [(c.id, c.name) for c in result.tool_calls] == [
        ("call_x", "toolkit_file"),
        ("call_1", "toolkit_shell"),
    ]
    assert json.loads(result.tool_calls[0].arguments) == {"path": "notes/today.txt"}
    assert json.loads(result.tool_calls[1].arguments) == {"cmd": "ls -la", "timeout": 30}


def test_malformed_streamed_arguments_arrive_raw_and_are_repaired(scripted_server):
    sloppy = "{'path': 'a.txt', 'overwrite': True,"
    scripted_server.push(Reply(tool_calls=[ToolCallSpec("toolkit_file", sloppy)], chunk_chars=5))
    result = completion_of(Harness(scripted_server.base_url).stream(USER, TOOLS))
    assert result.tool_calls[0].arguments == sloppy
    assert parse_tool_arguments(result.tool_calls[0].arguments) == {
        "path": "a.txt",
        "overwrite": True,
    }


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_streamed_reasoning(scripted_server, field):
    scripted_server.push(Reply(text="42", reasoning="Six times seven.", reasoning_field=field))
    events = Harness(scripted_server.base_url).stream()
    result = completion_of(events)
    thoughts = [e.text for e in events if isinstance(e, ReasoningDelta)]
    assert "".join(thoughts) == result.reasoning == "Six times seven."
    first_text = next(i for i, e in enumerate(events) if isinstance(e, TextDelta))
    assert all(isinstance(e, ReasoningDelta) for e in events[:first_text])
    assert result.content == "42"


def test_finish_reason_length_is_kept(scripted_server):
    scripted_server.push(Reply(text="truncated answ", finish_reason="length"))
    assert completion_of(Harness(scripted_server.base_url).stream()).finish_reason == "length"


def test_consumer_may_stop_early_and_reuse_the_client(scripted_server):
    scripted_server.push(
        Reply(text="a long answer in many pieces", chunk_chars=2), Reply(text="second")
    )
    harness = Harness(scripted_server.base_url)

    async def run() -> str:
        async for event in harness.client.stream(USER):
            assert isinstance(event, TextDelta)
            break
        result = [e async for e in harness.client.stream(USER)][-1]
        await harness.client.aclose()
        return result.content

    assert asyncio.run(run()) == "second"


# -- retries --------------------------------------------------------------------------------


def test_500_500_then_success_is_retried_with_notices_and_backoff(scripted_server):
    scripted_server.push(Reply(status=500), Reply(status=502), Reply(text="finally"))
    harness = Harness(scripted_server.base_url)
    events = harness.stream()
    assert completion_of(events).content == "finally"
    assert harness.delays == [0.5, 1.0]  # base 0.5 s doubling, jitter pinned to 1.0
    assert [n.kind for n in harness.notices] == ["retry", "retry"]
    assert "HTTP 500" in harness.notices[0].message and "retry 1 of 3" in harness.notices[0].message
    assert "HTTP 502" in harness.notices[1].message
    assert events.index(harness.notices[1]) < events.index(events[-1])
    assert len(scripted_server.requests) == 3


def test_429_retry_after_is_honoured(scripted_server):
    scripted_server.push(
        Reply(status=429, error_message="slow down", retry_after=2), Reply(text="ok")
    )
    harness = Harness(scripted_server.base_url)
    assert completion_of(harness.stream()).content == "ok"
    assert harness.delays == [2.0]
    assert "slow down" in harness.notices[0].message


def test_retries_run_out(scripted_server):
    scripted_server.push(*[Reply(status=503, error_message="overloaded")] * 4)
    harness = Harness(scripted_server.base_url, max_retries=3)
    with pytest.raises(UpstreamError) as info:
        harness.stream()
    assert info.value.status == 503
    assert "overloaded" in str(info.value)
    assert "gave up after 4 attempts" in str(info.value)
    assert len(harness.notices) == 3 and len(scripted_server.requests) == 4
    assert not any(isinstance(e, Completion) for e in harness.events)


def test_429_out_of_retries_is_rate_limited(scripted_server):
    scripted_server.push(Reply(status=429, retry_after=5), Reply(status=429, retry_after=5))
    harness = Harness(scripted_server.base_url, max_retries=1)
    with pytest.raises(RateLimited) as info:
        harness.stream()
    assert info.value.retry_after == 5.0
    assert harness.delays == [5.0]


def test_400_is_not_retried(scripted_server):
    scripted_server.push(Reply(status=400, error_message="Invalid value for 'temperature'"))
    harness = Harness(scripted_server.base_url)
    with pytest.raises(UpstreamError) as info:
        harness.stream()
    assert info.value.status == 400
    assert str(info.value) == "HTTP 400: Invalid value for 'temperature'"
    assert harness.delays == [] and harness.notices == []
    assert len(scripted_server.requests) == 1


def test_context_too_long_is_not_retried(scripted_server):
    message = "This model's maximum context length is 4096 tokens, you sent 9000"
    scripted_server.push(Reply(status=400, error_message=message))
    harness = Harness(scripted_server.base_url)
    with pytest.raises(ContextTooLong):
        harness.stream()
    assert len(scripted_server.requests) == 1


def test_401_says_check_api_key_and_never_shows_the_key(scripted_server):
    scripted_server.push(Reply(status=401, error_message=f"Incorrect API key provided: {KEY}"))
    harness = Harness(scripted_server.base_url, api_key=KEY)
    with pytest.raises(UpstreamError) as info:
        harness.stream()
    error = info.value
    assert error.status == 401 and "check api_key" in str(error)
    for text in (str(error), repr(error), *map(str, error.args)):
        assert KEY not in text
    assert "****1234" in str(error)
    assert len(scripted_server.requests) == 1


def test_wrong_key_against_a_server_that_checks_it(scripted_server):
    scripted_server.api_key = "the-right-key-0000"
    harness = Harness(scripted_server.base_url, api_key=KEY)
    with pytest.raises(UpstreamError) as info:
        harness.call("complete", USER)
    assert info.value.status == 401 and KEY not in str(info.value)


def test_404_hint(scripted_server):
    harness = Harness(scripted_server.base_url + "/nowhere")
    with pytest.raises(UpstreamError) as info:
        harness.stream()
    assert info.value.status == 404
    assert "check api_url and model_name" in str(info.value)


def test_stream_cut_before_any_output_is_retried(scripted_server):
    scripted_server.push(Reply(text="never seen", cut_after=1), Reply(text="second try"))
    harness = Harness(scripted_server.base_url)
    events = harness.stream()
    assert completion_of(events).content == "second try"
    assert harness.text == "second try"
    assert len(harness.notices) == 1 and harness.delays == [0.5]


def test_stream_cut_after_text_raises_interrupted(scripted_server):
    scripted_server.push(Reply(text="This answer will be cut short", chunk_chars=4, cut_after=3))
    harness = Harness(scripted_server.base_url)
    with pytest.raises(StreamInterrupted) as info:
        harness.stream()
    assert "the answer is incomplete" in str(info.value)
    assert harness.text == "This ans"  # the role chunk, then two 4-character text chunks
    assert harness.notices == [] and len(scripted_server.requests) == 1
    assert not any(isinstance(e, Completion) for e in harness.events)


def test_stream_cut_after_reasoning_is_interrupted_too(scripted_server):
    scripted_server.push(Reply(reasoning="thinking hard", text="x", cut_after=2))
    harness = Harness(scripted_server.base_url)
    with pytest.raises(StreamInterrupted):
        harness.stream()
    assert len(scripted_server.requests) == 1


def test_connection_refused_is_retried_then_reported():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    harness = Harness(f"http://127.0.0.1:{port}/v1", max_retries=2)
    with pytest.raises(UpstreamError) as info:
        harness.stream()
    assert "cannot connect" in str(info.value)
    assert "check api_url" in str(info.value)
    assert len(harness.notices) == 2


def test_read_timeout_is_translated_and_retried(scripted_server):
    scripted_server.push(*[Reply(text="slow", delay=1.0, chunk_chars=100)] * 2)
    harness = Harness(scripted_server.base_url, read_timeout=0.1, max_retries=1)
    with pytest.raises(UpstreamError) as info:
        harness.stream()
    assert "no data from the provider for 0.1s" in str(info.value)
    assert len(harness.notices) == 1


# -- non-streaming and models ----------------------------------------------------------------


def test_complete_non_streaming(scripted_server):
    scripted_server.push(
        Reply(
            text="",
            reasoning="hmm",
            tool_calls=[ToolCallSpec("toolkit_file", {"path": "x"}, id="c9")],
            prompt_tokens=10,
            completion_tokens=3,
        )
    )
    result = Harness(scripted_server.base_url).call("complete", USER, TOOLS)
    assert result.tool_calls[0].id == "c9" and result.tool_calls[0].name == "toolkit_file"
    assert result.reasoning == "hmm" and result.finish_reason == "tool_calls"
    assert result.usage.prompt_tokens == 10
    body = scripted_server.requests[0]
    assert body["stream"] is False and "stream_options" not in body
    assert scripted_server.headers[0]["accept"] == "application/json"


def test_complete_retries_5xx_and_dropped_connections(scripted_server):
    scripted_server.push(Reply(status=503), Reply(cut_after=0), Reply(text="done"))
    harness = Harness(scripted_server.base_url)
    assert harness.call("complete", USER).content == "done"
    assert harness.delays == [0.5, 1.0]


def test_complete_does_not_retry_401(scripted_server):
    scripted_server.push(Reply(status=401, error_message="bad key"))
    harness = Harness(scripted_server.base_url)
    with pytest.raises(UpstreamError):
        harness.call("complete", USER)
    assert harness.delays == []


def test_list_models(scripted_server):
    assert Harness(scripted_server.base_url).call("list_models") == ["scripted-model"]


@pytest.mark.parametrize("url", ["", "localhost:8080/v1", "ftp://example.com"])
def test_unusable_api_url_is_a_config_error(url):
    with pytest.raises(ConfigError):
        Harness(url).stream()


def test_api_url_may_include_chat_completions(scripted_server):
    harness = Harness(scripted_server.base_url + "/chat/completions")
    assert completion_of(harness.stream()).content == "echo: hello"


def test_injected_http_client_is_used_and_left_open(scripted_server):
    import httpx

    async def run() -> bool:
        async with httpx.AsyncClient() as http:
            config = ModelConfig(api_url=scripted_server.base_url, model_name="m")
            client = OpenAIChatClient(config, http_client=http)
            result = await client.complete(USER)
            await client.aclose()
            assert result.content == "echo: hello"
            return http.is_closed

    assert asyncio.run(run()) is False


def test_all_failures_are_llm_errors(scripted_server):
    scripted_server.push(Reply(status=418, error_message="I'm a teapot"))
    with pytest.raises(LLMError) as info:
        Harness(scripted_server.base_url).stream()
    assert info.value.status == 418


def test_importing_the_package_and_client_does_not_import_httpx():
    import subprocess
    import sys

    code = (
        "import sys, tea_agent_mini.llm as llm\n"
        "llm.OpenAIChatClient, llm.repair_json, llm.estimate_text_tokens\n"
        "assert 'httpx' not in sys.modules, 'httpx imported eagerly'\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
