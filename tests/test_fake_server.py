"""The scripted server, checked against the official openai client and real llama.cpp captures."""

from __future__ import annotations

import base64
import http.client
import json
import math
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import openai
import pytest

from tests.fakes import Reply, ScriptedServer, ToolCallSpec

FIXTURES = Path(__file__).parent / "fixtures" / "llamacpp"
ROOT = Path(__file__).resolve().parent.parent
USER_HI = [{"role": "user", "content": "hi"}]


@pytest.fixture
def server():
    with ScriptedServer() as srv:
        yield srv


@pytest.fixture
def client(server):
    with openai.OpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0, timeout=5) as c:
        yield c


def raw_request(
    server: ScriptedServer, method: str, path: str, body: bytes | dict | None = None
) -> tuple[http.client.HTTPResponse, bytes]:
    data = json.dumps(body).encode() if isinstance(body, dict) else body
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        conn.request(method, path, body=data, headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        return response, response.read()
    finally:
        conn.close()


def sse_payloads(text: str) -> list[str]:
    """The data of each SSE event; every event must be exactly one `data:` line."""
    events = [block for block in text.split("\n\n") if block.strip()]
    assert all(event.startswith("data: ") and "\n" not in event for event in events), events
    return [event[len("data: ") :] for event in events]


def load_sse(name: str) -> list[str]:
    return sse_payloads((FIXTURES / name).read_text(encoding="utf-8"))


def stream_raw(server: ScriptedServer, reply: Reply, include_usage: bool) -> list[str]:
    server.push(reply)
    body = {"model": "m", "messages": USER_HI, "stream": True}
    if include_usage:
        body["stream_options"] = {"include_usage": True}
    response, data = raw_request(server, "POST", "/v1/chat/completions", body)
    assert response.status == 200
    assert response.getheader("Content-Type") == "text/event-stream"
    assert response.getheader("Transfer-Encoding") == "chunked"
    return sse_payloads(data.decode("utf-8"))


# -- chat through the openai client ------------------------------------------------------------


def test_non_stream_text_with_usage(server, client):
    server.push(Reply(text="Hello there", prompt_tokens=11, completion_tokens=3))
    result = client.chat.completions.create(model="asked-model", messages=USER_HI)
    assert result.object == "chat.completion"
    assert result.model == "scripted-model"
    assert result.choices[0].message.role == "assistant"
    assert result.choices[0].message.content == "Hello there"
    assert result.choices[0].finish_reason == "stop"
    assert (result.usage.prompt_tokens, result.usage.completion_tokens) == (11, 3)
    assert result.usage.total_tokens == 14
    assert server.requests[0]["model"] == "asked-model"
    assert server.requests[0]["messages"] == USER_HI


def test_stream_text_with_include_usage(server, client):
    server.push(Reply(text="Hello streaming world", chunk_chars=5, finish_reason="length"))
    chunks = list(
        client.chat.completions.create(
            model="m", messages=USER_HI, stream=True, stream_options={"include_usage": True}
        )
    )
    first, *middle, finish, usage = chunks
    assert first.choices[0].delta.role == "assistant"
    assert first.choices[0].delta.content is None
    pieces = [c.choices[0].delta.content for c in middle]
    assert pieces == ["Hello", " stre", "aming", " worl", "d"]
    assert all(c.choices[0].finish_reason is None for c in [first, *middle])
    assert finish.choices[0].finish_reason == "length"
    assert finish.usage is None
    assert usage.choices == []
    assert usage.usage.completion_tokens >= 1
    assert usage.usage.total_tokens == usage.usage.prompt_tokens + usage.usage.completion_tokens
    assert len({c.id for c in chunks}) == 1


def test_stream_without_include_usage_ends_with_finish_chunk(server, client):
    server.push(Reply(text="ok"))
    chunks = list(client.chat.completions.create(model="m", messages=USER_HI, stream=True))
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert all(c.usage is None for c in chunks)


def assemble_tool_calls(chunks) -> dict[int, dict]:
    calls: dict[int, dict] = {}
    for chunk in chunks:
        for frag in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
            call = calls.setdefault(frag.index, {"id": None, "name": None, "arguments": ""})
            call["id"] = frag.id or call["id"]
            call["name"] = frag.function.name or call["name"]
            call["arguments"] += frag.function.arguments or ""
    return calls


def test_streamed_tool_calls_follow_openai_fragments(server, client):
    calls = [
        ToolCallSpec("read_file", {"path": "/tmp/notes.txt", "limit": 20}),
        ToolCallSpec("shell", '{"cmd": "ls -la", oops', id="call_custom"),
    ]
    server.push(Reply(text="Let me look.", tool_calls=calls))
    chunks = list(client.chat.completions.create(model="m", messages=USER_HI, stream=True))
    fragments = [f for c in chunks for f in (c.choices[0].delta.tool_calls or [])]
    heads = [f for f in fragments if f.id is not None]
    assert [(h.index, h.id, h.type, h.function.name) for h in heads] == [
        (0, "call_1", "function", "read_file"),
        (1, "call_custom", "function", "shell"),
    ]
    assert all(h.function.arguments == "" for h in heads)
    tails = [f for f in fragments if f.id is None]
    assert all(t.type is None and t.function.name is None for t in tails)
    assert len([t for t in tails if t.index == 0]) > 1
    assembled = assemble_tool_calls(chunks)
    assert json.loads(assembled[0]["arguments"]) == {"path": "/tmp/notes.txt", "limit": 20}
    assert assembled[1]["arguments"] == '{"cmd": "ls -la", oops'
    assert chunks[-1].choices[0].finish_reason == "tool_calls"
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert text == "Let me look."


def test_non_stream_tool_calls(server, client):
    server.push(Reply(tool_calls=[ToolCallSpec("add", {"a": 1, "b": 2})]))
    message = client.chat.completions.create(model="m", messages=USER_HI).choices[0].message
    assert message.content is None
    assert [(c.id, c.function.name) for c in message.tool_calls] == [("call_1", "add")]
    assert json.loads(message.tool_calls[0].function.arguments) == {"a": 1, "b": 2}


def test_tool_calls_as_text_print_hermes_blocks(server, client):
    server.push(
        Reply(text="Sure.", tool_calls=[ToolCallSpec("add", {"a": 1})], tool_calls_as_text=True)
    )
    result = client.chat.completions.create(model="m", messages=USER_HI)
    message = result.choices[0].message
    assert message.tool_calls is None
    assert result.choices[0].finish_reason == "stop"
    assert message.content.startswith("Sure.\n<tool_call>")
    inner = message.content.split("<tool_call>")[1].split("</tool_call>")[0]
    assert json.loads(inner) == {"name": "add", "arguments": {"a": 1}}


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_reasoning_is_sent_in_the_chosen_field(server, client, field):
    server.push(Reply(text="42", reasoning="think hard", reasoning_field=field))
    chunks = list(client.chat.completions.create(model="m", messages=USER_HI, stream=True))
    pieces = [(c.choices[0].delta.model_extra or {}).get(field) for c in chunks]
    assert "".join(p for p in pieces if p) == "think hard"
    reasoning_at = max(i for i, p in enumerate(pieces) if p)
    content_at = min(i for i, c in enumerate(chunks) if c.choices[0].delta.content)
    assert reasoning_at < content_at
    server.push(Reply(text="42", reasoning="think hard", reasoning_field=field))
    message = client.chat.completions.create(model="m", messages=USER_HI).choices[0].message
    assert message.model_extra[field] == "think hard"


# -- failures ----------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize(
    ("status", "error_class", "error_type"),
    [
        (500, openai.InternalServerError, "server_error"),
        (503, openai.InternalServerError, "unavailable_error"),
        (429, openai.RateLimitError, "rate_limit_error"),
        (400, openai.BadRequestError, "invalid_request_error"),
    ],
)
def test_error_statuses_raise_openai_errors(
    server, client, stream, status, error_class, error_type
):
    server.push(Reply(status=status, error_message="boom here", retry_after=2))
    with pytest.raises(error_class) as caught:
        client.chat.completions.create(model="m", messages=USER_HI, stream=stream)
    error = caught.value
    assert error.status_code == status
    assert "boom here" in error.message
    assert error.body == {"code": status, "message": "boom here", "type": error_type}
    assert error.response.headers["retry-after"] == "2"


def test_api_key_is_checked():
    with ScriptedServer(api_key="sk-x") as server:
        bad = openai.OpenAI(base_url=server.base_url, api_key="sk-wrong", max_retries=0)
        with bad, pytest.raises(openai.AuthenticationError) as caught:
            bad.chat.completions.create(model="m", messages=USER_HI)
        with openai.OpenAI(base_url=server.base_url, api_key="sk-x", max_retries=0) as good:
            result = good.chat.completions.create(model="m", messages=USER_HI)
    assert caught.value.status_code == 401
    assert caught.value.body["message"] == "Invalid API Key"
    assert result.choices[0].message.content == "echo: hi"
    assert [h["authorization"] for h in server.headers] == ["Bearer sk-wrong", "Bearer sk-x"]


def test_cut_after_drops_stream_before_finish(server, client):
    server.push(Reply(text="a long answer that never ends", cut_after=3))
    received = []
    with pytest.raises(openai.APIConnectionError):
        for chunk in client.chat.completions.create(model="m", messages=USER_HI, stream=True):
            received.append(chunk)
    assert len(received) == 3
    assert all(c.choices[0].finish_reason is None for c in received)
    # The server keeps serving after a dropped connection.
    result = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert result.choices[0].message.content == "echo: x"


def test_cut_after_never_reaches_the_finish_chunk(server):
    server.push(Reply(text="ab", cut_after=99))
    body = {"messages": USER_HI, "stream": True, "stream_options": {"include_usage": True}}
    with pytest.raises(http.client.IncompleteRead) as caught:
        raw_request(server, "POST", "/v1/chat/completions", body)
    payloads = sse_payloads(caught.value.partial.decode())
    assert len(payloads) == 2  # the role chunk and the one content chunk, nothing after
    assert all(json.loads(p)["choices"][0]["finish_reason"] is None for p in payloads)


def test_cut_after_on_non_stream_drops_without_response(server, client):
    server.push(Reply(text="never sent", cut_after=0))
    with pytest.raises(openai.APIConnectionError):
        client.chat.completions.create(model="m", messages=USER_HI)


def test_delay_slows_the_stream_between_chunks(server, client):
    server.push(Reply(text="abcdefgh", chunk_chars=4, delay=0.05))
    started = time.monotonic()
    chunks = list(client.chat.completions.create(model="m", messages=USER_HI, stream=True))
    # role, 2 content, finish: three sleeps at least (a sleep never returns early).
    assert time.monotonic() - started >= 0.15
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "abcdefgh"


# -- scripting ---------------------------------------------------------------------------------


def test_replies_are_fifo_then_echo_default(server, client):
    server.push(Reply(text="one"), Reply(text="two"))

    def ask(text: str) -> str:
        messages = [{"role": "user", "content": [{"type": "text", "text": text}]}]
        return (
            client.chat.completions.create(model="m", messages=messages).choices[0].message.content
        )

    assert [ask("a"), ask("b"), ask("c")] == ["one", "two", "echo: c"]
    assert len(server.requests) == len(server.headers) == 3
    server.reset()
    assert server.requests == [] and server.pending == 0


def test_custom_default_and_rules():
    def shout(request: dict) -> Reply:
        return Reply(text=request["messages"][-1]["content"].upper())

    with ScriptedServer([Reply(text="queued")], default=shout, model="tiny") as srv:
        srv.on(lambda r: "title" in r["messages"][0]["content"], Reply(text="A Title"))
        with openai.OpenAI(base_url=srv.base_url, api_key="k", max_retries=0) as c:

            def ask(text: str) -> str:
                messages = [{"role": "user", "content": text}]
                return (
                    c.chat.completions.create(model="m", messages=messages)
                    .choices[0]
                    .message.content
                )

            assert [ask("make a title"), ask("x"), ask("loud")] == ["A Title", "queued", "LOUD"]
            assert c.models.list().data[0].id == "tiny"


def test_concurrent_requests_each_get_one_reply(server):
    server.push(*(Reply(text=f"r{i}") for i in range(8)))
    answers: list[str] = []

    def worker() -> None:
        with openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0) as c:
            result = c.chat.completions.create(model="m", messages=USER_HI, stream=True)
            answers.append("".join(ch.choices[0].delta.content or "" for ch in result))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=5)
    assert sorted(answers) == sorted(f"r{i}" for i in range(8))
    assert len(server.requests) == 8


def test_reply_from_dict_rejects_unknown_fields():
    reply = Reply.from_dict({"text": "t", "tool_calls": [{"name": "f", "arguments": {"a": 1}}]})
    assert reply.tool_calls == [ToolCallSpec("f", {"a": 1})]
    with pytest.raises(ValueError, match="colour"):
        Reply.from_dict({"colour": "red"})


# -- embeddings and models ---------------------------------------------------------------------


def test_embeddings_shape_determinism_and_dimensions(server, client):
    texts = ["green tea recipe", "a recipe for green tea", "stock market crash"]
    first = client.embeddings.create(model="e", input=texts, encoding_format="float")
    again = client.embeddings.create(model="e", input=texts)  # openai asks for base64 here
    vectors = [d.embedding for d in first.data]
    assert [d.index for d in first.data] == [0, 1, 2]
    assert all(len(v) == 64 for v in vectors)
    assert all(math.isclose(sum(x * x for x in v), 1.0, rel_tol=1e-6) for v in vectors)
    for decoded, vector in zip(again.data, vectors, strict=True):
        assert decoded.embedding == pytest.approx(vector, rel=1e-6)
    assert server.embedding_requests[1]["encoding_format"] == "base64"

    def cosine(a: list[float], b: list[float]) -> float:
        return sum(x * y for x, y in zip(a, b, strict=True))

    assert cosine(vectors[0], vectors[1]) > cosine(vectors[0], vectors[2])
    single = client.embeddings.create(model="e", input="hello", dimensions=8)
    assert len(single.data) == 1 and len(single.data[0].embedding) == 8
    assert single.usage.prompt_tokens >= 1


def test_embeddings_base64_is_little_endian_float32(server):
    body = {"input": "x", "encoding_format": "base64", "dimensions": 4}
    response, data = raw_request(server, "POST", "/v1/embeddings", body)
    packed = base64.b64decode(json.loads(data)["data"][0]["embedding"])
    assert response.status == 200 and len(packed) == 16
    assert math.isclose(sum(v * v for v in struct.unpack("<4f", packed)), 1.0, rel_tol=1e-5)


def test_models_list(client):
    models = client.models.list()
    assert [m.id for m in models.data] == ["scripted-model"]
    assert models.data[0].object == "model"


# -- wire format against the llama.cpp captures ------------------------------------------------


def key_shape(payload: str) -> tuple[set, set | None]:
    chunk = json.loads(payload)
    choice_keys = set(chunk["choices"][0]) if chunk["choices"] else None
    return set(chunk), choice_keys


def test_stream_chunks_match_llamacpp_capture_with_usage(server):
    real = load_sse("stream_text.sse")
    ours = stream_raw(server, Reply(text="Hello world"), include_usage=True)
    for index in (0, 1, -3, -2):  # role, content, finish, usage chunks
        assert key_shape(ours[index]) == key_shape(real[index]), index
    assert json.loads(ours[0])["choices"][0]["delta"] == {"role": "assistant", "content": None}
    assert json.loads(ours[-3])["choices"][0]["delta"] == {}
    usage_chunk, real_usage = json.loads(ours[-2]), json.loads(real[-2])
    assert usage_chunk["choices"] == [] == real_usage["choices"]
    assert set(usage_chunk["usage"]) == set(real_usage["usage"])
    assert set(usage_chunk["timings"]) == set(real_usage["timings"])
    assert ours[-1] == real[-1] == "[DONE]"


def test_stream_chunks_match_llamacpp_capture_without_usage(server):
    real = load_sse("stream_with_tools.sse")
    ours = stream_raw(server, Reply(text="Hello world"), include_usage=False)
    for index in (0, 1, -2):  # role, content, finish (which then carries timings)
        assert key_shape(ours[index]) == key_shape(real[index]), index
    assert ours[-1] == real[-1] == "[DONE]"


def test_non_stream_body_matches_llamacpp_capture(server):
    real = json.loads((FIXTURES / "nonstream_with_tools.json").read_text(encoding="utf-8"))
    server.push(Reply(text="plain answer"))
    response, data = raw_request(server, "POST", "/v1/chat/completions", {"messages": USER_HI})
    ours = json.loads(data)
    assert response.getheader("Content-Length") == str(len(data))
    assert set(ours) == set(real)
    assert set(ours["choices"][0]) == set(real["choices"][0])
    assert set(ours["choices"][0]["message"]) == set(real["choices"][0]["message"])
    assert set(ours["usage"]) == set(real["usage"])


def test_bad_request_matches_llamacpp_capture(server):
    head, _, real_body = (FIXTURES / "bad_request.http").read_bytes().partition(b"\r\n\r\n")
    response, data = raw_request(server, "POST", "/v1/chat/completions", {"messages": "not a list"})
    assert response.status == 400
    assert data == real_body
    assert b"Content-Type: " + response.getheader("Content-Type").encode() in head


@pytest.mark.parametrize("body", [b"{not json", b"[1, 2]", b""])
def test_invalid_json_is_400(server, body):
    response, data = raw_request(server, "POST", "/v1/chat/completions", body)
    assert response.status == 400
    assert json.loads(data)["error"]["type"] == "invalid_request_error"


@pytest.mark.parametrize(("method", "path"), [("GET", "/v1/nothing"), ("POST", "/v1/completions")])
def test_unknown_paths_are_404_json(server, method, path):
    response, data = raw_request(server, method, path, b"{}" if method == "POST" else None)
    assert response.status == 404
    assert json.loads(data) == {
        "error": {"code": 404, "message": "File Not Found", "type": "not_found_error"}
    }


def test_keep_alive_serves_several_requests_on_one_connection(server):
    server.push(Reply(text="first"), Reply(text="second"))
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        bodies = []
        for stream in (True, False):
            body = json.dumps({"messages": USER_HI, "stream": stream})
            conn.request("POST", "/v1/chat/completions", body=body)
            response = conn.getresponse()
            bodies.append(response.read().decode())
            assert not response.will_close
        sock = conn.sock
        conn.request("GET", "/v1/models")
        assert conn.getresponse().read()
        assert conn.sock is sock
    finally:
        conn.close()
    deltas = [json.loads(p)["choices"][0]["delta"] for p in sse_payloads(bodies[0])[:-1]]
    assert "".join(d.get("content") or "" for d in deltas) == "first"
    assert json.loads(bodies[1])["choices"][0]["message"]["content"] == "second"


# -- as a process ------------------------------------------------------------------------------


def test_runs_as_a_process_with_a_script(tmp_path):
    script = tmp_path / "script.json"
    replies = [{"tool_calls": [{"name": "ls", "arguments": {"path": "."}}]}, {"text": "done"}]
    script.write_text(json.dumps(replies), encoding="utf-8")
    record = tmp_path / "requests.jsonl"
    command = [sys.executable, "-m", "tests.fakes.scripted_server", "--port", "0"]
    command += ["--script", str(script), "--record", str(record), "--api-key", "sk-p"]
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline().strip()
        assert line.startswith("READY http://127.0.0.1:") and line.endswith("/v1")
        with openai.OpenAI(base_url=line.split()[1], api_key="sk-p", max_retries=0) as c:
            answers = [c.chat.completions.create(model="m", messages=USER_HI) for _ in range(3)]
    finally:
        proc.terminate()
        proc.wait(timeout=5)
    assert answers[0].choices[0].message.tool_calls[0].function.name == "ls"
    assert [a.choices[0].message.content for a in answers[1:]] == ["done", "echo: hi"]
    lines = [json.loads(x) for x in record.read_text(encoding="utf-8").splitlines()]
    assert [x["headers"]["authorization"] for x in lines] == ["Bearer sk-p"] * 3
