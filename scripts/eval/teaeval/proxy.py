"""A recording HTTP proxy between the agent and the model server.

Requests to ``/<tag>/<lane>/v1/...`` (or plain ``/v1/...``) go to the target base URL with the
``/v1`` part replaced by the target's path. The tag names the task session that sent them and
the lane tells the agent's own turn (``main``) from its background calls (``cheap``: titles,
summaries, memory upkeep), so one proxy serves every task. SSE answers are passed on chunk by
chunk as they arrive; every exchange is recorded with its body, token counts and wall time.
"""

from __future__ import annotations

import http.client
import json
import logging
import re
import socketserver
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from .usage import StreamTap, TokenCounts, body_counts, body_reply

logger = logging.getLogger(__name__)

LANES = ("main", "cheap")
_ROUTE = re.compile(r"^(?:/(?P<tag>[A-Za-z0-9_.-]+)/(?P<lane>main|cheap))?/v1(?P<rest>/.*)?$")
# Hop-by-hop and framing headers: http.client and this server set their own.
_SKIPPED_HEADERS = frozenset(
    {"host", "connection", "keep-alive", "proxy-connection", "transfer-encoding", "te"}
    | {"content-length", "accept-encoding", "upgrade", "trailer"}
)


@dataclass(frozen=True)
class Route:
    tag: str
    lane: str
    rest: str  # the path after /v1, with the query string


def parse_route(raw_path: str) -> Route | None:
    """Where a proxied request belongs, or None for a path outside ``/v1``."""
    parts = urlsplit(raw_path)
    match = _ROUTE.match(parts.path)
    if match is None:
        return None
    rest = match.group("rest") or ""
    if parts.query:
        rest += f"?{parts.query}"
    return Route(tag=match.group("tag") or "", lane=match.group("lane") or "main", rest=rest)


@dataclass
class Exchange:
    """One request through the proxy and what came back."""

    index: int
    tag: str
    lane: str
    method: str
    path: str
    body: Any  # the request's JSON, None when it had none
    started: float
    status: int = 0
    streamed: bool = False
    tokens: TokenCounts = field(default_factory=TokenCounts)
    seconds: float = 0.0
    error: str | None = None
    reply: str = ""  # what a streamed response said: text and tool-call fragments
    finished: threading.Event = field(default_factory=threading.Event, repr=False, compare=False)

    @property
    def is_chat(self) -> bool:
        return self.method == "POST" and self.path.split("?")[0].endswith("/chat/completions")


class Recorder:
    """The exchanges seen so far, safe to use from the handler threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._exchanges: list[Exchange] = []

    def begin(self, route: Route, method: str, raw: bytes) -> Exchange:
        try:
            body = json.loads(raw.decode("utf-8")) if raw else None
        except (UnicodeDecodeError, json.JSONDecodeError):
            body = None
        with self._lock:
            exchange = Exchange(
                index=len(self._exchanges),
                tag=route.tag,
                lane=route.lane,
                method=method,
                path=route.rest,
                body=body,
                started=time.monotonic(),
            )
            self._exchanges.append(exchange)
        return exchange

    def finish(self, exchange: Exchange) -> None:
        exchange.seconds = time.monotonic() - exchange.started
        exchange.finished.set()

    def exchanges(self, tag: str | None = None, wait: float = 5.0) -> list[Exchange]:
        """The exchanges (of ``tag``), each waited for until its handler has recorded all of it:
        a client can have read the last byte a moment before that."""
        with self._lock:
            found = [e for e in self._exchanges if tag is None or e.tag == tag]
        deadline = time.monotonic() + wait
        for exchange in found:
            exchange.finished.wait(max(0.0, deadline - time.monotonic()))
        return found


@dataclass(frozen=True)
class Upstream:
    """The model server's base URL, split for http.client."""

    scheme: str
    host: str
    port: int
    base_path: str

    @classmethod
    def parse(cls, url: str) -> Upstream:
        parts = urlsplit(url.rstrip("/"))
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"expected an http:// or https:// base URL, got {url!r}")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        return cls(parts.scheme, parts.hostname, port, parts.path)

    def connect(self, timeout: float) -> http.client.HTTPConnection:
        if self.scheme == "https":
            return http.client.HTTPSConnection(self.host, self.port, timeout=timeout)
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)


class ProxyServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], upstream: Upstream, timeout: float) -> None:
        self.upstream = upstream
        self.upstream_timeout = timeout
        self.recorder = Recorder()
        super().__init__(address, ProxyHandler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind calls socket.getfqdn(), a reverse DNS lookup that can stall.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = str(self.server_address[0]), self.server_address[1]

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            logger.debug("client %s went away", client_address)
            return
        super().handle_error(request, client_address)


class ProxyHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ProxyServer

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("%s " + format, self.address_string(), *args)

    def do_GET(self) -> None:
        self._forward()

    def do_POST(self) -> None:
        self._forward()

    def _forward(self) -> None:
        raw = self._read_body()
        route = parse_route(self.path)
        if route is None:
            self._send_json(404, {"error": {"message": f"not a proxied path: {self.path}"}})
            return
        exchange = self.server.recorder.begin(route, self.command, raw)
        try:
            self._relay(route, raw, exchange)
        finally:
            self.server.recorder.finish(exchange)

    def _relay(self, route: Route, raw: bytes, exchange: Exchange) -> None:
        upstream = self.server.upstream
        conn = upstream.connect(self.server.upstream_timeout)
        try:
            headers = {k: v for k, v in self.headers.items() if k.lower() not in _SKIPPED_HEADERS}
            conn.request(self.command, upstream.base_path + route.rest, raw or None, headers)
            response = conn.getresponse()
        except OSError as exc:
            conn.close()
            exchange.status, exchange.error = 502, f"upstream: {exc}"
            self._send_json(502, {"error": {"message": exchange.error, "type": "proxy_error"}})
            return
        exchange.status = response.status
        try:
            if "text/event-stream" in (response.getheader("Content-Type") or ""):
                self._relay_stream(response, exchange)
            else:
                self._relay_body(response, exchange)
        finally:
            conn.close()

    def _relay_body(self, response: http.client.HTTPResponse, exchange: Exchange) -> None:
        data = response.read()
        if response.status == 200:
            exchange.tokens = body_counts(data)
            exchange.reply = body_reply(data)
        self._start_response(response)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _relay_stream(self, response: http.client.HTTPResponse, exchange: Exchange) -> None:
        exchange.streamed = True
        tap = StreamTap()
        self._start_response(response)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            while data := response.read1(65536):
                tap.feed(data)
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
        except (http.client.HTTPException, OSError) as exc:
            # pass the break on: the client must see a cut stream, not a clean end
            exchange.error = f"stream broke off: {exc.__class__.__name__}: {exc}"
            self.close_connection = True
            return
        finally:
            tap.finish()
            exchange.tokens = tap.counts
            exchange.reply = "".join(tap.reply)
        self.wfile.write(b"0\r\n\r\n")

    def _start_response(self, response: http.client.HTTPResponse) -> None:
        self.send_response(response.status, response.reason)
        for name, value in response.getheaders():
            if name.lower() not in _SKIPPED_HEADERS:
                self.send_header(name, value)

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            parts = []
            while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
                parts.append(self.rfile.read(size))
                self.rfile.readline()
            self.rfile.readline()
            return b"".join(parts)
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _send_json(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class RecordingProxy:
    """Runs the proxy on a background thread; ``with RecordingProxy(url) as proxy: ...``."""

    def __init__(
        self, target: str, host: str = "127.0.0.1", port: int = 0, timeout: float = 900.0
    ) -> None:
        self._server = ProxyServer((host, port), Upstream.parse(target), timeout)
        self._thread: threading.Thread | None = None

    def start(self) -> RecordingProxy:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._server.serve_forever,
                kwargs={"poll_interval": 0.05},
                name="eval-proxy",
                daemon=True,
            )
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> RecordingProxy:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def url_for(self, tag: str, lane: str = "main") -> str:
        """The base URL (ending in /v1) that files this client's requests under tag and lane."""
        if lane not in LANES:
            raise ValueError(f"lane must be one of {LANES}, got {lane!r}")
        return f"{self.base_url}/{tag}/{lane}/v1"

    def exchanges(self, tag: str | None = None) -> list[Exchange]:
        return self._server.recorder.exchanges(tag)
