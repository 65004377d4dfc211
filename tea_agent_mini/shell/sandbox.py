"""Shell commands confined with bubblewrap (``agent.sandbox: auto | off | required``).

Inside the sandbox the whole filesystem is read-only except the workspace and a private temporary
folder (``TMPDIR``: ``<home>/tmp/sandbox``, kept between commands); ``/tmp`` stays visible but
read-only, since interpreters and virtualenvs often live there; ``/dev`` is a fresh one without
disks; capabilities are dropped, so even root cannot remount anything; the network is there unless
``agent.sandbox_network`` is false. Files stay readable: this keeps commands from changing
anything outside the workspace, not from reading it. The command stays in the caller's process
group, so the activity-aware timeout, cancel and the process-group kill work as without it.

``auto`` confines commands where bwrap works and runs them unconfined elsewhere (``doctor``
says which); ``required`` refuses to run a command it cannot confine.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tea_agent_mini.errors import ToolError

if TYPE_CHECKING:
    from tea_agent_mini.config import Config

log = logging.getLogger(__name__)

PROBE_TIMEOUT = 10.0
INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: apt install bubblewrap)"


@dataclass(frozen=True)
class Sandbox:
    """How commands are confined. The default, ``off``, is what a bare ToolContext gets; the
    runtime builds one from ``agent.sandbox`` (default ``auto``)."""

    mode: str = "off"
    network: bool = True
    tmp: Path | None = None  # the writable TMPDIR; None: an empty tmpfs over /tmp per command

    def prefix(self, workspace: Path, cwd: Path) -> list[str]:
        """The argv to put before ``/bin/sh -c``: empty when the command runs unconfined.

        Raises ToolError when the mode is ``required`` and bwrap cannot be used here.
        """
        if self.mode == "off":
            return []
        problem = bwrap_problem(self.network)
        if problem is None:
            return self._bwrap_argv(workspace, cwd)
        if self.mode == "required":
            raise ToolError(
                f"agent.sandbox is 'required' but commands cannot be sandboxed here: {problem}; "
                "the command was not run"
            )
        return []

    def status(self) -> tuple[bool, str]:
        """(confined, a sentence for doctor and self-reports)."""
        network = "network on" if self.network else "network off"
        if self.mode == "off":
            return False, "agent.sandbox: off; commands run unconfined (deny-list only)"
        problem = bwrap_problem(self.network)
        if problem is None:
            return True, (
                f"agent.sandbox: {self.mode}; commands run under bubblewrap: workspace "
                f"writable, the rest read-only, {network}"
            )
        if self.mode == "required":
            return False, f"agent.sandbox: required, but {problem}: every command is refused"
        return False, f"agent.sandbox: auto, but {problem}: commands run unconfined"

    def _bwrap_argv(self, workspace: Path, cwd: Path) -> list[str]:
        writable = os.path.realpath(workspace)
        mounts = [(writable, ["--bind", writable, writable])]
        tmp = self._tmp_dir()
        if tmp:
            mounts.append((tmp, ["--bind", tmp, tmp]))
        else:
            mounts.append(("/tmp", ["--tmpfs", "/tmp"]))
            tmp = "/tmp"
        # a mount hides what is below it: parents first (the workspace may lie under /tmp)
        mounts.sort(key=lambda item: (item[0].rstrip("/").count("/"), item[0] == writable))
        argv = [probe_bwrap(self.network)[0], "--ro-bind", "/", "/", "--dev", "/dev"]
        for _, arguments in mounts:
            argv += arguments
        if not self.network:
            argv.append("--unshare-net")
        argv += ["--cap-drop", "ALL", "--die-with-parent", "--setenv", "TMPDIR", tmp]
        # pip, uv, ruff ... keep their caches between commands
        argv += ["--setenv", "XDG_CACHE_HOME", os.path.join(tmp, ".cache")]
        return [*argv, "--chdir", os.path.realpath(cwd), "--"]

    def _tmp_dir(self) -> str | None:
        if self.tmp is None:
            return None
        try:
            self.tmp.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            log.warning("sandbox TMPDIR: cannot create %s (%s); using an empty /tmp", self.tmp, exc)
            return None
        return os.path.realpath(self.tmp)


def sandbox_for(config: Config) -> Sandbox:
    """The sandbox ``config`` asks for (``agent.sandbox``, ``agent.sandbox_network``)."""
    agent = config.agent
    return Sandbox(agent.sandbox, agent.sandbox_network, config.home / "tmp" / "sandbox")


def bwrap_problem(network: bool = True) -> str | None:
    """Why bubblewrap cannot confine commands here, or None when it can."""
    return probe_bwrap(network)[1]


# Probed once per process and network setting: it costs a process start, and whether this
# kernel lets us build namespaces does not change while we run. The path is kept with the
# answer, so a command whose PATH lacks bwrap's folder is still confined.
@functools.lru_cache(maxsize=2)
def probe_bwrap(network: bool) -> tuple[str, str | None]:
    """(bwrap's path, why it cannot confine commands here or None when it can)."""
    if os.name != "posix":
        return "", "bubblewrap needs Linux"
    path = shutil.which("bwrap")
    if path is None:
        return "", f"bwrap is not installed ({INSTALL_HINT})"
    argv = [path, "--ro-bind", "/", "/", "--dev", "/dev", "--tmpfs", "/tmp"]
    argv += [] if network else ["--unshare-net"]
    argv += ["--cap-drop", "ALL", "--die-with-parent", "--", "/bin/true"]
    try:
        done = subprocess.run(
            argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=PROBE_TIMEOUT
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return path, f"bwrap does not start ({exc})"
    if done.returncode != 0:
        lines = done.stderr.decode(errors="replace").strip().splitlines()
        return path, f"bwrap does not work here ({lines[-1] if lines else done.returncode})"
    return path, None
