"""The recording proxy against the scripted OpenAI-compatible server and captured llama.cpp data."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from teaeval.proxy import RecordingProxy, Upstream, parse_route
from teaeval.usage import TokenCounts

from tests.fakes.scripted_server import Reply, ScriptedServer

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "llamacpp"
HI = [{"role": "user", "content": "hi"}]


@pytest.fixture
def fake() -> Iterator[ScriptedServer]:
    with ScriptedServer() as server:
        yield server


@pytest.fixture
def proxy(fake: ScriptedServer) -> Iterator[RecordingProxy]:
    with RecordingProxy(fake.base_url) as running:
        yield running


def post(url: str, body: dict) -> tuple[http.client.HTTPResponse, http.client.HTTPConnection]:
    parts = url.split("/", 3)
    host, port = parts[2].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    data = json.dumps(body).encode()
    conn.request("POST", f"/{parts[3]}", data, {"Content-Type": "application/json"})
    return conn.getresponse(), conn


def sse_payloads(text: str) -> list[dict]:
    events = [block[len("data: ") :] for block in text.split("\n\n") if block.strip()]
    return [json.loads(event) for event in events if event != "[DONE]"]


def test_routes_carry_tag_and_lane():
    route = parse_route("/fix_bug.2/cheap/v1/chat/completions?x=1")
    assert (route.tag, route.lane, route.rest) == ("fix_bug.2", "cheap", "/chat/completions?x=1")
    plain = parse_route("/v1/models")
    assert (plain.tag, plain.lane, plain.rest) == ("", "main", "/models")
    assert parse_route("/other/v1/models") is None and parse_route("/health") is None
    assert Upstream.parse("http://127.0.0.1:8090/v1/") == Upstream("http", "127.0.0.1", 8090, "/v1")
    with pytest.raises(ValueError):
        Upstream.parse("127.0.0.1:8090")


def test_a_json_answer_is_passed_on_and_recorded(fake, proxy):
    fake.push(Reply(text="Hello there", prompt_tokens=11, completion_tokens=3, delay=0.2))
    body = {"model": "m", "messages": HI}
    response, conn = post(proxy.url_for("t.1", "main") + "/chat/completions", body)
    data = json.loads(response.read())
    conn.close()
    assert response.status == 200 and data["choices"][0]["message"]["content"] == "Hello there"
    assert fake.requests == [body]
    [exchange] = proxy.exchanges("t.1")
    assert (exchange.lane, exchange.path, exchange.status) == ("main", "/chat/completions", 200)
    assert exchange.is_chat and not exchange.streamed and exchange.body == body
    assert exchange.tokens == TokenCounts(prompt=11, completion=3, cached=0)
    assert exchange.seconds >= 0.2


def test_a_stream_passes_through_chunk_by_chunk(fake, proxy):
    fake.push(Reply(text="abcdefghij", chunk_chars=1, delay=0.1, prompt_tokens=21))
    body = {"model": "m", "messages": HI, "stream": True, "stream_options": {"include_usage": True}}
    started = time.monotonic()
    response, conn = post(proxy.url_for("s.1", "cheap") + "/chat/completions", body)
    assert response.getheader("Content-Type") == "text/event-stream"
    first_line = response.readline()
    first_at = time.monotonic() - started
    rest = response.read()
    total = time.monotonic() - started
    conn.close()
    assert first_line.startswith(b"data: ")
    assert total - first_at > 0.5  # ten chunks 0.1 s apart: the first was not held back
    payloads = sse_payloads((first_line + rest).decode())
    text = "".join(p["choices"][0]["delta"].get("content") or "" for p in payloads if p["choices"])
    assert text == "abcdefghij" and rest.rstrip().endswith(b"data: [DONE]")
    [exchange] = proxy.exchanges("s.1")
    assert exchange.streamed and exchange.lane == "cheap"
    assert exchange.tokens.prompt == 21 and exchange.tokens.cached == 0
    assert exchange.tokens.completion and exchange.tokens.completion > 0
    assert exchange.seconds >= 0.9


def test_timings_on_the_finish_chunk_are_enough(fake, proxy):
    fake.push(Reply(text="ok", prompt_tokens=33, completion_tokens=2))
    response, conn = post(
        proxy.url_for("s.2") + "/chat/completions", {"model": "m", "messages": HI, "stream": True}
    )
    payloads = sse_payloads(response.read().decode())
    conn.close()
    assert "usage" not in payloads[-1] and payloads[-1]["timings"]["prompt_n"] == 33
    [exchange] = proxy.exchanges("s.2")
    assert exchange.tokens == TokenCounts(prompt=33, completion=2, cached=0)


def test_an_upstream_error_is_passed_on(fake, proxy):
    fake.push(Reply(status=500, error_message="model crashed"))
    response, conn = post(proxy.url_for("e.1") + "/chat/completions", {"messages": HI})
    data = json.loads(response.read())
    conn.close()
    assert response.status == 500 and data["error"]["message"] == "model crashed"
    [exchange] = proxy.exchanges("e.1")
    assert exchange.status == 500 and exchange.tokens == TokenCounts()


def test_a_get_is_forwarded_too(fake, proxy):
    conn = http.client.HTTPConnection("127.0.0.1", int(proxy.base_url.rsplit(":", 1)[1]))
    conn.request("GET", "/v1/models")
    response = conn.getresponse()
    data = json.loads(response.read())
    conn.close()
    assert response.status == 200 and data["data"][0]["id"] == "scripted-model"
    [exchange] = proxy.exchanges("")
    assert not exchange.is_chat and exchange.body is None


def test_an_unreachable_server_is_a_502():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with RecordingProxy(f"http://127.0.0.1:{port}/v1") as proxy:
        response, conn = post(proxy.url_for("u.1") + "/chat/completions", {"messages": HI})
        response.read()
        conn.close()
        [exchange] = proxy.exchanges()
    assert response.status == 502 and exchange.status == 502 and "upstream" in exchange.error


class Replay(BaseHTTPRequestHandler):
    """Answers every POST with one captured llama.cpp stream, in small uneven writes."""

    protocol_version = "HTTP/1.1"
    data = b""

    def log_message(self, format, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for start in range(0, len(self.data), 997):
            piece = self.data[start : start + 997]
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        self.wfile.write(b"0\r\n\r\n")


def test_a_captured_llamacpp_stream_arrives_unchanged_and_its_cache_is_counted():
    Replay.data = (FIXTURES / "stream_with_tools.sse").read_bytes()
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), Replay)
    thread = threading.Thread(target=upstream.serve_forever, daemon=True)
    thread.start()
    try:
        with RecordingProxy(f"http://127.0.0.1:{upstream.server_address[1]}/v1") as proxy:
            response, conn = post(proxy.url_for("r.1") + "/chat/completions", {"messages": HI})
            received = response.read()
            conn.close()
            [exchange] = proxy.exchanges("r.1")
    finally:
        upstream.shutdown()
        upstream.server_close()
    assert received == Replay.data
    # the finish chunk's timings: cache_n 1 + prompt_n 36, predicted_n 60
    assert exchange.tokens == TokenCounts(prompt=37, completion=60, cached=1)
