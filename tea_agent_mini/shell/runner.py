"""Running one shell command in a folder, supervised: ``run_command`` and its result.

The timeout judges progress, not only time: every second the CPU time and I/O bytes of the whole
process tree are sampled. At the timeout a tree that made no progress in the last sample window
is killed; a busy one may run on until four times the timeout. ``toolkit_exec``
(``tools/shell.py``), scheduled shell tasks and external programs (``toolkit/programs.py``) all
run through here.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from tea_agent_mini.errors import ToolError
from tea_agent_mini.shell import orphans, proctree

HARD_LIMIT_FACTOR = 4
SAMPLE_INTERVAL = 1.0
SETTLE_DELAY = 0.25  # the first sample waits until start-up (exec, loader reads) is over
KILL_GRACE = 2.0
CANCEL_POLL = 0.25  # how often a running command checks whether its turn was cancelled
OUTPUT_LIMIT = 64 * 1024


@dataclass
class OutputBuffer:
    """Keeps the first and the last ``limit // 2`` bytes of a stream and counts the rest."""

    limit: int = OUTPUT_LIMIT
    head: bytearray = field(default_factory=bytearray)
    tail: bytearray = field(default_factory=bytearray)
    total: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def feed(self, chunk: bytes) -> None:
        with self._lock:
            self.total += len(chunk)
            room = self.limit // 2 - len(self.head)
            if room > 0:
                self.head += chunk[:room]
                chunk = chunk[room:]
            self.tail += chunk
            if len(self.tail) > self.limit:  # trim now and then, not on every chunk
                del self.tail[: len(self.tail) - self.limit // 2]

    def text(self) -> str:
        with self._lock:
            tail = self.tail[-(self.limit // 2) :] if self.tail else b""
            omitted = self.total - len(self.head) - len(tail)
            head = self.head.decode("utf-8", errors="replace")
            if omitted <= 0:
                return head + bytes(tail).decode("utf-8", errors="replace")
            marker = f"\n... [{omitted:,} bytes of output omitted] ...\n"
            return head + marker + bytes(tail).decode("utf-8", errors="replace")


@dataclass(frozen=True)
class CommandResult:
    exit_code: int
    duration: float
    output: str
    killed: str | None = None  # why it was killed, when it was
    stopped_background: bool = False


def run_command(
    command: str,
    cwd: str | os.PathLike[str],
    timeout: float,
    output_limit: int = OUTPUT_LIMIT,
    cancel: threading.Event | None = None,
    jobs: orphans.JobTable | None = None,
    prefix: Sequence[str] = (),
) -> CommandResult:
    """Run ``command`` through the shell and supervise it until it ends or is killed.

    ``jobs`` records the command while it runs, so that a crash does not leave it running.
    ``prefix`` goes before ``/bin/sh -c`` on POSIX: the sandbox (``Sandbox.prefix``).
    """
    started = time.monotonic()
    env = dict(os.environ, PAGER="cat", GIT_PAGER="cat", GIT_TERMINAL_PROMPT="0")
    env.update(orphans.owner_mark())
    try:
        proc = _spawn(command, cwd, env, prefix)
    except OSError as exc:
        raise ToolError(f"cannot start the shell: {exc.strerror or exc}") from exc
    record = jobs.add(proc.pid, command) if jobs is not None else None
    buffer = OutputBuffer(output_limit)
    reader = threading.Thread(target=_pump, args=(proc.stdout, buffer), daemon=True)
    reader.start()
    try:
        killed = _supervise(proc, timeout, cancel or threading.Event())
    finally:
        if proc.poll() is None:  # interrupted by an error: leave nothing behind
            _terminate(proc)
    reader.join(timeout=0.5)
    stopped = False
    if reader.is_alive() or (os.name == "posix" and proctree.group_alive(proc.pid)):
        # background processes still hold the output pipe or keep running: stop them
        _terminate(proc, grace=1.0)
        stopped = True
        reader.join(timeout=2.0)
    if jobs is not None:
        jobs.remove(record)
    return CommandResult(
        proc.returncode, time.monotonic() - started, buffer.text(), killed, stopped
    )


def _spawn(
    command: str, cwd: str | os.PathLike[str], env: dict[str, str], prefix: Sequence[str] = ()
) -> subprocess.Popen:
    common: dict[str, Any] = {
        "stdin": subprocess.DEVNULL,
        "stdout": subprocess.PIPE,
        "stderr": subprocess.STDOUT,
        "cwd": cwd,
        "env": env,
    }
    if os.name == "posix":
        # a new session makes the command a process group we can kill as a whole
        argv = [*prefix, "/bin/sh", "-c", command]
        return subprocess.Popen(
            argv, start_new_session=True, preexec_fn=orphans.die_with_parent(), **common
        )
    flags = getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)
    return subprocess.Popen(command, shell=True, creationflags=flags, **common)


def _pump(stream: IO[bytes], buffer: OutputBuffer) -> None:
    with stream:
        fd = stream.fileno()
        while chunk := os.read(fd, 65536):
            buffer.feed(chunk)


def _supervise(proc: subprocess.Popen, timeout: float, cancel: threading.Event) -> str | None:
    """Wait for the command; kill it when idle past ``timeout``, past the hard limit, or when
    the turn is cancelled."""
    if os.name != "posix" or not proctree.has_proc():
        return _supervise_plain(proc, timeout, cancel)
    start = time.monotonic()
    hard = timeout * HARD_LIMIT_FACTOR
    previous: proctree.Activity | None = None
    next_sample = start + min(SETTLE_DELAY, timeout / 4)
    while True:
        wait = min(next_sample, start + hard) - time.monotonic()
        try:
            proc.wait(timeout=min(max(wait, 0.0), CANCEL_POLL))
            return None
        except subprocess.TimeoutExpired:
            pass
        if cancel.is_set():
            _terminate(proc)
            return "killed: the turn was cancelled"
        now = time.monotonic()
        if now < next_sample and now < start + hard:
            continue
        elapsed = now - start
        if elapsed >= hard:
            _terminate(proc)
            return f"killed: hard limit after {elapsed:.0f}s ({HARD_LIMIT_FACTOR}x the timeout)"
        current = proctree.sample(proc.pid)
        if previous is not None and elapsed >= timeout and not current.progressed_since(previous):
            _terminate(proc)
            return f"killed: idle timeout after {elapsed:.0f}s (no CPU or I/O activity)"
        previous = current
        next_sample = now + SAMPLE_INTERVAL
        if elapsed < timeout:
            next_sample = min(next_sample, start + timeout)


def _supervise_plain(proc: subprocess.Popen, timeout: float, cancel: threading.Event) -> str | None:
    """Without /proc there is no activity to sample: a plain timeout."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            proc.wait(timeout=min(max(deadline - time.monotonic(), 0.0), CANCEL_POLL))
            return None
        except subprocess.TimeoutExpired:
            pass
        if cancel.is_set():
            _terminate(proc)
            return "killed: the turn was cancelled"
        if time.monotonic() >= deadline:
            _terminate(proc)
            return f"killed: timeout after {timeout:g}s"


def _terminate(proc: subprocess.Popen, grace: float = KILL_GRACE) -> None:
    if os.name == "posix":
        proctree.kill_group(proc.pid, grace, reap=proc.poll)
    else:
        proc.kill()
    try:
        proc.wait(timeout=grace + 1)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def format_result(result: CommandResult) -> str:
    lines = [result.output.rstrip("\n") if result.output.strip() else "(no output)", "---"]
    if result.killed:
        lines.append(result.killed)
    code = result.exit_code
    if code < 0 and os.name == "posix":
        try:
            lines.append(f"exit code: {code} (signal {signal.Signals(-code).name})")
        except ValueError:
            lines.append(f"exit code: {code}")
    else:
        lines.append(f"exit code: {code}")
    lines.append(f"duration: {result.duration:.2f}s")
    if result.stopped_background:
        lines.append("note: processes the command left running in the background were stopped")
    return "\n".join(lines)
