"""Reading the MCP server list from mcp_servers.json and config.yaml."""

from __future__ import annotations

import json

import pytest

from tea_agent_mini.config import config_from_dict
from tea_agent_mini.errors import ConfigError
from tea_agent_mini.mcp.servers import ServerConfig, load_servers, parse_server


def write_servers(home, data) -> None:
    (home / "mcp_servers.json").write_text(json.dumps(data), encoding="utf-8")


def test_servers_come_from_the_json_file_in_the_usual_shape(tmp_path):
    write_servers(
        tmp_path,
        {
            "mcpServers": {
                "files": {
                    "command": "npx",
                    "args": ["-y", "server-files", 3],
                    "env": {"DEBUG": 1},
                    "cwd": "/srv",
                    "autoApprove": ["read"],
                },
                "remote": {"url": "https://example.com/mcp", "headers": {"X-Key": "k"}},
            }
        },
    )
    found = load_servers(None, tmp_path, env={})
    assert found.errors == {} and found.file_errors == []
    files, remote = found.servers["files"], found.servers["remote"]
    assert files == ServerConfig(
        name="files",
        command="npx",
        args=("-y", "server-files", "3"),
        env={"DEBUG": "1"},
        cwd="/srv",
        source=str(tmp_path / "mcp_servers.json"),
    )
    assert files.transport == "stdio" and files.target == "npx -y server-files 3"
    assert remote.transport == "http" and remote.url == "https://example.com/mcp"
    assert remote.headers == {"X-Key": "k"}


def test_config_yaml_entries_are_added_and_win_on_the_same_name(tmp_path):
    write_servers(tmp_path, {"mcpServers": {"a": {"command": "one"}, "b": {"command": "two"}}})
    config = config_from_dict(
        {"mcp_servers": {"b": {"command": "three"}, "c": {"url": "http://x"}}}
    )
    found = load_servers(config.mcp_servers, tmp_path, env={})
    assert {name: s.target for name, s in found.servers.items()} == {
        "a": "one",
        "b": "three",
        "c": "http://x",
    }


def test_the_mcpServers_wrapper_is_also_accepted_in_config_yaml(tmp_path):
    found = load_servers({"mcpServers": {"a": {"command": "x"}}}, tmp_path, env={})
    assert list(found.servers) == ["a"]


def test_variables_are_expanded_from_the_environment(tmp_path):
    raw = {
        "url": "https://${HOST}/mcp",
        "headers": {"Authorization": "Bearer ${TOKEN}"},
    }
    server = parse_server("r", raw, "test", {"HOST": "example.org", "TOKEN": "t0k"})
    assert server.url == "https://example.org/mcp"
    assert server.headers == {"Authorization": "Bearer t0k"}
    stdio = parse_server("s", {"command": "x", "args": ["${A}"], "env": {"B": "${A}"}}, "t", {})
    assert stdio.args == ("",) and stdio.env == {"B": ""}


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("npx", "expected a mapping"),
        ({}, "needs a command"),
        ({"command": 5}, "command must be a string"),
        ({"command": "x", "args": "a b"}, "args must be a list"),
        ({"command": "x", "env": ["A=1"]}, "env must be a mapping"),
        ({"url": "ftp://x"}, "must start with http"),
        ({"type": "sse", "url": "http://x/sse"}, r"HTTP\+SSE transport is not supported"),
        ({"type": "websocket", "url": "ws://x"}, "unknown type"),
        ({"command": "x", "timeout": -1}, "timeout must be a positive number"),
    ],
)
def test_bad_entries_are_reported_with_what_is_wrong(raw, message):
    with pytest.raises(ConfigError, match=message) as info:
        parse_server("bad", raw, "mcp_servers.json", {})
    assert "mcp_servers.json: server 'bad'" in str(info.value)


def test_a_bad_entry_does_not_hide_the_good_ones(tmp_path):
    write_servers(tmp_path, {"mcpServers": {"good": {"command": "x"}, "bad": {"args": []}}})
    found = load_servers(None, tmp_path, env={})
    assert list(found.servers) == ["good"]
    assert "needs a command" in found.errors["bad"]


def test_an_unreadable_file_is_reported_and_config_yaml_still_counts(tmp_path):
    (tmp_path / "mcp_servers.json").write_text("{not json", encoding="utf-8")
    found = load_servers({"a": {"command": "x"}}, tmp_path, env={})
    assert list(found.servers) == ["a"]
    assert len(found.file_errors) == 1 and "invalid JSON" in found.file_errors[0]


@pytest.mark.parametrize(
    ("raw", "enabled", "timeout"),
    [
        ({"command": "x"}, True, None),
        ({"command": "x", "disabled": True}, False, None),
        ({"command": "x", "enabled": False}, False, None),
        ({"command": "x", "timeout": 5}, True, 5.0),
        ({"command": "x", "timeout": 60000}, True, 60.0),  # milliseconds, as some clients write
    ],
)
def test_enabled_and_timeout(raw, enabled, timeout):
    server = parse_server("s", raw, "t", {})
    assert (server.enabled, server.timeout) == (enabled, timeout)


def test_url_and_type_http_make_an_http_server_even_with_a_command():
    server = parse_server("s", {"type": "http", "url": "http://h/mcp", "command": "x"}, "t", {})
    assert server.transport == "http" and server.command == ""
