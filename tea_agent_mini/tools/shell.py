"""toolkit_exec: run a shell command in the workspace, with an activity-aware timeout.

The command passes the deny-list, runs in the sandbox the context names, and is supervised by
``shell.runner.run_command`` (see ``tea_agent_mini/shell/``).
"""

from __future__ import annotations

from tea_agent_mini.errors import ToolError
from tea_agent_mini.shell import orphans
from tea_agent_mini.shell.denylist import check_command
from tea_agent_mini.shell.runner import format_result, run_command
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import tool

MAX_TIMEOUT = 3600.0


@tool("toolkit_exec", mutates=True)
def toolkit_exec(
    ctx: ToolContext, command: str, timeout: float | None = None, cwd: str | None = None
) -> str:
    """Run a shell command (/bin/sh -c) in the workspace and return its combined
    stdout/stderr, exit code and duration. The timeout is activity-aware: a command is killed
    after `timeout` seconds only if it is idle (no CPU or I/O); one that keeps working may run
    up to 4x longer. stdin is closed, so interactive prompts fail instead of hanging: pass
    flags like -y. Background processes are stopped when the command ends. Long output keeps
    its beginning and end. A best-effort deny-list (not a sandbox) refuses destructive
    commands (rm -rf /, mkfs, dd to disks, piping downloads into sh ...). With agent.sandbox
    the command runs under bubblewrap: only the workspace and a private $TMPDIR are writable.

    Args:
        command: shell command line (run by /bin/sh -c)
        timeout: seconds without CPU or I/O activity before the command is killed (default
            30); a command that keeps working may run up to 4x this long
        cwd: working directory, relative to the workspace (default: the workspace)
    """
    if not command.strip():
        raise ToolError("empty command")
    check_command(command)
    limit = ctx.exec_timeout if timeout is None else float(timeout)
    if not 0 < limit <= MAX_TIMEOUT:
        raise ToolError(f"timeout must be between 0 and {MAX_TIMEOUT:g} seconds")
    directory = ctx.resolve(cwd or ".", must_exist=True)
    if not directory.is_dir():
        raise ToolError(f"cwd '{cwd}' is not a directory")
    jobs = orphans.JobTable.at(ctx.home)
    prefix = ctx.sandbox.prefix(ctx.workspace, directory)
    result = run_command(
        command, directory, limit, cancel=ctx.cancel_event, jobs=jobs, prefix=prefix
    )
    return format_result(result)
