"""A one-shot ``run`` waits for the configured MCP servers, so its first request can use them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes.background import turn_requests
from tests.fakes.scripted_server import Reply, ToolCallSpec
from tests.mcp.conftest import server_command

pytest.importorskip(
    "mcp.server.mcpserver", reason="needs the official mcp SDK >= 2 (test dependency)"
)

ROOT = Path(__file__).resolve().parents[2]


def test_run_offers_the_servers_tools_from_the_first_request(
    scripted_server, write_config, workspace, tea_home
):
    command = server_command("stdio")
    write_config(
        {
            "main_model": {"api_url": scripted_server.base_url, "model_name": "scripted-model"},
            "agent": {"workspace": str(workspace)},
            "mcp_servers": {"local": {"command": command[0], "args": command[1:]}},
        }
    )
    add = ToolCallSpec("mcp_local_add", {"a": 19, "b": 23})
    scripted_server.push(Reply(tool_calls=[add]), Reply(text="19 + 23 = 42"))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TEA_AGENT_HOME": str(tea_home)}
    result = subprocess.run(
        [sys.executable, "-m", "tea_agent_mini", "run", "--json", "Use the local add tool: 19+23"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "waiting for MCP servers" in result.stderr
    output = json.loads(result.stdout)
    assert output["tool_calls"][0]["ok"] and output["tool_calls"][0]["result"] == "42"
    first = turn_requests(scripted_server)[0]
    assert "mcp_local_add" in [t["function"]["name"] for t in first["tools"]]
