"""``POST /v1/responses`` driven by the official ``openai`` client against the real server:
``responses.create`` and ``responses.stream``, sessions continued by ``previous_response_id``."""

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


def test_create_answers_with_a_response_object(client, scripted_server, live):
    scripted_server.push(
        Reply(text="Paris.", reasoning="France.", prompt_tokens=20, completion_tokens=2)
    )
    raw = client.responses.with_raw_response.create(
        model="scripted-model", input="Capital of France?", instructions="Be brief."
    )
    response = raw.parse()
    assert response.output_text == "Paris." and response.status == "completed"
    assert response.id.startswith("resp_") and response.object == "response"
    assert [item.type for item in response.output] == ["reasoning", "message"]
    assert response.output[0].content[0].text == "France."
    assert response.usage.input_tokens == 20 and response.usage.output_tokens == 2
    sent = turn_requests(scripted_server)[-1]["messages"]
    assert "Be brief." in sent[0]["content"]
    topic = live.runtime.store.topics.get(raw.headers["x-session-id"])
    assert topic.source == "api" and topic.message_count == 2


def test_stream_sends_the_event_sequence_the_client_parses(client, scripted_server):
    scripted_server.push(Reply(text="one two three", reasoning="count up"))
    with client.responses.stream(model="m", input="count") as stream:
        events = list(stream)
        final = stream.get_final_response()
    kinds = [e.type for e in events]
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert kinds[-1] == "response.completed"
    for kind in (
        "response.output_item.added",
        "response.content_part.added",
        "response.reasoning_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.output_item.done",
    ):
        assert kind in kinds
    deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
    assert "".join(deltas) == "one two three" and len(deltas) > 1
    assert final.output_text == "one two three"
    numbers = [e.sequence_number for e in events]
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers)
    assert final.id == events[0].response.id


def test_tools_run_server_side_during_a_stream(client, scripted_server, workspace):
    (workspace / "notes.txt").write_text("remember the milk\n")
    scripted_server.push(
        Reply(
            tool_calls=[ToolCallSpec("toolkit_file", {"action": "read", "filename": "notes.txt"})]
        ),
        Reply(text="It says: remember the milk"),
    )
    with client.responses.stream(model="m", input="read notes") as stream:
        final = stream.get_final_response()
    assert final.output_text == "It says: remember the milk"
    assert all(item.type == "message" for item in final.output)
    assert "remember the milk" in turn_requests(scripted_server)[1]["messages"][-1]["content"]


def test_previous_response_id_continues_the_session(client, scripted_server, live):
    first = client.responses.with_raw_response.create(model="m", input="my name is Ada")
    session_id = first.headers["x-session-id"]
    second = client.responses.create(
        model="m",
        previous_response_id=first.parse().id,
        input=[
            {"role": "user", "content": "note this"},
            {"role": "assistant", "content": [{"type": "output_text", "text": "noted"}]},
            {"role": "user", "content": [{"type": "input_text", "text": "what is my name?"}]},
        ],
    )
    assert second.output_text == "echo: what is my name?"
    roles = [m.role for m in live.runtime.store.messages.of_topic(session_id)]
    assert roles == ["user", "assistant", "user", "assistant", "user", "assistant"]
    sent = turn_requests(scripted_server)[-1]["messages"]
    assert any(m.get("content") == "my name is Ada" for m in sent)


def test_sampling_and_text_format_reach_the_model(client, scripted_server):
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    client.responses.create(
        model="m",
        input="json please",
        temperature=0.3,
        top_p=0.5,
        max_output_tokens=64,
        text={"format": {"type": "json_schema", "name": "thing", "schema": schema}},
    )
    body = turn_requests(scripted_server)[-1]
    assert body["temperature"] == 0.3 and body["top_p"] == 0.5 and body["max_tokens"] == 64
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "thing", "schema": schema},
    }


def test_store_false_leaves_no_session(client, live):
    raw = client.responses.with_raw_response.create(model="m", input="secret", store=False)
    assert raw.parse().output_text == "echo: secret"
    session_id = raw.headers["x-session-id"]
    deadline = time.monotonic() + 5
    while live.runtime.store.topics.get(session_id) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert live.runtime.store.topics.get(session_id) is None


def test_output_limit_makes_an_incomplete_response(client, scripted_server):
    scripted_server.push(Reply(text="cut he", finish_reason="length"))
    with client.responses.stream(model="m", input="long story") as stream:
        events = list(stream)
    assert events[-1].type == "response.incomplete"
    assert events[-1].response.incomplete_details.reason == "max_output_tokens"


def test_a_failure_mid_stream_is_a_failed_response(client, scripted_server):
    scripted_server.on(lambda request: True, Reply(text="partial answer that breaks", cut_after=2))
    with client.responses.stream(model="m", input="hi") as stream:
        events = list(stream)
    assert events[-1].type == "response.failed"
    assert events[-1].response.error.message
    with pytest.raises(RuntimeError):
        stream.get_final_response()


@pytest.mark.parametrize(
    ("kwargs", "fragment", "error_class"),
    [
        ({"input": "x", "tools": [{"type": "web_search"}]}, "tools", openai.BadRequestError),
        (
            {"input": [{"type": "function_call_output", "call_id": "1", "output": "x"}]},
            "tools",
            openai.BadRequestError,
        ),
        ({"input": []}, "input", openai.BadRequestError),
        ({"input": "x", "temperature": 9}, "temperature", openai.BadRequestError),
        ({"input": "x", "previous_response_id": "resp_nope"}, "nope", openai.NotFoundError),
        (
            {"input": "x", "previous_response_id": "resp_" + "0" * 48},
            "no session",
            openai.NotFoundError,
        ),
    ],
)
def test_bad_requests_raise_client_errors(client, kwargs, fragment, error_class):
    with pytest.raises(error_class) as caught:
        client.responses.create(model="m", **kwargs)
    assert fragment in caught.value.message


def test_upstream_failure_before_output_is_an_http_error(client, scripted_server):
    scripted_server.on(lambda request: True, Reply(status=400, error_message="upstream says no"))
    with pytest.raises(openai.InternalServerError):
        client.responses.create(model="m", input="hi")
    with (
        pytest.raises(openai.InternalServerError),
        client.responses.stream(model="m", input="hi") as stream,
    ):
        list(stream)
