from __future__ import annotations

import base64
import json
import logging
import math
import socket
import struct
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tea_agent_mini.errors import UpstreamError
from tea_agent_mini.memory.embedder import FallbackEmbedder, LocalEmbedder, RemoteEmbedder
from tea_agent_mini.vectors import dot, normalize

REPO_ROOT = Path(__file__).resolve().parents[2]

# -- a tiny OpenAI-compatible embeddings server ---------------------------------------------


def fake_vector(text: str) -> list[float]:
    """Deterministic, deliberately not normalised."""
    return [float(len(text) + 1), float(sum(map(ord, text)) % 97 + 1), 3.0]


@dataclass
class Call:
    path: str
    headers: dict[str, str]
    body: dict


class EmbedServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), EmbedHandler)
        self.calls: list[Call] = []
        self.fail_status: int | None = None
        self.raw_reply: bytes | None = None  # sent as-is with status 200 when set
        self.base64 = False
        self.lock = threading.Lock()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class EmbedHandler(BaseHTTPRequestHandler):
    server: EmbedServer

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        headers = {key.lower(): value for key, value in self.headers.items()}
        with self.server.lock:
            self.server.calls.append(Call(self.path, headers, body))
        if self.server.fail_status:
            # Echo the credentials, as some proxies do, to check they are masked.
            message = f"boom ({headers.get('authorization')})"
            self._send(self.server.fail_status, json.dumps({"error": {"message": message}}))
        elif self.server.raw_reply is not None:
            self._send(200, self.server.raw_reply.decode())
        else:
            self._send(200, json.dumps(self._embeddings(body["input"])))

    def _embeddings(self, texts: list[str]) -> dict:
        data = []
        for index, text in enumerate(texts):
            vec: object = fake_vector(text)
            if self.server.base64:
                vec = base64.b64encode(struct.pack("<3f", *vec)).decode()
            data.append({"object": "embedding", "index": index, "embedding": vec})
        data.reverse()  # servers may answer out of order; "index" says where each belongs
        return {"object": "list", "data": data, "model": "fake"}

    def _send(self, status: int, text: str) -> None:
        payload = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server():
    httpd = EmbedServer()
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02})
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=5)


def inputs(server: EmbedServer) -> list[list[str]]:
    return [call.body["input"] for call in server.calls]


# -- LocalEmbedder --------------------------------------------------------------------------


def similarity(embedder, a: str, b: str) -> float:
    va, vb = embedder.embed([a, b])
    return dot(va, vb)


@pytest.mark.parametrize(
    ("text", "near", "far"),
    [
        ("my cat likes fish", "the cat eats fish", "stock market report"),
        ("我喜欢喝绿茶", "绿茶很好喝", "今天股市下跌"),
        ("The user prefers dark mode", "user likes a dark theme", "deploy it to kubernetes"),
        ("学习 Python 异步编程", "python 的异步编程教程", "明天去北京出差"),
    ],
)
def test_local_neighbours_share_keywords(text, near, far):
    embedder = LocalEmbedder()
    assert similarity(embedder, text, near) > similarity(embedder, text, far) + 0.2


def test_local_vectors_are_normalised_and_sized():
    embedder = LocalEmbedder(dim=64)
    vectors = embedder.embed(["hello world", "你好世界", ""])
    assert [len(vec) for vec in vectors] == [64, 64, 64]
    assert math.hypot(*vectors[0]) == pytest.approx(1.0)
    assert math.hypot(*vectors[1]) == pytest.approx(1.0)
    assert vectors[2] == [0.0] * 64
    assert embedder.model_name == "local-hash-64"
    assert LocalEmbedder().model_name == "local-hash-256"


def test_local_ignores_case_and_full_width_forms():
    embedder = LocalEmbedder()
    assert embedder.embed(["Green Tea"]) == embedder.embed(["ｇｒｅｅｎ　ＴＥＡ"])


def test_local_is_stable_across_processes_with_different_hash_seeds():
    code = (
        "import json;from tea_agent_mini.memory.embedder import LocalEmbedder;"
        "print(json.dumps(LocalEmbedder(32).embed(['stable 向量 hashing'])))"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={"PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO_ROOT)},
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1
    assert json.loads(outputs.pop()) == LocalEmbedder(32).embed(["stable 向量 hashing"])


def test_local_rejects_bad_dimension():
    with pytest.raises(ValueError, match="positive"):
        LocalEmbedder(0)


# -- RemoteEmbedder -------------------------------------------------------------------------


def test_remote_batches_and_returns_normalised_vectors_in_order(server):
    texts = ["alpha", "beta", "gamma", "delta", "epsilon"]
    with RemoteEmbedder(server.base_url, "emb-model", batch_size=2) as embedder:
        vectors = embedder.embed(texts)
    assert vectors == [normalize(fake_vector(text)) for text in texts]
    assert inputs(server) == [["alpha", "beta"], ["gamma", "delta"], ["epsilon"]]
    assert {call.path for call in server.calls} == {"/v1/embeddings"}
    assert all(call.body["model"] == "emb-model" for call in server.calls)
    assert all("dimensions" not in call.body for call in server.calls)


def test_remote_fetches_each_text_once(server):
    with RemoteEmbedder(server.base_url + "/", "m") as embedder:
        first = embedder.embed(["a", "b", "a"])
        second = embedder.embed(["b", "c", "a"])
    assert inputs(server) == [["a", "b"], ["c"]]
    assert first[0] == first[2] == second[2]
    assert second[0] == first[1]


def test_remote_cache_is_bounded(server):
    with RemoteEmbedder(server.base_url, "m", cache_size=2) as embedder:
        for text in ["a", "b", "c", "a"]:
            embedder.embed([text])
    assert inputs(server) == [["a"], ["b"], ["c"], ["a"]]


@pytest.mark.parametrize("api_key", [None, "", "sk-test-1234"])
def test_remote_sends_authorization_only_with_its_own_key(server, monkeypatch, api_key):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-environment")
    with RemoteEmbedder(server.base_url, "m", api_key=api_key) as embedder:
        embedder.embed(["x"])
    headers = server.calls[0].headers
    if api_key:
        assert headers["authorization"] == f"Bearer {api_key}"
    else:
        assert "authorization" not in headers


def test_remote_sends_dimensions_and_names_the_model_with_them(server):
    with RemoteEmbedder(server.base_url, "emb", dimensions=3) as embedder:
        embedder.embed(["x"])
        assert embedder.model_name == "emb@3"
    assert server.calls[0].body["dimensions"] == 3
    assert RemoteEmbedder(server.base_url, "emb").model_name == "emb"


def test_remote_reads_base64_embeddings(server):
    server.base64 = True
    with RemoteEmbedder(server.base_url, "m") as embedder:
        vectors = embedder.embed(["abc", "de"])
    expected = [
        normalize(struct.unpack("<3f", struct.pack("<3f", *fake_vector(t)))) for t in ["abc", "de"]
    ]
    assert vectors == [pytest.approx(vec) for vec in expected]


def test_remote_error_status_raises_upstream_error_without_leaking_key(server):
    server.fail_status = 500
    embedder = RemoteEmbedder(server.base_url, "m", api_key="sk-secret-key-9876")
    with embedder, pytest.raises(UpstreamError) as info:
        embedder.embed(["x"])
    assert info.value.status == 500
    assert "boom" in str(info.value)
    assert "sk-secret-key-9876" not in str(info.value)


@pytest.mark.parametrize(
    "reply",
    [
        b"not json",
        b'{"data": []}',
        b'{"data": [{"index": 0, "embedding": "not base64!"}]}',
        b'{"data": [{"index": 0, "embedding": ["a", "b"]}]}',
        b'{"data": [{"index": 0, "embedding": []}]}',
        b'{"data": [{"index": 0, "embedding": 5}]}',
        b'{"data": [{"index": 0, "embedding": [1, NaN]}]}',
        b"[1, 2]",
    ],
)
def test_remote_malformed_response_raises_upstream_error(server, reply):
    server.raw_reply = reply
    with RemoteEmbedder(server.base_url, "m") as embedder, pytest.raises(UpstreamError):
        embedder.embed(["x"])


def test_remote_error_object_in_ok_response_is_reported(server):
    server.raw_reply = b'{"error": {"message": "quota exceeded for sk-secret-key-9876"}}'
    embedder = RemoteEmbedder(server.base_url, "m", api_key="sk-secret-key-9876")
    with embedder, pytest.raises(UpstreamError, match="quota exceeded") as info:
        embedder.embed(["x"])
    assert "sk-secret-key-9876" not in str(info.value)


def test_remote_embeds_nothing_without_a_request(server):
    with RemoteEmbedder(server.base_url, "m") as embedder:
        assert embedder.embed([]) == []
    assert server.calls == []


def test_remote_mixed_lengths_raise_upstream_error(server):
    server.raw_reply = b'{"data": [{"embedding": [1, 2]}, {"embedding": [1, 2, 3]}]}'
    embedder = RemoteEmbedder(server.base_url, "m")
    with embedder, pytest.raises(UpstreamError, match="different lengths"):
        embedder.embed(["x", "y"])


def test_remote_unreachable_raises_upstream_error():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    embedder = RemoteEmbedder(f"http://127.0.0.1:{port}/v1", "m", timeout=5)
    with embedder, pytest.raises(UpstreamError, match="failed"):
        embedder.embed(["x"])


def test_remote_is_safe_to_share_between_threads(server):
    texts = [f"text {n}" for n in range(40)]
    embedder = RemoteEmbedder(server.base_url, "m", batch_size=3)
    with embedder, ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(embedder.embed, [texts] * 4))
    expected = [normalize(fake_vector(text)) for text in texts]
    assert all(result == expected for result in results)


def test_remote_works_against_the_shared_scripted_server(scripted_server):
    with RemoteEmbedder(scripted_server.base_url, "scripted-model", dimensions=16) as embedder:
        vectors = embedder.embed(["hello", "world"])
    assert [len(vec) for vec in vectors] == [16, 16]
    assert math.hypot(*vectors[0]) == pytest.approx(1.0)
    assert scripted_server.embedding_requests[0]["input"] == ["hello", "world"]


# -- FallbackEmbedder -----------------------------------------------------------------------


def test_fallback_uses_local_on_failure_and_warns_once(server, caplog):
    server.fail_status = 503
    local = LocalEmbedder(8)
    with RemoteEmbedder(server.base_url, "remote-model") as remote:
        embedder = FallbackEmbedder(remote, local, retry_interval=0)
        with caplog.at_level(logging.DEBUG, logger="tea_agent_mini.memory.embedder"):
            first = embedder.embed(["tea"])
            second = embedder.embed(["coffee"])
    assert first == local.embed(["tea"])
    assert second == local.embed(["coffee"])
    assert embedder.last_model == "local-hash-8"
    assert embedder.model_name == "remote-model"
    assert len(server.calls) == 2  # retry_interval=0: the primary is tried every time
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "remote-model" in warnings[0].getMessage()


def test_fallback_leaves_a_failed_primary_alone_until_retry_interval(server):
    server.fail_status = 500
    with RemoteEmbedder(server.base_url, "remote-model") as remote:
        embedder = FallbackEmbedder(remote, LocalEmbedder(), retry_interval=3600)
        embedder.embed(["a"])
        model, _ = embedder.embed_with_model(["b"])
    assert model == "local-hash-256"
    assert len(server.calls) == 1


def test_fallback_returns_to_primary_when_it_recovers(server, caplog):
    server.fail_status = 500
    with RemoteEmbedder(server.base_url, "remote-model") as remote:
        embedder = FallbackEmbedder(remote, LocalEmbedder(), retry_interval=0)
        assert embedder.embed_with_model(["a"])[0] == "local-hash-256"
        server.fail_status = None
        with caplog.at_level(logging.INFO, logger="tea_agent_mini.memory.embedder"):
            model, vectors = embedder.embed_with_model(["a"])
        assert embedder.embed(["b"]) == [normalize(fake_vector("b"))]
    assert model == "remote-model"
    assert vectors == [normalize(fake_vector("a"))]
    assert embedder.last_model == "remote-model"
    assert any("back" in record.getMessage() for record in caplog.records)
