from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.tools.web import fetch as web
from tea_agent_mini.tools.web.fetch import toolkit_web_fetch
from tea_agent_mini.tools.web.htmltext import html_to_text
from tea_agent_mini.tools.web.netguard import FetchPolicy

PAGE = """<!doctype html>
<html><head><title>Tea  Notes</title>
<style>body { color: red }</style>
<script>var secretToken = "do-not-show";</script></head>
<body>
<nav><a href="/">Home</a> <a href="/about">About</a></nav>
<h1>Green tea</h1>
<p>Brew at <b>80&nbsp;°C</b>   for
   two minutes. See <a href="/guide">the guide</a>.</p>
<ul><li>sencha</li><li>matcha<ul><li>ceremonial</li></ul></li></ul>
<pre>water = 80
steep(2)</pre>
<script>document.write("injected")</script>
<noscript>Enable JavaScript</noscript>
</body></html>"""

BIG_BODY = b"0123456789abcdef" * (3 * 1024 * 1024 // 16)  # 3 MB


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):  # keep test output quiet
        pass

    def send(self, status: int, body: bytes, content_type: str, **headers: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        routes = {
            "/page": (200, PAGE.encode(), "text/html; charset=utf-8"),
            "/json": (200, b'{"tea": "\\u8336", "n": [1, 2]}', "application/json"),
            "/text": (200, "plain 茶 text".encode("gbk"), "text/plain; charset=gbk"),
            "/big": (200, BIG_BODY, "text/plain"),
            "/image": (200, b"\x89PNG\r\n\x1a\n" + bytes(100), "image/png"),
            "/missing": (404, b"<html><body><p>no such page</p></body></html>", "text/html"),
        }
        if self.path in routes:
            self.send(*routes[self.path])
        elif self.path == "/redirect":
            self.send(302, b"", "text/plain", Location="/page")
        elif self.path.startswith("/loop"):
            self.send(302, b"", "text/plain", Location=f"/loop{len(self.path)}")
        else:
            self.send(404, b"not found", "text/plain")


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture(autouse=True)
def no_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("all_proxy", raising=False)


@pytest.fixture
def ctx(workspace: Path, tea_home: Path) -> ToolContext:
    # the test servers listen on 127.0.0.1, which only an allowing user lets the tool reach
    return ToolContext(workspace=workspace, home=tea_home, allow_private_fetch=True)


def body_of(result: str) -> str:
    return result.split("\n\n", 1)[1]


def test_html_becomes_readable_text(ctx, server):
    out = toolkit_web_fetch(ctx, f"{server}/page")
    assert out.startswith(f"URL: {server}/page\nStatus: 200 OK\nContent-Type: text/html")
    text = body_of(out)
    assert text.startswith("# Tea Notes\n\n# Green tea\n\n")
    assert f"Brew at 80 °C for two minutes. See the guide ({server}/guide)." in text
    assert "- sencha\n- matcha\n  - ceremonial" in text
    assert "```\nwater = 80\nsteep(2)\n```" in text
    for dropped in ("secretToken", "injected", "Enable JavaScript", "About", "color: red"):
        assert dropped not in text


def test_redirects_are_followed(ctx, server):
    out = toolkit_web_fetch(ctx, f"{server}/redirect")
    assert out.startswith(f"URL: {server}/page\n(redirected from {server}/redirect)\n")
    assert "# Green tea" in out


def test_redirect_loops_stop(ctx, server):
    with pytest.raises(ToolError, match="too many redirects"):
        toolkit_web_fetch(ctx, f"{server}/loop")


def test_large_bodies_are_capped_while_streaming(ctx, server, monkeypatch):
    fetched = web.download(f"{server}/big", timeout=10, policy=FetchPolicy(allow_private=True))
    assert fetched.capped and len(fetched.body) == web.MAX_BODY_BYTES
    out = toolkit_web_fetch(ctx, f"{server}/big", max_chars=1000)
    assert "only that much was read" in out
    assert f"[truncated: showing 1,000 of {web.MAX_BODY_BYTES:,} characters]" in out


def test_json_and_declared_charsets(ctx, server):
    assert json.loads(body_of(toolkit_web_fetch(ctx, f"{server}/json"))) == {
        "tea": "茶",
        "n": [1, 2],
    }
    assert body_of(toolkit_web_fetch(ctx, f"{server}/text")) == "plain 茶 text"


def test_binary_content_is_described_not_dumped(ctx, server):
    text = body_of(toolkit_web_fetch(ctx, f"{server}/image"))
    assert text == "(image/png content, 108 bytes: not text, so not shown)"


def test_http_errors_are_tool_errors_with_the_page_text(ctx, server):
    with pytest.raises(ToolError, match="HTTP 404 Not Found .*no such page"):
        toolkit_web_fetch(ctx, f"{server}/missing")


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "ftp://example.com/x", "javascript:alert(1)", "http://", "x"]
)
def test_only_http_urls(ctx, url):
    with pytest.raises(ToolError, match="only http:// and https://"):
        toolkit_web_fetch(ctx, url)


def test_connection_errors_are_tool_errors(ctx):
    import socket

    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ToolError, match="failed: ConnectError"):
        toolkit_web_fetch(ctx, f"http://127.0.0.1:{port}/", timeout=5)


@pytest.mark.parametrize(
    ("html", "text"),
    [
        ("<p>a</p><p>b</p>", "a\n\nb"),
        ("<h2>Sub</h2>text", "## Sub\n\ntext"),
        ("x<br>y", "x\ny"),
        (
            "<table><tr><th>k</th><th>v</th></tr><tr><td>1</td><td>2</td></tr></table>",
            "k | v\n1 | 2",
        ),
        ("<a href='#top'>top</a> <a href='mailto:x@y'>mail</a>", "top mail"),
        ("<img alt='a cat' src='c.png'>", "[image: a cat]"),
        ("<head><title>T</title><body><p>unclosed head</p>", "# T\n\nunclosed head"),
        ("<p>caf&eacute; &amp; &lt;tags&gt;</p>", "café & <tags>"),
    ],
)
def test_html_to_text_cases(html, text):
    assert html_to_text(html, "http://example.com/") == text
