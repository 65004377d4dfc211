"""Sampling and format fields of ``/v1/chat/completions`` reach the model calls of the turn (or
are refused with a reason), ``store: false`` leaves no session, and ``GET /v1/models/{id}``;
driven by the official ``openai`` client."""

from __future__ import annotations

import time

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


SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
}


def test_sampling_fields_reach_every_model_call_of_the_turn(client, scripted_server, workspace):
    (workspace / "a.txt").write_text("alpha\n")
    scripted_server.push(
        Reply(tool_calls=[ToolCallSpec("toolkit_file", {"action": "read", "filename": "a.txt"})]),
        Reply(text='{"city": "Paris"}'),
    )
    completion = client.chat.completions.create(
        model="m",
        messages=[user("read a.txt")],
        temperature=0.2,
        top_p=0.9,
        max_tokens=77,
        stop=["END"],
        seed=42,
        presence_penalty=0.5,
        frequency_penalty=-0.5,
        response_format={"type": "json_object"},
    )
    assert completion.choices[0].message.content == '{"city": "Paris"}'
    calls = turn_requests(scripted_server)
    assert len(calls) == 2
    for body in calls:
        assert body["temperature"] == 0.2 and body["top_p"] == 0.9
        assert body["max_tokens"] == 77
        assert body["stop"] == ["END"] and body["seed"] == 42
        assert body["presence_penalty"] == 0.5 and body["frequency_penalty"] == -0.5
        assert body["response_format"] == {"type": "json_object"}


def test_json_schema_format_and_a_single_stop_string(client, scripted_server):
    client.chat.completions.create(
        model="m",
        messages=[user("where?")],
        stop="###",
        max_completion_tokens=33,
        response_format={
            "type": "json_schema",
            "json_schema": {"name": "place", "schema": SCHEMA, "strict": True},
        },
    )
    body = turn_requests(scripted_server)[-1]
    assert body["stop"] == ["###"] and body["max_tokens"] == 33
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "place", "schema": SCHEMA, "strict": True},
    }


def test_without_fields_the_configured_defaults_stay(client, scripted_server):
    client.chat.completions.create(model="m", messages=[user("plain")])
    body = turn_requests(scripted_server)[-1]
    for key in ("temperature", "top_p", "stop", "seed", "response_format"):
        assert key not in body


def test_streaming_requests_forward_them_too(client, scripted_server):
    stream = client.chat.completions.create(
        model="m", messages=[user("hi")], stream=True, temperature=0, seed=7
    )
    assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == "echo: hi"
    body = turn_requests(scripted_server)[-1]
    assert body["temperature"] == 0 and body["seed"] == 7


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"logprobs": True}, "log-probabilities"),
        ({"top_logprobs": 2}, "log-probabilities"),
        ({"tool_choice": "required"}, "tool_choice"),
        ({"temperature": 3}, "between 0 and 2"),
        ({"top_p": -1}, "between 0 and 1"),
        ({"max_tokens": 0}, "at least 1"),
        ({"stop": ["a", "b", "c", "d", "e"]}, "at most 4"),
        ({"response_format": {"type": "xml"}}, "json_object"),
        ({"response_format": {"type": "json_schema"}}, "json_schema"),
        ({"seed": "x"}, "integer"),
        ({"store": False, "extra_body": {"session_id": "abc"}}, "store"),
    ],
)
def test_fields_that_cannot_be_honoured_are_refused(client, scripted_server, kwargs, fragment):
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="m", messages=[user("hi")], **kwargs)
    assert fragment in caught.value.message
    assert not turn_requests(scripted_server)


def test_store_false_leaves_no_session(client, live, scripted_server):
    before = live.runtime.store.topics.recent(limit=100)
    raw = client.chat.completions.with_raw_response.create(
        model="m", messages=[user("forget me")], store=False
    )
    assert raw.parse().choices[0].message.content == "echo: forget me"
    session_id = raw.headers["x-session-id"]
    deadline = time.monotonic() + 5
    while live.runtime.store.topics.get(session_id) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert live.runtime.store.topics.get(session_id) is None
    assert live.runtime.store.topics.recent(limit=100) == before


def test_chat_sessions_are_api_sessions_and_continue_with_session_id(client, live):
    raw = client.chat.completions.with_raw_response.create(model="m", messages=[user("one")])
    session_id = raw.headers["x-session-id"]
    client.chat.completions.create(
        model="m", messages=[user("two")], extra_body={"session_id": session_id}
    )
    topic = live.runtime.store.topics.get(session_id)
    assert topic.source == "api" and topic.message_count == 4
    assert [t.id for t in live.runtime.store.topics.recent(sources=("api",))] == [session_id]


def test_models_retrieve_main_and_profile(client, write_config, scripted_server):
    model = client.models.retrieve("scripted-model")
    assert model.id == "scripted-model" and model.object == "model"
    write_config({"main_model": {"model_name": "other"}}, name="fast")
    assert client.models.retrieve("profile:fast").id == "profile:fast"
    with pytest.raises(openai.NotFoundError) as caught:
        client.models.retrieve("no-such-model")
    assert "no-such-model" in caught.value.message
