"""Warming up starts the configured MCP servers, so on a keyed server only a request that passed
the key check may trigger it. The MCP server here is a real process that leaves a marker file."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

KEY = "warm-up-test-key-0123"
SPAWN_MARK = "import pathlib, sys; pathlib.Path(sys.argv[1]).write_text('spawned')"


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    return tmp_path / "mcp-spawned"


def start(live_factory, marker: Path, api_key: str | None):
    def configure(config) -> None:
        probe = {"command": sys.executable, "args": ["-c", SPAWN_MARK, str(marker)]}
        config.mcp_servers = {"probe": probe}

    return live_factory(api_key=api_key, configure=configure)


def appears(path: Path, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if path.exists():
            return True
        time.sleep(0.05)
    return path.exists()


def test_the_ui_page_without_the_key_warms_nothing(model_config, live_factory, marker):
    live = start(live_factory, marker, KEY)
    with live.client() as http:
        assert http.get("/").status_code == 200
        assert http.get("/v1/sessions", headers={"X-API-Key": "wrong"}).status_code == 401
        assert not appears(marker, 1.5)
        assert "toolkit" not in vars(live.runtime)
        assert http.get("/v1/sessions", headers={"X-API-Key": KEY}).status_code == 200
        assert appears(marker, 15)


def test_without_a_key_the_ui_page_warms_up(model_config, live_factory, marker):
    live = start(live_factory, marker, None)
    with live.client() as http:
        assert http.get("/").status_code == 200
    assert appears(marker, 15)


def test_the_first_turn_after_a_start_offers_the_mcp_servers_tools(
    model_config, live_factory, scripted_server
):
    from tests.fakes.background import turn_requests
    from tests.fakes.scripted_server import Reply
    from tests.mcp.conftest import server_command

    def configure(config) -> None:
        command, *args = server_command("stdio")
        config.mcp_servers = {"local": {"command": command, "args": args}}

    live = live_factory(configure=configure)
    scripted_server.push(Reply(text="ok"))
    with live.client() as http:
        body = {"model": "m", "messages": [{"role": "user", "content": "add 2 and 3 with mcp"}]}
        assert http.post("/v1/chat/completions", json=body).status_code == 200
    offered = [t["function"]["name"] for t in turn_requests(scripted_server)[0].get("tools", [])]
    assert any(name.startswith("mcp_local_") for name in offered), offered
