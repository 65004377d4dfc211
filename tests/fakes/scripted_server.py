"""A scripted OpenAI-compatible HTTP server: the test double every LLM-facing test talks to.

It plays back queued ``Reply`` objects over real HTTP/1.1 (keep-alive, chunked SSE) in the shape
llama.cpp's server uses. Also runnable as a process for subprocess tests::

    python -m tests.fakes.scripted_server --port 0 --script script.json
    -> prints ``READY http://127.0.0.1:PORT/v1`` and serves until killed
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from pathlib import Path

from . import wire
from .handler import ScriptedHandler, ScriptedHTTPServer
from .script import Reply, ToolCallSpec, echo_reply, last_user_text

__all__ = ["Reply", "ScriptedServer", "ToolCallSpec", "echo_reply", "last_user_text", "main"]

Predicate = Callable[[dict], bool]


class ScriptedServer:
    """Answers chat requests from a FIFO of replies; rules (``on``) take precedence, and when the
    queue is empty ``default(request)`` answers (built-in: ``echo: <last user text>``)."""

    def __init__(
        self,
        replies: Iterable[Reply] = (),
        default: Callable[[dict], Reply] | None = None,
        model: str = "scripted-model",
        api_key: str | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        record_path: str | Path | None = None,
    ) -> None:
        self.model = model
        self.api_key = api_key
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self.embedding_requests: list[dict] = []
        self._default = default or echo_reply
        self._queue: deque[Reply] = deque(replies)
        self._rules: list[tuple[Predicate, Reply | Callable[[dict], Reply]]] = []
        self._lock = threading.Lock()
        self._slot = ""  # the prompt in the pretend KV cache
        self._call_ids = itertools.count(1)
        self._address = (host, port)
        self._record_path = Path(record_path) if record_path else None
        self._httpd: ScriptedHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> ScriptedServer:
        if self._httpd is not None:
            return self
        httpd = ScriptedHTTPServer(self._address, ScriptedHandler)
        httpd.app = self
        # A short poll interval keeps stop() quick; serve_forever only checks for it between polls.
        thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        thread.name = f"scripted-server-{httpd.server_address[1]}"
        thread.start()
        self._httpd, self._thread = httpd, thread
        return self

    def stop(self) -> None:
        httpd, thread = self._httpd, self._thread
        if httpd is None:
            return
        self._httpd = self._thread = None
        httpd.shutdown()
        httpd.close_connections()
        httpd.server_close()
        if thread is not None:
            thread.join(timeout=5)

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("ScriptedServer is not running; call start() first")
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://{self._address[0]}:{self.port}/v1"

    # -- scripting ---------------------------------------------------------------------------

    def push(self, *replies: Reply) -> None:
        """Queue more replies (first in, first out)."""
        with self._lock:
            self._queue.extend(replies)

    def on(self, predicate: Predicate, reply: Reply | Callable[[dict], Reply]) -> None:
        """Answer every request matching ``predicate`` with ``reply`` (or ``reply(request)``),
        before the queue is consulted; e.g. to keep background title requests off the script.
        The newest rule wins, so a test can override a fixture's default rule."""
        with self._lock:
            self._rules.insert(0, (predicate, reply))

    def reset(self) -> None:
        """Forget queued replies, rules and recorded requests."""
        with self._lock:
            self._queue.clear()
            self._rules.clear()
            self.requests.clear()
            self._slot = ""
            self.headers.clear()
            self.embedding_requests.clear()
            self._call_ids = itertools.count(1)

    @property
    def pending(self) -> int:
        """How many queued replies have not been served yet."""
        with self._lock:
            return len(self._queue)

    # -- used by the handler -----------------------------------------------------------------

    def _next_reply(self, request: dict) -> Reply:
        with self._lock:
            rules = list(self._rules)
        for predicate, source in rules:
            if predicate(request):
                return source if isinstance(source, Reply) else source(request)
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        return self._default(request)

    def _wire_calls(self, reply: Reply) -> list[wire.WireCall]:
        with self._lock:
            return [
                wire.WireCall(
                    id=spec.id or f"call_{next(self._call_ids)}",
                    name=spec.name,
                    arguments=spec.arguments_text(),
                )
                for spec in reply.native_tool_calls
            ]

    def _reuse_prompt(self, prompt: str) -> int:
        """Characters of ``prompt`` that the previous request's prompt began with: what a server
        with one KV-cache slot (llama.cpp ``-np 1``) reuses. ``prompt`` takes the slot."""
        with self._lock:
            previous, self._slot = self._slot, prompt
        return len(os.path.commonprefix([previous, prompt]))

    def _record_chat(self, request: dict, headers: dict) -> None:
        with self._lock:
            self.requests.append(request)
            self.headers.append(headers)
            if self._record_path is not None:
                line = json.dumps({"headers": headers, "body": request}, ensure_ascii=False)
                with self._record_path.open("a", encoding="utf-8") as handle:
                    handle.write(line + "\n")

    def _record_embedding(self, request: dict) -> None:
        with self._lock:
            self.embedding_requests.append(request)


def load_script(path: str | Path) -> list[Reply]:
    """Read a JSON list of Reply dicts (``tool_calls`` as ``{"name", "arguments"}`` dicts)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise ValueError(f"{path}: the script must be a JSON list of replies")
    return [Reply.from_dict(item) for item in data]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Scripted OpenAI-compatible test server.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--script", help="JSON list of Reply dicts, served in order")
    parser.add_argument("--model", default="scripted-model")
    parser.add_argument("--api-key", default=None, help="require this bearer token")
    parser.add_argument("--record", default=None, help="append each chat request here as JSONL")
    args = parser.parse_args(argv)
    replies = load_script(args.script) if args.script else []
    server = ScriptedServer(
        replies,
        model=args.model,
        api_key=args.api_key,
        host=args.host,
        port=args.port,
        record_path=args.record,
    )
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with server:
        print(f"READY {server.base_url}", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
