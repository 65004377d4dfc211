"""``tools`` and ``doctor`` see what the runtime has: bundled tools, the user's own and the MCP
servers' (started, waited for, failures reported); doctor's warnings are doctor lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_cli import cli

GREET = "def greet(ctx, who):\n    return 'hello ' + who\n"
GREET_META = {
    "name": "greet",
    "description": "Greet someone.",
    "parameters": {
        "type": "object",
        "properties": {"who": {"type": "string"}},
        "required": ["who"],
    },
    "version": 1,
}


def write_user_tool(home: Path) -> None:
    folder = home / "tools"
    folder.mkdir()
    (folder / "greet.py").write_text(GREET, encoding="utf-8")
    (folder / "greet.json").write_text(json.dumps(GREET_META), encoding="utf-8")


def test_tools_lists_the_users_own_tools(tea_home: Path):
    write_user_tool(tea_home)
    listed = cli("tools", "--json")
    assert listed.returncode == 0, listed.stderr
    tools = {t["name"]: t for t in json.loads(listed.stdout)}
    assert tools["greet"]["source"] == "user" and tools["greet"]["description"] == "Greet someone."
    assert tools["toolkit_file"]["source"] == "bundled"
    assert any(line.split()[:2] == ["*", "greet"] for line in cli("tools").stdout.splitlines())


def mcp_config(write_config) -> None:
    pytest.importorskip("mcp.server.mcpserver", reason="needs the official mcp SDK >= 2")
    from tests.mcp.conftest import server_command

    command = server_command("stdio")
    write_config(
        {
            "mcp_servers": {
                "local": {"command": command[0], "args": command[1:]},
                "broken": {"command": "/nonexistent/mcp-server"},
                "off": {"command": command[0], "enabled": False},
            }
        }
    )


def test_tools_waits_for_the_mcp_servers_and_lists_their_tools(write_config):
    mcp_config(write_config)
    result = cli("tools", "--json", timeout=120)
    assert result.returncode == 0, result.stderr
    tools = {t["name"]: t for t in json.loads(result.stdout)}
    assert tools["mcp_local_add"]["source"] == "mcp:local"
    assert "waiting for MCP servers to start..." in result.stderr
    assert "MCP server broken: failed" in result.stderr


def test_doctor_starts_each_mcp_server_and_lists_its_tools(write_config):
    mcp_config(write_config)
    result = cli("doctor", timeout=120)
    lines = {line.split(":")[0]: line for line in result.stdout.splitlines()}
    assert lines["[ok  ] mcp local"].startswith("[ok  ] mcp local: stdio ")
    assert "mcp_local_add" in lines["[ok  ] mcp local"]
    assert "/nonexistent/mcp-server" in lines["[FAIL] mcp broken"]
    assert lines["[--  ] mcp off"] == "[--  ] mcp off: disabled in the configuration"
    assert result.returncode == 1  # no model, and a server that fails


def test_doctor_shows_warnings_as_its_own_lines(tea_home: Path):
    (tea_home / "tools").mkdir()
    (tea_home / "tools" / "broken.py").write_text("def oops(:\n", encoding="utf-8")
    result = cli("doctor")
    warnings = [line for line in result.stdout.splitlines() if line.startswith("[warn]")]
    assert len(warnings) == 1 and "user tool broken failed to load" in warnings[0]
    assert "WARNING" not in result.stderr, result.stderr


def test_developer_checks_only_with_dev(tea_home: Path):
    def names(*args: str) -> set[str]:
        lines = cli("doctor", *args).stdout.splitlines()
        return {line[7:].split(":")[0] for line in lines}

    users, developers = names(), names("--dev")
    assert {"git", "ruff"} <= users and not {"chromium", "pdftotext"} & users
    assert {"chromium", "pdftotext"} <= developers
