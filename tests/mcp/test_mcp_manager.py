"""McpManager: servers from config, their tools in a Toolkit, run by the ToolExecutor."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time

import pytest

from tea_agent_mini.config import load_config
from tea_agent_mini.errors import ToolError
from tea_agent_mini.mcp.errors import McpError
from tea_agent_mini.mcp.manager import McpManager
from tea_agent_mini.runtime import Runtime
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.executor import ToolExecutor
from tea_agent_mini.toolkit.registry import Toolkit
from tea_agent_mini.tools.mcp import toolkit_mcp
from tea_agent_mini.types import ToolCall

pytest.importorskip(
    "mcp.server.mcpserver", reason="needs the official mcp SDK >= 2 (test dependency)"
)


def write_servers(home, servers: dict) -> None:
    (home / "mcp_servers.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")


def stdio_entry(command: list[str], **extra) -> dict:
    return {"command": command[0], "args": command[1:], **extra}


def run_tool(executor: ToolExecutor, name: str, /, **arguments):
    return asyncio.run(executor.run(ToolCall("c1", name, json.dumps(arguments))))


@pytest.fixture(scope="module")
def setup(tmp_path_factory, stdio_server, http_servers):
    """A manager with the stdio server ("local") and the HTTP server ("remote") from the file.

    Shared by the tests of this module; the ones that crash or restart a server leave it ready.
    """
    tmp_path = tmp_path_factory.mktemp("mcp_home")
    write_servers(
        tmp_path,
        {
            "local": stdio_entry(stdio_server, timeout=0.5),
            "remote": {"url": http_servers["sse"].url},
        },
    )
    manager = McpManager({}, tmp_path, backoff=0.05)
    toolkit = Toolkit.load([])
    manager.register_into(toolkit)
    context = ToolContext(workspace=tmp_path, home=tmp_path, mcp=manager)
    yield manager, toolkit, ToolExecutor(toolkit, context)
    manager.close()


def test_tools_of_both_servers_are_registered_with_their_schemas(setup):
    manager, toolkit, _ = setup
    names = set(toolkit.names())
    for server in ("local", "remote"):
        assert {f"mcp_{server}_add", f"mcp_{server}_echo", f"mcp_{server}_odd_name_tool"} <= names
    spec = toolkit.get("mcp_remote_add")
    assert spec.parameters["properties"]["a"]["type"] == "integer"
    assert spec.openai_schema()["function"]["name"] == "mcp_remote_add"
    assert [s.state for s in manager.status()] == ["ready", "ready"]


@pytest.mark.parametrize("server", ["local", "remote"])
def test_tools_run_through_the_executor(setup, server):
    _, _, executor = setup
    result = run_tool(executor, f"mcp_{server}_add", a=19, b=23)
    assert (result.ok, result.output) == (True, "42")
    assert run_tool(executor, f"mcp_{server}_odd_name_tool").output == "odd"


@pytest.mark.parametrize("server", ["local", "remote"])
def test_an_error_result_is_a_failed_tool_result(setup, server):
    _, _, executor = setup
    result = run_tool(executor, f"mcp_{server}_fail")
    assert not result.ok
    assert f"on server '{server}' failed" in result.error
    assert "Error executing tool fail" in result.error


def test_arguments_are_checked_against_the_server_schema_before_the_call(setup):
    _, _, executor = setup
    result = run_tool(executor, "mcp_local_add", a=1)
    assert not result.ok and "missing required parameter(s) 'b'" in result.error


def test_the_configured_timeout_applies(setup):
    manager, _, executor = setup
    assert run_tool(executor, "mcp_local_slow", seconds=0.01).ok
    result = run_tool(executor, "mcp_local_slow", seconds=3)
    assert not result.ok and "no response" in result.error and "within 0.5s" in result.error
    assert manager.server_status("local").state == "ready"  # a timeout is not a crash
    with pytest.raises(McpError, match="within 0.2s"):
        manager.call_tool("remote", "slow", {"seconds": 3}, timeout=0.2)


def test_a_crashed_server_is_started_again_on_the_next_call(setup):
    manager, _, executor = setup
    first_pid = manager.server_status("local").pid
    crashed = run_tool(executor, "mcp_local_crash")
    assert not crashed.ok
    assert "exited with code 3" in crashed.error and "started again" in crashed.error
    status = manager.server_status("local")
    assert status.state == "failed" and status.failures == 1
    result = run_tool(executor, "mcp_local_add", a=1, b=2)
    assert (result.ok, result.output) == (True, "3")
    status = manager.server_status("local")
    assert status.state == "ready" and status.failures == 0
    assert status.pid not in (None, first_pid)


def test_toolkit_mcp_lists_servers_states_and_tools(setup):
    manager = setup[0]
    context = ToolContext(workspace=manager.home, home=manager.home, mcp=manager)
    listing = toolkit_mcp(context, action="list")
    assert "MCP servers (2):" in listing
    assert "- local [ready] stdio:" in listing and "- remote [ready] http:" in listing
    assert "mcp_remote_echo" in listing
    status = toolkit_mcp(context, action="status", server="remote")
    assert "state: ready" in status and "protocol: 2025-06-18" in status
    assert "reports itself as: tea-test-server" in status


def test_toolkit_mcp_runs_through_the_executor_and_restarts(setup):
    manager, toolkit, executor = setup
    toolkit.register(toolkit_mcp.tool_spec)
    pid = manager.server_status("local").pid
    result = run_tool(executor, "toolkit_mcp", action="restart", server="local")
    assert result.ok and result.output.startswith("Restarted.")
    assert manager.server_status("local").pid not in (None, pid)
    missing = run_tool(executor, "toolkit_mcp", action="restart")
    assert not missing.ok and "restart needs server" in missing.error
    unknown = run_tool(executor, "toolkit_mcp", action="status", server="nope")
    assert not unknown.ok and "no MCP server named 'nope'" in unknown.error


def test_toolkit_mcp_reaches_the_servers_of_a_real_runtime(write_config, workspace, stdio_server):
    """The path production takes: config -> Runtime -> its toolkit and tool context -> the
    executor -> toolkit_mcp and the servers' own tools."""
    write_config(
        {
            "agent": {"workspace": str(workspace)},
            "mcp_servers": {"local": stdio_entry(stdio_server)},
        }
    )
    runtime = Runtime(load_config())
    try:
        executor = ToolExecutor(runtime.toolkit, runtime.tool_context(None))
        assert runtime.mcp is not None and executor.context.mcp is runtime.mcp
        [status] = runtime.mcp.wait_ready(timeout=30)
        assert status.state == "ready", status
        listing = run_tool(executor, "toolkit_mcp", action="list")
        assert listing.ok and "- local [ready] stdio:" in listing.output, listing
        assert (run_tool(executor, "mcp_local_add", a=2, b=3).output) == "5"
    finally:
        asyncio.run(runtime.aclose())


def test_toolkit_mcp_without_servers_says_how_to_add_them(write_config, workspace):
    write_config({"agent": {"workspace": str(workspace)}})
    runtime = Runtime(load_config())
    try:
        context = runtime.tool_context(None)
        assert runtime.mcp is None and context.mcp is None
        with pytest.raises(ToolError, match="MCP is not set up in this session"):
            toolkit_mcp(context, action="list")
    finally:
        asyncio.run(runtime.aclose())


def test_close_stops_servers_and_removes_their_tools(tmp_path, stdio_server):
    write_servers(tmp_path, {"local": stdio_entry(stdio_server)})
    manager = McpManager(None, tmp_path)
    toolkit = Toolkit()
    manager.register_into(toolkit)
    pid = manager.server_status("local").pid
    assert toolkit.get("mcp_local_echo") is not None
    manager.close()
    assert toolkit.names() == []
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    with pytest.raises(McpError, match="closed"):
        manager.call_tool("local", "echo", {"text": "x"})


def test_a_server_that_keeps_failing_is_given_up_until_restarted(tmp_path):
    broken = [sys.executable, "-c", "import sys; sys.exit('no config for this server')"]
    config = {"broken": stdio_entry(broken)}
    manager = McpManager(config, tmp_path, max_restarts=2, backoff=0.01)
    try:
        statuses = manager.start()
        assert statuses[0].state == "failed" and "no config for this server" in statuses[0].error
        for _ in range(2):  # the restarts allowed, each failing again
            with pytest.raises(McpError, match="could not start"):
                manager.call_tool("broken", "anything", {})
        with pytest.raises(McpError, match="failed 3 times in a row"):
            manager.call_tool("broken", "anything", {})
        with pytest.raises(McpError, match="could not start"):
            manager.restart("broken")  # an explicit restart tries again
        assert manager.server_status("broken").failures == 1
    finally:
        manager.close()


def test_bad_config_entries_show_up_as_failed_servers(tmp_path):
    (tmp_path / "mcp_servers.json").write_text("{broken", encoding="utf-8")
    manager = McpManager(
        {"nocmd": {"args": ["x"]}, "off": {"command": "x", "disabled": True}}, tmp_path
    )
    try:
        manager.start()
        states = {s.name: (s.state, s.error) for s in manager.status()}
        assert states["nocmd"][0] == "failed" and "needs a command" in states["nocmd"][1]
        assert states["off"] == ("stopped", "")
        context = ToolContext(workspace=tmp_path, home=tmp_path, mcp=manager)
        listing = toolkit_mcp(context, action="list")
        assert "config problem:" in listing and "invalid JSON" in listing
        with pytest.raises(McpError, match="disabled in the configuration"):
            manager.call_tool("off", "x", {})
        with pytest.raises(McpError, match="cannot be used: .*needs a command"):
            manager.restart("nocmd")
    finally:
        manager.close()


def test_toolkit_mcp_without_a_manager_says_how_to_configure(tmp_path):
    context = ToolContext(workspace=tmp_path, home=tmp_path)
    with pytest.raises(ToolError, match="mcp_servers.json"):
        toolkit_mcp(context, action="list")


def test_a_tool_list_change_reaches_the_toolkits(setup):
    manager, toolkit, executor = setup
    other = Toolkit()
    manager.register_into(other, wait=False)  # a second toolkit, servers already running
    assert run_tool(executor, "mcp_remote_grow", name="fresh").output == "added fresh"
    for _ in range(200):
        if toolkit.get("mcp_remote_fresh") and other.get("mcp_remote_fresh"):
            break
        time.sleep(0.05)
    assert run_tool(executor, "mcp_remote_fresh").output == "I am fresh"
    assert other.get("mcp_remote_fresh") is toolkit.get("mcp_remote_fresh")
    assert other.get("mcp_local_echo") is toolkit.get("mcp_local_echo")
