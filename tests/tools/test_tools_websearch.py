"""toolkit_search against a local server that answers like DuckDuckGo's HTML endpoint."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs

import pytest

from tea_agent_mini.config import ToolsConfig, load_config
from tea_agent_mini.errors import ToolError
from tea_agent_mini.runtime import Runtime
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import Toolkit
from tea_agent_mini.tools.web import search as websearch

# Hand-written in the markup of html.duckduckgo.com: an ad first, then organic results whose
# links go through the /l/?uddg= redirect.
RESULTS_PAGE = """<!DOCTYPE html>
<html lang="en-US"><head><meta charset="UTF-8">
<title>raspberry pi documentation at DuckDuckGo</title></head>
<body class="body--html">
<div id="links" class="results">
  <div class="result results_links results_links_deep result--ad ">
    <div class="links_main links_deep result__body">
      <h2 class="result__title">
        <a rel="nofollow" class="result__a"
           href="https://duckduckgo.com/y.js?ad_domain=shop.example&amp;ad_provider=bingv7aa">
           Cheap Boards - Buy Now</a>
      </h2>
      <a class="result__snippet" href="https://duckduckgo.com/y.js?ad_domain=shop.example">
        Sponsored: <b>free</b> shipping</a>
    </div>
  </div>
  <div class="result results_links results_links_deep web-result ">
    <div class="links_main links_deep result__body">
      <h2 class="result__title">
        <a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fwww.\
raspberrypi.com%2Fdocumentation%2F%3Fsection%3Dos%26lang%3Den&amp;rut=7f3c0e5a9d">Raspberry Pi
          <b>Documentation</b></a>
      </h2>
      <div class="result__extras">
        <div class="result__extras__url">
          <span class="result__icon"><a rel="nofollow" href="//duckduckgo.com/l/?uddg=x">
            <img class="result__icon__img" width="16" height="16" alt=""
                 src="//external-content.duckduckgo.com/ip3/www.raspberrypi.com.ico"/></a></span>
          <a class="result__url" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fwww.raspberrypi.com">
            www.raspberrypi.com/documentation</a>
        </div>
      </div>
      <a class="result__snippet" href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fwww.raspberrypi.com">
        The official <b>documentation</b> for Raspberry Pi computers &amp; microcontrollers.</a>
      <div class="clear"></div>
    </div>
  </div>
  <div class="result results_links results_links_deep web-result ">
    <div class="links_main links_deep result__body">
      <h2 class="result__title">
        <a rel="nofollow" class="result__a" href="https://en.wikipedia.org/wiki/Raspberry_Pi">
          Raspberry Pi - Wikipedia</a>
      </h2>
      <a class="result__snippet" href="https://en.wikipedia.org/wiki/Raspberry_Pi">
        Raspberry Pi is a series of small single-board computers &#40;SBCs&#41;.</a>
    </div>
  </div>
  <div class="result results_links results_links_deep web-result ">
    <div class="links_main links_deep result__body">
      <h2 class="result__title">
        <a rel="nofollow" class="result__a" href="//duckduckgo.com/l/?uddg=https%3A%2F%2F\
forums.raspberrypi.com%2F&amp;rut=abc">Raspberry Pi Forums</a>
      </h2>
    </div>
  </div>
  <div class="nav-link">
    <form action="/html/" method="post">
      <input type="submit" class="btn btn--alt" value="Next" />
      <input type="hidden" name="q" value="raspberry pi documentation" />
      <input type="hidden" name="s" value="10" />
    </form>
  </div>
</div>
</body></html>
"""

NO_RESULTS_PAGE = """<html><body><div id="links" class="results">
<div class="result results_links results_links_deep web-result ">
<div class="no-results">No  results.</div></div></div></body></html>"""

CHALLENGE_PAGE = """<html><body>
<form id="challenge-form" action="//duckduckgo.com/anomaly.js?sv=html&amp;cc=botnet" method="POST">
<div class="anomaly-modal__mask"><div class="anomaly-modal__modal" data-testid="anomaly-modal">
<div class="anomaly-modal__title">Unfortunately, bots use DuckDuckGo too.</div>
<div class="anomaly-modal__description">Please complete the following challenge to confirm
this search was made by a human.</div></div></div></form></body></html>"""

UNKNOWN_LAYOUT_PAGE = """<html><body><main><article><h3>Something new</h3>
<p>results rendered in a way we do not know</p></article></main></body></html>"""


class FakeDuckDuckGo(BaseHTTPRequestHandler):
    forms: list[dict[str, list[str]]]

    def log_message(self, *args):
        pass

    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        form = parse_qs(self.rfile.read(length).decode(), keep_blank_values=True)
        form["_user_agent"] = [self.headers.get("User-Agent", "")]
        self.forms.append(form)
        query = form.get("q", [""])[0]
        status, page = {
            "nothing here": (200, NO_RESULTS_PAGE),
            "robot": (202, CHALLENGE_PAGE),
            "robot ok": (200, CHALLENGE_PAGE),
            "new layout": (200, UNKNOWN_LAYOUT_PAGE),
            "server error": (503, "<html>busy</html>"),
        }.get(query, (200, RESULTS_PAGE))
        body = page.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=UTF-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=tmp_path, home=tmp_path / "home")


@pytest.fixture
def ddg_url() -> Iterator[tuple[str, list]]:
    """The fake endpoint's URL and the forms it received."""
    forms: list = []
    handler = type("Handler", (FakeDuckDuckGo,), {"forms": forms})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/html/", forms
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def ddg(ctx: ToolContext, ddg_url: tuple[str, list]) -> list:
    """The fake endpoint as ``ctx``'s tools.search_url; the forms it received."""
    ctx.tools_config = ToolsConfig(search_url=ddg_url[0])
    return ddg_url[1]


def test_results_are_parsed_unwrapped_and_ads_skipped(ctx, ddg):
    output = websearch.toolkit_search(ctx, query="raspberry pi documentation")
    assert output.splitlines() == [
        "Search results for 'raspberry pi documentation':",
        "1. Raspberry Pi Documentation",
        "   https://www.raspberrypi.com/documentation/?section=os&lang=en",
        "   The official documentation for Raspberry Pi computers & microcontrollers.",
        "2. Raspberry Pi - Wikipedia",
        "   https://en.wikipedia.org/wiki/Raspberry_Pi",
        "   Raspberry Pi is a series of small single-board computers (SBCs).",
        "3. Raspberry Pi Forums",
        "   https://forums.raspberrypi.com/",
    ]
    assert "Cheap Boards" not in output and "y.js" not in output
    (form,) = ddg
    assert form["q"] == ["raspberry pi documentation"]
    assert "kl" not in form
    assert form["_user_agent"][0].startswith("Mozilla/5.0")


def test_max_results_and_region(ctx, ddg):
    output = websearch.toolkit_search(ctx, query="pi", max_results=1, region="uk-en")
    assert "1. Raspberry Pi Documentation" in output
    assert "2." not in output
    assert ddg[0]["kl"] == ["uk-en"]


def test_no_results_is_an_answer_not_an_error(ctx, ddg):
    assert websearch.toolkit_search(ctx, query="nothing here") == "No results for 'nothing here'."


@pytest.mark.parametrize("query", ["robot", "robot ok"])
def test_bot_check_page_is_a_clear_error(ctx, ddg, query):
    with pytest.raises(ToolError, match="bot check"):
        websearch.toolkit_search(ctx, query=query)


def test_unknown_layout_is_reported(ctx, ddg):
    with pytest.raises(ToolError, match="changed its page layout"):
        websearch.toolkit_search(ctx, query="new layout")


def test_http_error_status(ctx, ddg):
    with pytest.raises(ToolError, match="answered HTTP 503"):
        websearch.toolkit_search(ctx, query="server error")


def test_network_failure(ctx):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    ctx.tools_config = ToolsConfig(search_url=f"http://127.0.0.1:{port}/html/?key=s3cr3t-k3y")
    with pytest.raises(ToolError, match="could not reach the search engine") as failure:
        websearch.toolkit_search(ctx, query="tea")
    assert "s3cr3t-k3y" not in str(failure.value)


def test_the_runtime_hands_the_endpoint_from_the_environment(ddg_url, write_config, monkeypatch):
    """TEA_AGENT_SEARCH_URL still works: it fills tools.search_url when the file leaves it
    empty, and the runtime's tool context carries it."""
    url, forms = ddg_url
    write_config({})
    monkeypatch.setenv("TEA_AGENT_SEARCH_URL", url)
    runtime = Runtime(load_config())
    try:
        ctx = runtime.tool_context(None)
        assert "Raspberry Pi Documentation" in websearch.toolkit_search(ctx, query="pi")
    finally:
        asyncio.run(runtime.aclose())
    assert forms[0]["q"] == ["pi"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"query": "  "}, "query is empty"), ({"query": "x", "max_results": 0}, "between 1 and 25")],
)
def test_argument_errors(ctx, ddg, kwargs, message):
    with pytest.raises(ToolError, match=message):
        websearch.toolkit_search(ctx, **kwargs)
    assert ddg == []


@pytest.mark.parametrize(
    ("href", "expected"),
    [
        (
            "//duckduckgo.com/l/?uddg=https%3A%2F%2Fa.example%2Fx%3Fy%3D1&rut=z",
            "https://a.example/x?y=1",
        ),
        ("/l/?kh=-1&uddg=http%3A%2F%2Fb.example%2F", "http://b.example/"),
        ("https://c.example/page", "https://c.example/page"),
        ("//d.example/path", "https://d.example/path"),
    ],
)
def test_unwrap_link(href, expected):
    assert websearch.unwrap_link(href) == expected


def test_registered_with_its_requirement():
    spec = Toolkit.load(["web.search"]).get("toolkit_search")
    assert spec is not None and spec.requires == ("httpx",) and spec.concurrency_safe
