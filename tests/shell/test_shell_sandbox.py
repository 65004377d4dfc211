"""agent.sandbox: commands under bubblewrap. The confinement tests run where bwrap works and
are skipped elsewhere; the fallbacks (auto without bwrap, required without bwrap) run always."""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
import threading
import uuid
from pathlib import Path

import pytest

from tea_agent_mini.cli.doctor import check_sandbox
from tea_agent_mini.config import Config
from tea_agent_mini.errors import ToolError
from tea_agent_mini.shell import proctree
from tea_agent_mini.shell.sandbox import Sandbox, bwrap_problem, probe_bwrap, sandbox_for
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.tools.shell import toolkit_exec

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX only")


def _bwrap_problem() -> str | None:
    return bwrap_problem(True) or bwrap_problem(False)


needs_bwrap = pytest.mark.skipif(
    os.name != "posix" or _bwrap_problem() is not None,
    reason=f"bubblewrap cannot sandbox here: {_bwrap_problem() if os.name == 'posix' else ''}",
)


@pytest.fixture
def ctx(workspace: Path, tea_home: Path) -> ToolContext:
    box = Sandbox("required", network=True, tmp=tea_home / "tmp" / "sandbox")
    return ToolContext(workspace=workspace, home=tea_home, sandbox=box)


@pytest.fixture
def outside() -> Path:
    """A folder outside the workspace and the sandbox's TMPDIR, so that a sandboxed command
    sees it and must find it read-only."""
    try:
        folder = Path(tempfile.mkdtemp(prefix=".tea-sandbox-test-", dir=Path.home()))
    except OSError as exc:
        pytest.skip(f"no writable folder in the home directory: {exc}")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def no_bwrap(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    probe_bwrap.cache_clear()
    yield
    probe_bwrap.cache_clear()


def exit_code(output: str) -> int:
    return int(output.rsplit("exit code: ", 1)[1].split()[0])


@needs_bwrap
def test_the_workspace_is_writable_and_the_rest_is_read_only(ctx, workspace, outside):
    out = toolkit_exec(ctx, f"touch made.txt && echo in-ok; touch {outside}/escaped.txt")
    assert out.startswith("in-ok\n") and "Read-only file system" in out
    assert (workspace / "made.txt").exists()
    assert not (outside / "escaped.txt").exists()


@needs_bwrap
def test_tmpdir_is_private_and_kept_and_tmp_is_visible_but_read_only(ctx, tea_home):
    name = f"tea-sandbox-{uuid.uuid4().hex}"
    toolkit_exec(ctx, f'echo kept > "$TMPDIR/{name}"')
    assert (tea_home / "tmp" / "sandbox" / name).read_text() == "kept\n"
    assert toolkit_exec(ctx, f'cat "$TMPDIR/{name}"').startswith("kept\n")
    refused = toolkit_exec(ctx, f"echo x > /tmp/{name}")
    assert "Read-only file system" in refused and not Path("/tmp", name).exists()
    # interpreters and virtualenvs often live under /tmp: the sandbox must still see them
    with tempfile.NamedTemporaryFile("w", dir="/tmp", suffix=".txt") as host_file:
        host_file.write("from the host\n")
        host_file.flush()
        assert toolkit_exec(ctx, f"cat {host_file.name}").startswith("from the host\n")


@needs_bwrap
@pytest.mark.parametrize("network", [True, False])
def test_the_network_can_be_switched_off(ctx, network):
    ctx.sandbox = Sandbox("required", network=network, tmp=ctx.sandbox.tmp)
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        probe = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=5)"
        out = toolkit_exec(ctx, f'{sys.executable} -c "{probe}"')
    assert (exit_code(out) == 0) is network, out
    assert "not found" not in out  # the interpreter ran; only the connection may fail
    assert ("Error" in out) is not network, out


@needs_bwrap
@pytest.mark.skipif(not proctree.has_proc(), reason="activity sampling needs /proc")
def test_timeouts_and_the_group_kill_work_inside(ctx, workspace):
    out = toolkit_exec(ctx, "sleep 30 & echo $! > bg.pid; sleep 30", timeout=1)
    assert "killed: idle timeout" in out and "signal SIGTERM" in out
    background = int((workspace / "bg.pid").read_text())
    stat = proctree.read_stat(background)
    assert stat is None or stat.state == "Z"


@needs_bwrap
def test_a_cancelled_turn_kills_the_sandboxed_command(ctx):
    threading.Timer(0.5, ctx.cancel_event.set).start()
    out = toolkit_exec(ctx, "sleep 30", timeout=60)
    assert "killed: the turn was cancelled" in out


@needs_bwrap
def test_output_and_exit_codes_come_through(ctx):
    out = toolkit_exec(ctx, "echo out; echo err >&2; exit 7")
    assert out.startswith("out\nerr\n---\n") and exit_code(out) == 7


def test_required_refuses_and_auto_runs_unconfined_without_bwrap(ctx, no_bwrap, workspace):
    assert "bwrap is not installed" in (bwrap_problem() or "")
    with pytest.raises(ToolError, match="agent.sandbox is 'required'.*was not run"):
        toolkit_exec(ctx, "touch never.txt")
    assert not (workspace / "never.txt").exists()
    ctx.sandbox = Sandbox("auto")
    assert toolkit_exec(ctx, "echo ran").startswith("ran\n")
    confined, detail = ctx.sandbox.status()
    assert not confined and "commands run unconfined" in detail


def test_doctor_says_whether_commands_are_confined(tea_home, no_bwrap):
    config = Config(home=tea_home)
    auto = check_sandbox(config)
    assert not auto.ok and not auto.required
    assert auto.line().startswith("[--  ] sandbox: agent.sandbox: auto, but bwrap is not installed")
    config.agent.sandbox = "required"
    assert check_sandbox(config).line().startswith("[FAIL] sandbox: agent.sandbox: required")


@needs_bwrap
def test_doctor_reports_a_working_sandbox(tea_home):
    check = check_sandbox(Config(home=tea_home))
    assert check.ok and "commands run under bubblewrap" in check.detail


def test_off_adds_nothing_and_says_so(workspace):
    box = Sandbox("off")
    assert box.prefix(workspace, workspace) == []
    assert box.status() == (False, "agent.sandbox: off; commands run unconfined (deny-list only)")


def test_the_runtime_sandbox_comes_from_the_config(tea_home):
    config = Config(home=tea_home)
    config.agent.sandbox, config.agent.sandbox_network = "required", False
    box = sandbox_for(config)
    assert box == Sandbox("required", False, tea_home / "tmp" / "sandbox")


@needs_bwrap
def test_a_workspace_under_tmp_is_mounted_after_an_empty_tmp(tea_home):
    workspace = Path("/tmp/tea-example/workspace")  # a mount hides what an earlier one put there
    argv = Sandbox("required", tmp=None).prefix(workspace, workspace)
    assert argv.index("/tmp") < argv.index(str(workspace))
    kept = Sandbox("required", tmp=tea_home / "t").prefix(workspace, workspace)
    assert "--tmpfs" not in kept and argv[argv.index("TMPDIR") + 1] == "/tmp"
    assert argv[argv.index("--chdir") + 1] == str(workspace) and argv[-1] == "--"
