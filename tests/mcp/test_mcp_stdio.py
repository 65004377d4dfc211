"""McpClient over stdio against a real server built with the official MCP SDK."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tea_agent_mini.mcp.client import McpClient
from tea_agent_mini.mcp.errors import McpTimeout, McpTransportError
from tea_agent_mini.mcp.loop import BackgroundLoop
from tea_agent_mini.mcp.stdio import StdioTransport, child_environment

pytest.importorskip(
    "mcp.server.mcpserver", reason="needs the official mcp SDK >= 2 (test dependency)"
)


class Connected:
    """A client connected on a background loop, so one server process serves many tests."""

    def __init__(self, command: list[str], stderr_path: Path | None = None) -> None:
        self.loop = BackgroundLoop("test-mcp")
        self.transport = StdioTransport(command[0], command[1:], stderr_path=stderr_path)
        self.client = McpClient(self.transport, request_timeout=10)
        self.info = self.run(self.client.connect())

    def run(self, coroutine):
        return self.loop.run(coroutine, 30)

    def close(self) -> None:
        self.run(self.client.close())
        self.loop.stop()


@pytest.fixture(scope="module")
def paged(stdio_server, tmp_path_factory):
    """The test server serving tools/list in pages of 3."""
    log = tmp_path_factory.mktemp("mcp_logs") / "server.log"
    connected = Connected([*stdio_server, "--page-size", "3"], stderr_path=log)
    yield connected
    connected.close()


def test_the_handshake_reports_the_server(paged):
    info = paged.info
    assert info.name == "tea-test-server"
    assert info.protocol_version == "2025-06-18"
    assert "tools" in info.capabilities


def test_tools_are_listed_across_pages_with_their_schemas(paged):
    tools = {tool.name: tool for tool in paged.run(paged.client.list_tools())}
    expected = {"add", "echo", "fail", "slow", "crash", "picture", "odd.name-tool", "grow"}
    assert expected <= set(tools)  # 8 tools in pages of 3: nextCursor was followed twice
    schema = tools["add"].input_schema
    assert schema["type"] == "object"
    assert schema["properties"]["a"]["type"] == "integer"
    assert sorted(schema["required"]) == ["a", "b"]
    assert tools["echo"].description == "Echo the text back."


@pytest.mark.parametrize(
    ("name", "arguments", "text"),
    [
        ("add", {"a": 2, "b": 40}, "42"),
        ("echo", {"text": "héllo\nworld"}, "héllo\nworld"),
        ("picture", {}, "a red dot\n[image image/png, 70 bytes]"),
    ],
)
def test_tools_are_called(paged, name, arguments, text):
    result = paged.run(paged.client.call_tool(name, arguments))
    assert not result.is_error
    assert result.text == text


@pytest.mark.parametrize(
    ("name", "arguments", "text"),
    [
        ("fail", {}, "Error executing tool fail"),
        ("no_such_tool", {}, "Unknown tool"),
        ("add", {"a": "x", "b": 1}, "validation error"),
    ],
)
def test_tool_failures_come_back_as_error_results(paged, name, arguments, text):
    result = paged.run(paged.client.call_tool(name, arguments))
    assert result.is_error
    assert text in result.text


def test_a_slow_call_times_out_and_the_connection_stays_usable(paged):
    with pytest.raises(McpTimeout, match="within 0.2s"):
        paged.run(paged.client.call_tool("slow", {"seconds": 5}, timeout=0.2))
    paged.run(paged.client.ping())
    assert paged.run(paged.client.call_tool("add", {"a": 1, "b": 1})).text == "2"


def test_concurrent_calls_get_their_own_answers(paged):
    async def many():
        calls = [paged.client.call_tool("add", {"a": i, "b": 1000}) for i in range(20)]
        return [result.text for result in await asyncio.gather(*calls)]

    assert paged.run(many()) == [str(i + 1000) for i in range(20)]


def test_a_tool_list_change_refreshes_the_tools(paged):
    changed = threading.Event()
    paged.client.on_tools_changed = lambda tools: changed.set()
    try:
        paged.run(paged.client.call_tool("grow", {"name": "grown_stdio"}))
        assert changed.wait(10)
    finally:
        paged.client.on_tools_changed = None
    assert "grown_stdio" in {tool.name for tool in paged.client.tools}
    assert paged.run(paged.client.call_tool("grown_stdio", {})).text == "I am grown_stdio"


def test_stderr_is_drained_to_the_log(paged):
    assert "test server starting (stdio)" in paged.transport.stderr_path.read_text()


def test_a_crash_fails_the_pending_call_with_the_exit_code_and_last_words(stdio_server):
    connected = Connected(stdio_server)
    closed = []
    connected.client.on_close = closed.append
    try:
        with pytest.raises(McpTransportError, match="exited with code 3") as info:
            connected.run(connected.client.call_tool("crash", {}))
        assert "crashing on purpose" in str(info.value)
        assert connected.client.closed and len(closed) == 1
        with pytest.raises(McpTransportError):
            connected.run(connected.client.ping())
    finally:
        connected.close()


def test_a_missing_command_is_reported():
    async def scenario():
        client = McpClient(StdioTransport("no-such-mcp-server-command-xyz"))
        await client.connect()

    with pytest.raises(McpTransportError, match="cannot start"):
        asyncio.run(scenario())


def test_a_server_that_exits_at_once_fails_the_handshake():
    async def scenario():
        command = [sys.executable, "-c", "import sys; print('bad config', file=sys.stderr)"]
        client = McpClient(StdioTransport(command[0], command[1:]), request_timeout=10)
        await client.connect()

    with pytest.raises(McpTransportError, match="exited with code 0.*bad config"):
        asyncio.run(scenario())


# closes its input first, then exits: a write in between fails with a broken pipe
QUITTER = (
    "import os, sys, time; os.close(0); print('bad config', file=sys.stderr, flush=True); "
    "time.sleep({delay}); sys.exit(3)"
)


class LateWriter(StdioTransport):
    """Writes only after ``before_write``: a loaded machine, where the server acts first."""

    def __init__(self, delay: float, before_write) -> None:
        super().__init__(sys.executable, ["-c", QUITTER.format(delay=delay)])
        self.before_write = before_write

    async def send(self, message) -> None:
        await self.before_write(self)
        await super().send(message)


async def has_exited(transport: StdioTransport) -> None:
    await transport._process.wait()


async def has_closed_its_input(transport: StdioTransport) -> None:
    deadline = time.monotonic() + 30
    while "bad config" not in transport.stderr_tail:
        assert time.monotonic() < deadline, "the server never said it closed its input"
        await asyncio.sleep(0.01)


@pytest.mark.parametrize("before_write", [has_exited, has_closed_its_input])
def test_the_exit_is_reported_whichever_the_client_notices_first(before_write):
    async def scenario():
        await McpClient(LateWriter(0.3, before_write), request_timeout=10).connect()

    with pytest.raises(McpTransportError, match="exited with code 3.*bad config"):
        asyncio.run(scenario())


def test_a_server_that_stops_reading_but_runs_on_is_reported_as_such(monkeypatch):
    monkeypatch.setattr("tea_agent_mini.mcp.stdio.EXIT_WAIT", 0.2)

    async def scenario():
        transport = LateWriter(60, has_closed_its_input)
        await McpClient(transport, request_timeout=10).connect()

    with pytest.raises(McpTransportError, match="stopped reading its input.*bad config"):
        asyncio.run(scenario())


def test_the_child_gets_only_whitelisted_variables_plus_its_own(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("PATH", "/usr/bin")
    environment = child_environment({"SERVER_TOKEN": "t"})
    assert "OPENAI_API_KEY" not in environment
    assert environment["PATH"] == "/usr/bin" and environment["SERVER_TOKEN"] == "t"


STUBBORN = """
import signal, subprocess, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)  # inherited by the grandchild too
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
print("grandchild", child.pid, file=sys.stderr, flush=True)
time.sleep(60)
"""


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"  # a zombie has stopped running


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_close_stops_a_stubborn_server_and_everything_it_started():
    async def scenario():
        transport = StdioTransport(sys.executable, ["-c", STUBBORN], close_grace=0.2)
        crashes = []
        await transport.start(lambda message: None, crashes.append)
        for _ in range(200):
            if any(line.startswith("grandchild") for line in transport.stderr_tail):
                break
            await asyncio.sleep(0.025)
        grandchild = int(transport.stderr_tail[-1].split()[1])
        parent = transport.pid
        assert _running(parent) and _running(grandchild)
        await transport.close()  # stdin closed, SIGTERM ignored: SIGKILL to the whole group
        return parent, grandchild, crashes

    parent, grandchild, crashes = asyncio.run(scenario())
    # SIGKILL is delivered asynchronously: give the kernel a moment to finish both processes
    deadline = time.monotonic() + 3
    while (_running(parent) or _running(grandchild)) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _running(parent)
    assert not _running(grandchild)
    assert crashes == []  # closing on purpose is not reported as a crash


# an agent that started an MCP server (one that never reads its input) and waits
AGENT = """
import asyncio, sys
from tea_agent_mini.mcp.stdio import StdioTransport

async def main():
    transport = StdioTransport(sys.executable, ["-c", "import time; time.sleep(300)"])
    await transport.start(lambda message: None, lambda error: None)
    print(transport.pid, flush=True)
    await asyncio.sleep(300)

asyncio.run(main())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux-only")
def test_a_killed_agent_leaves_no_server_behind():
    agent = subprocess.Popen([sys.executable, "-c", AGENT], stdout=subprocess.PIPE, text=True)
    try:
        server = int(agent.stdout.readline())
    finally:
        agent.kill()
        agent.wait()
        agent.stdout.close()
    # generous: the kernel kills it at once, but the machine may be loaded
    deadline = time.monotonic() + 30
    try:
        while _running(server):
            assert time.monotonic() < deadline, "the MCP server outlived the agent"
            time.sleep(0.05)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(server, signal.SIGKILL)
