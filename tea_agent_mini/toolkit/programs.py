"""External programs (git, ruff, black, pytest, make ...): find them and run them.

A program counts as installed when it is on PATH at call time. Runs go through
``shell.run_command``, so they get the activity-aware timeout, output bounds and cancellation of
the turn, like toolkit_exec.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.shell import OUTPUT_LIMIT, CommandResult, run_command

DEFAULT_TIMEOUT = 120.0


def find_program(name: str) -> str | None:
    """Full path of ``name`` on the current PATH, or None."""
    return shutil.which(name)


def require_program(name: str, purpose: str) -> str:
    """Full path of ``name``; raises ToolError saying it is missing and what needed it."""
    found = find_program(name)
    if found is None:
        raise ToolError(f"{name} is not installed (not found on PATH); it is needed to {purpose}")
    return found


def command_line(argv: Sequence[str]) -> str:
    """``argv`` quoted for the shell that ``run_command`` uses on this platform."""
    if os.name == "posix":
        return shlex.join(argv)
    return subprocess.list2cmdline(list(argv))


def run_program(
    ctx: ToolContext,
    argv: Sequence[str],
    *,
    cwd: Path | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    output_limit: int = OUTPUT_LIMIT,
) -> CommandResult:
    """Run ``argv`` (no shell expansion) in ``cwd`` (default: the workspace)."""
    directory = cwd if cwd is not None else ctx.resolve(".")
    return run_command(
        command_line(argv), directory, timeout, output_limit, cancel=ctx.cancel_event
    )


def tail(text: str, limit: int = 4000) -> str:
    """The last ``limit`` characters of ``text``, cut at a line start, marked when cut."""
    if len(text) <= limit:
        return text
    cut = text[-limit:]
    newline = cut.find("\n")
    if 0 <= newline < limit // 2:
        cut = cut[newline + 1 :]
    return f"[... {len(text) - len(cut):,} earlier characters omitted ...]\n{cut}"
