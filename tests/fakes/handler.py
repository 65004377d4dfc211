"""The HTTP side of the scripted server: routing, request checks, JSON and chunked SSE writing."""

from __future__ import annotations

import dataclasses
import json
import logging
import socket
import socketserver
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from . import wire
from .script import Reply

if TYPE_CHECKING:
    from .scripted_server import ScriptedServer

logger = logging.getLogger(__name__)


class ScriptedHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    app: ScriptedServer

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(address, handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind calls socket.getfqdn(), a reverse DNS lookup that can stall.
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]

    def handle_error(self, request: object, client_address: object) -> None:
        # A client hanging up (reset, broken pipe) is routine for a test double, not a failure.
        if isinstance(sys.exc_info()[1], ConnectionError):
            logger.debug("client %s went away", client_address)
            return
        super().handle_error(request, client_address)

    def track(self, conn: socket.socket, alive: bool) -> None:
        with self._connections_lock:
            if alive:
                self._connections.add(conn)
            else:
                self._connections.discard(conn)

    def close_connections(self) -> None:
        """Hang up idle keep-alive connections so their handler threads end with the server."""
        with self._connections_lock:
            conns = list(self._connections)
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class ScriptedHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "ScriptedServer/1.0"
    sys_version = ""
    server: ScriptedHTTPServer

    def setup(self) -> None:
        super().setup()
        self.server.track(self.connection, alive=True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.track(self.connection, alive=False)

    def log_message(self, format: str, *args: object) -> None:
        logger.debug("%s " + format, self.address_string(), *args)

    def do_GET(self) -> None:
        path = self._path()
        if path in ("/health", "/v1/health"):
            self._send_json(200, {"status": "ok"})
        elif path in ("/models", "/v1/models"):
            if self._authorized():
                self._send_json(200, wire.models_body(self.server.app.model))
        else:
            self._not_found()

    def do_POST(self) -> None:
        raw = self._read_body()
        routes = {
            "/v1/chat/completions": self._chat,
            "/chat/completions": self._chat,
            "/v1/embeddings": self._embeddings,
            "/embeddings": self._embeddings,
        }
        route = routes.get(self._path())
        if route is None:
            self._not_found()
            return
        try:
            route(raw)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _unsupported(self) -> None:
        self._read_body()
        self._not_found()

    do_PUT = do_PATCH = do_DELETE = _unsupported

    # -- endpoints ---------------------------------------------------------------------------

    def _chat(self, raw: bytes) -> None:
        app = self.server.app
        request = self._parse_json(raw)
        if request is None:
            return
        app._record_chat(request, {key.lower(): value for key, value in self.headers.items()})
        if not self._authorized():
            return
        if not isinstance(request.get("messages"), list):
            self._send_error(400, "Expected 'messages' to be an array")
            return
        reply = app._next_reply(request)
        calls = app._wire_calls(reply)
        stream = request.get("stream") is True
        if reply.delay and (not stream or reply.status != 200):
            time.sleep(reply.delay)
        if reply.status != 200:
            extra = {} if reply.retry_after is None else {"Retry-After": f"{reply.retry_after:g}"}
            self._send_error(reply.status, reply.error_message, extra)
            return
        meta = wire.Completion.new(app.model)
        usage = wire.estimate_usage(reply, request, calls)
        cached = min(usage.prompt_tokens, app._reuse_prompt(wire.render_prompt(request)) // 4)
        usage = dataclasses.replace(usage, cached_tokens=cached)
        if stream:
            options = request.get("stream_options") or {}
            include_usage = isinstance(options, dict) and options.get("include_usage") is True
            chunks, body_count = wire.stream_chunks(reply, calls, meta, usage, include_usage)
            self._stream(chunks, body_count, reply)
        elif reply.cut_after is not None:
            self._drop()
        else:
            self._send_json(200, wire.completion_body(reply, calls, meta, usage))

    def _embeddings(self, raw: bytes) -> None:
        app = self.server.app
        request = self._parse_json(raw)
        if request is None:
            return
        app._record_embedding(request)
        if not self._authorized():
            return
        texts = wire.embedding_inputs(request.get("input"))
        if texts is None:
            self._send_error(400, "'input' must be a string or a list of strings or tokens")
            return
        dimensions = request.get("dimensions")
        if not isinstance(dimensions, int) or dimensions <= 0:
            dimensions = wire.DEFAULT_EMBEDDING_DIMENSIONS
        encoding = request.get("encoding_format") or "float"
        self._send_json(200, wire.embeddings_body(texts, app.model, dimensions, encoding))

    # -- reading -----------------------------------------------------------------------------

    def _path(self) -> str:
        return urlsplit(self.path).path.rstrip("/") or "/"

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            parts = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return b"".join(parts)
                parts.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length > 0 else b""

    def _parse_json(self, raw: bytes) -> dict | None:
        try:
            request = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            self._send_error(400, f"Invalid JSON in request body: {exc}")
            return None
        if not isinstance(request, dict):
            self._send_error(400, "Request body must be a JSON object")
            return None
        return request

    def _authorized(self) -> bool:
        key = self.server.app.api_key
        if key is None or self.headers.get("Authorization", "") == f"Bearer {key}":
            return True
        self._send_error(401, "Invalid API Key")
        return False

    # -- writing -----------------------------------------------------------------------------

    def _send_json(self, status: int, body: object, extra: dict[str, str] | None = None) -> None:
        data = wire.dumps(body)
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _send_error(self, status: int, message: str, extra: dict[str, str] | None = None) -> None:
        self._send_json(status, wire.error_body(status, message), extra)

    def _not_found(self) -> None:
        self._send_error(404, "File Not Found")

    def _stream(self, chunks: list[dict], body_count: int, reply: Reply) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        # cut_after never reaches the finish chunk: the point is a stream that stops mid-answer.
        limit = None if reply.cut_after is None else min(max(0, reply.cut_after), body_count)
        for index, chunk in enumerate(chunks):
            if limit is not None and index >= limit:
                self._drop()
                return
            if index and reply.delay:
                time.sleep(reply.delay)
            self._write_chunk(wire.sse_event(chunk))
        self._write_chunk(wire.SSE_DONE)
        self.wfile.write(b"0\r\n\r\n")

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def _drop(self) -> None:
        """Close the connection abruptly, mid-response, like a crashed or restarted server."""
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
