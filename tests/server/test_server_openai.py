"""``/v1/chat/completions`` driven by the official ``openai`` client against the real server."""

from __future__ import annotations

import json

import openai
import pytest

from tests.fakes.background import turn_requests
from tests.fakes.scripted_server import Reply, ToolCallSpec


@pytest.fixture
def client(live):
    with openai.OpenAI(base_url=live.url + "/v1", api_key="unused", max_retries=0) as client:
        yield client


def user(text: str) -> dict:
    return {"role": "user", "content": text}


def test_non_streaming_answer_with_usage_and_reasoning(client, scripted_server, live):
    scripted_server.push(
        Reply(text="Paris.", reasoning="Capital of France.", prompt_tokens=30, completion_tokens=3)
    )
    raw = client.chat.completions.with_raw_response.create(
        model="scripted-model", messages=[user("Capital of France?")]
    )
    completion = raw.parse()
    assert completion.choices[0].message.content == "Paris."
    assert completion.choices[0].message.reasoning_content == "Capital of France."
    assert completion.choices[0].finish_reason == "stop"
    assert completion.usage.prompt_tokens == 30 and completion.usage.completion_tokens == 3
    assert completion.model == "scripted-model" and completion.id.startswith("chatcmpl-")
    session_id = raw.headers["x-session-id"]
    stored = live.runtime.store.messages.of_topic(session_id)
    assert [m.role for m in stored] == ["user", "assistant"]


def test_streaming_with_usage_chunk(client, scripted_server):
    scripted_server.push(
        Reply(text="one two three", reasoning="count", prompt_tokens=11, completion_tokens=4)
    )
    stream = client.chat.completions.create(
        model="scripted-model",
        messages=[user("count")],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)
    content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    reasoning = "".join(
        getattr(c.choices[0].delta, "reasoning_content", None) or "" for c in chunks if c.choices
    )
    assert content == "one two three" and reasoning == "count"
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert finishes[-1] == "stop" and finishes.count("stop") == 1
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == 4
    assert all(c.usage is None for c in chunks[:-1])


def test_streaming_without_usage_has_no_usage_chunk(client):
    chunks = list(client.chat.completions.create(model="m", messages=[user("hello")], stream=True))
    assert all(c.choices for c in chunks)
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "echo: hello"


def test_tools_run_server_side_and_only_the_answer_comes_back(client, scripted_server, workspace):
    (workspace / "notes.txt").write_text("remember the milk\n")
    scripted_server.push(
        Reply(
            tool_calls=[ToolCallSpec("toolkit_file", {"action": "read", "filename": "notes.txt"})]
        ),
        Reply(text="It says: remember the milk"),
    )
    chunks = list(
        client.chat.completions.create(model="m", messages=[user("read notes")], stream=True)
    )
    deltas = [c.choices[0].delta for c in chunks if c.choices]
    assert all(not d.tool_calls for d in deltas)
    assert "".join(d.content or "" for d in deltas) == "It says: remember the milk"
    tool_message = scripted_server.requests[1]["messages"][-1]
    assert tool_message["role"] == "tool" and "remember the milk" in tool_message["content"]


def test_history_and_system_prompt_are_imported_then_session_continues(
    client, scripted_server, live
):
    raw = client.chat.completions.with_raw_response.create(
        model="m",
        messages=[
            {"role": "system", "content": "Answer in French."},
            user("my name is Ada"),
            {"role": "assistant", "content": "Bonjour Ada"},
            user("what is my name?"),
        ],
    )
    session_id = raw.headers["x-session-id"]
    sent = turn_requests(scripted_server)[-1]["messages"]
    assert "Answer in French." in sent[0]["content"]
    assert [m["role"] for m in sent[1:]] == ["user", "assistant", "user"]
    assert sent[1]["content"] == "my name is Ada"

    again = client.chat.completions.with_raw_response.create(
        model="m", messages=[user("and again?")], extra_body={"session_id": session_id}
    )
    assert again.headers["x-session-id"] == session_id
    assert [m.role for m in live.runtime.store.messages.of_topic(session_id)] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
    ]


def test_client_tools_are_refused_with_an_explanation(client):
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="m", messages=[user("hi")], tools=tools)
    assert "server" in caught.value.message and caught.value.code == "tools_not_supported"


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"messages": []}, "must not be empty"),
        ({"messages": [{"role": "assistant", "content": "x"}]}, "last message"),
        ({"messages": [{"role": "tool", "content": "x", "tool_call_id": "1"}]}, "tool"),
        ({"messages": [{"role": "wizard", "content": "x"}]}, "role"),
        ({"messages": [user("hi")], "extra_body": {"session_id": "missing"}}, "missing"),
        ({"messages": [user("hi")], "extra_body": {"profile": "a/b"}}, "not a path"),
    ],
)
def test_bad_requests_raise_client_errors(client, kwargs, fragment):
    with pytest.raises(openai.APIStatusError) as caught:
        client.chat.completions.create(model="m", **kwargs)
    assert caught.value.status_code in (400, 404)
    assert fragment in caught.value.message


@pytest.mark.parametrize(
    ("reply", "error_class", "status"),
    [
        (Reply(status=429, error_message="slow down", retry_after=0), openai.RateLimitError, 429),
        (Reply(status=400, error_message="upstream says no"), openai.InternalServerError, 502),
    ],
)
def test_upstream_failures_map_to_statuses(client, scripted_server, reply, error_class, status):
    scripted_server.on(lambda request: True, reply)
    with pytest.raises(error_class) as caught:
        client.chat.completions.create(model="m", messages=[user("hi")])
    assert caught.value.status_code == status
    with pytest.raises(error_class):
        list(client.chat.completions.create(model="m", messages=[user("hi")], stream=True))


def test_failure_mid_stream_raises_api_error_after_partial_content(client, scripted_server):
    broken = Reply(text="partial answer that breaks", cut_after=2)
    scripted_server.on(lambda request: True, broken)
    stream = client.chat.completions.create(model="m", messages=[user("hi")], stream=True)
    received = []
    with pytest.raises(openai.APIError) as caught:
        for chunk in stream:
            received.append(chunk.choices[0].delta.content or "")
    assert "".join(received)  # some content arrived before the failure
    assert "incomplete" in caught.value.message or "interrupted" in caught.value.message


def test_no_model_configured_is_503(live_factory, write_config, workspace):
    write_config({"agent": {"workspace": str(workspace)}})
    live = live_factory()
    client = openai.OpenAI(base_url=live.url + "/v1", api_key="x", max_retries=0)
    with client, pytest.raises(openai.APIStatusError) as caught:
        client.chat.completions.create(model="m", messages=[user("hi")])
    assert caught.value.status_code == 503 and "model_name" in caught.value.message


def test_stream_wire_format_and_keep_alive_while_tools_run(live, http, scripted_server):
    live.app.state.tea.turns.heartbeat = 0.05
    scripted_server.push(
        Reply(tool_calls=[ToolCallSpec("toolkit_exec", {"command": "sleep 0.4"})]),
        Reply(text="slept"),
    )
    body = {"model": "m", "messages": [user("nap")], "stream": True}
    with http.stream("POST", "/v1/chat/completions", json=body) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        lines = [line for line in response.iter_lines() if line]
    assert ": keep-alive" in lines
    data = [line for line in lines if not line.startswith(":")]
    assert all(line.startswith("data: ") for line in data)
    assert data[-1] == "data: [DONE]"
    chunks = [json.loads(line[6:]) for line in data[:-1]]
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    assert "".join(c["choices"][0]["delta"].get("content", "") for c in chunks) == "slept"
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    assert len({c["id"] for c in chunks}) == 1
