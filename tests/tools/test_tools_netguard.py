"""toolkit_web_fetch refuses this machine and private networks unless agent.allow_private_fetch.

The only servers a test can run listen on loopback, so the redirect and pinning tests treat one
local port as public through the policy's ``refuse`` seam (every other address still goes
through the real check), and give a made-up name an address through its ``resolve`` seam.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tea_agent_mini.config import Config, config_from_dict
from tea_agent_mini.errors import ToolError
from tea_agent_mini.runtime import Runtime
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.tools.web.fetch import download, toolkit_web_fetch
from tea_agent_mini.tools.web.netguard import FetchPolicy, address_refusal, resolve_host

REFUSED = [
    "127.0.0.1",
    "127.1.2.3",
    "::1",
    "169.254.169.254",
    "10.0.0.1",
    "172.16.5.4",
    "192.168.1.1",
    "100.64.0.1",  # carrier-grade NAT
    "0.0.0.0",
    "::",
    "fe80::1",
    "fe80::1%eth0",
    "fc00::1",
    "224.0.0.1",
    "ff02::1",
    "255.255.255.255",
    "::ffff:127.0.0.1",  # IPv4-mapped
    "::ffff:10.0.0.1",
    "2002:7f00:1::1",  # 6to4 around 127.0.0.1
    "64:ff9b::a9fe:a9fe",  # NAT64 around 169.254.169.254
]
ALLOWED = ["93.184.216.34", "1.1.1.1", "2606:4700:4700::1111", "::ffff:93.184.216.34"]


@pytest.mark.parametrize("address", REFUSED)
def test_private_addresses_are_refused(address):
    assert address_refusal(address) is not None


@pytest.mark.parametrize("address", ALLOWED)
def test_public_addresses_are_allowed(address):
    assert address_refusal(address) is None


@dataclass
class Site:
    """A local server that records the requests it got; paths: /page, /to?url=<target>, /host."""

    url: str
    port: int
    hits: list[str] = field(default_factory=list)


@pytest.fixture
def sites() -> Iterator[tuple[Site, Site]]:
    servers, started = [], []
    for _ in range(2):
        site = Site("", 0)

        class Handler(BaseHTTPRequestHandler):
            record = site

            def log_message(self, *args):
                pass

            def do_GET(self):
                self.record.hits.append(self.path)
                if self.path.startswith("/to?url="):
                    self.send_response(302)
                    self.send_header("Location", self.path.removeprefix("/to?url="))
                    body = b""
                else:
                    self.send_response(200)
                    body = f"host={self.headers['Host']} path={self.path}".encode()
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        site.port = httpd.server_address[1]
        site.url = f"http://127.0.0.1:{site.port}"
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        servers.append(httpd)
        started.append(site)
    try:
        yield started[0], started[1]
    finally:
        for httpd in servers:
            httpd.shutdown()
            httpd.server_close()


@pytest.fixture(autouse=True)
def no_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("all_proxy", raising=False)


def public_port(port: int) -> FetchPolicy:
    """The default policy, except that 127.0.0.1:<port> counts as a public address and the
    made-up name public.example resolves to it."""

    def refuse(address: str, to: int) -> str | None:
        return None if (address, to) == ("127.0.0.1", port) else address_refusal(address)

    def resolve(host: str, to: int) -> list[str]:
        return ["127.0.0.1"] if host == "public.example" else resolve_host(host, to)

    return FetchPolicy(resolve=resolve, refuse=refuse)


def test_the_tool_refuses_this_machine_by_default(sites, workspace: Path, tea_home: Path):
    site, _ = sites
    ctx = ToolContext(workspace=workspace, home=tea_home)
    for url in (f"{site.url}/page", f"http://localhost:{site.port}/page"):
        with pytest.raises(ToolError, match="loopback address.*allow_private_fetch: true"):
            toolkit_web_fetch(ctx, url)
    for url in ("http://169.254.169.254/latest/meta-data/", "http://[::1]:9/", "http://10.1.2.3/"):
        with pytest.raises(ToolError, match="refusing to fetch"):
            toolkit_web_fetch(ctx, url, timeout=2)
    assert site.hits == []
    allowed = ToolContext(workspace=workspace, home=tea_home, allow_private_fetch=True)
    assert "path=/page" in toolkit_web_fetch(allowed, f"{site.url}/page")


def test_every_redirect_hop_is_checked(sites):
    public, private = sites
    policy = public_port(public.port)
    hop = download(f"{public.url}/to?url=/page", 5, policy=policy)
    assert hop.body.startswith(b"host=127.0.0.1") and public.hits == ["/to?url=/page", "/page"]
    with pytest.raises(ToolError, match=r"127\.0\.0\.1, a loopback address"):
        download(f"{public.url}/to?url={private.url}/page", 5, policy=policy)
    assert private.hits == []
    with pytest.raises(ToolError, match="not an http"):
        download(f"{public.url}/to?url=file:///etc/passwd", 5, policy=policy)


def test_the_connection_goes_to_the_checked_address(sites):
    public, _ = sites
    # "public.example" exists only in the policy's resolver: reaching the server proves the
    # request went to the address that was checked, with the name kept in the Host header
    fetched = download(
        f"http://public.example:{public.port}/page", 5, policy=public_port(public.port)
    )
    assert fetched.body == f"host=public.example:{public.port} path=/page".encode()
    assert fetched.url == f"http://public.example:{public.port}/page"


def test_a_name_with_any_private_address_is_refused():
    policy = FetchPolicy(resolve=lambda host, port: ["93.184.216.34", "10.0.0.7"])
    with pytest.raises(ToolError, match=r"mixed\.example resolves to 10\.0\.0\.7"):
        download("http://mixed.example/", 5, policy=policy)


def test_the_config_key_reaches_the_tool_context(tea_home: Path, workspace: Path):
    config = config_from_dict({"agent": {"allow_private_fetch": True, "workspace": str(workspace)}})
    config.home = tea_home
    runtime = Runtime(config)
    try:
        assert runtime.tool_context(None).allow_private_fetch is True
    finally:
        runtime.close_store()
    assert Config().agent.allow_private_fetch is False


def test_the_next_checked_address_is_tried_when_one_does_not_connect(sites):
    site, _ = sites

    def refuse(address: str, port: int) -> str | None:
        return None if port == site.port else address_refusal(address)

    # nothing listens on 127.0.0.2, as on an unreachable first address of a real name
    policy = FetchPolicy(resolve=lambda host, port: ["127.0.0.2", "127.0.0.1"], refuse=refuse)
    fetched = download(f"http://two.example:{site.port}/page", 5, policy=policy)
    assert fetched.body == f"host=two.example:{site.port} path=/page".encode()
