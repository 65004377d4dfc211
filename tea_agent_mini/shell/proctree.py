"""What a process tree is doing, read from /proc (Linux), and how to stop all of it.

Used by the shell tool's activity-aware timeout: a command whose processes keep using CPU or doing
I/O is working, one whose counters stand still is waiting on something that will not come.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")


@dataclass(frozen=True)
class Activity:
    """Counters summed over a process tree; compare two samples to see progress."""

    cpu_ticks: int = 0
    io_bytes: int = 0
    pids: frozenset[int] = frozenset()

    def progressed_since(self, earlier: Activity) -> bool:
        return (
            self.cpu_ticks > earlier.cpu_ticks
            or self.io_bytes > earlier.io_bytes
            or bool(self.pids - earlier.pids)  # something new was started
        )


@dataclass(frozen=True)
class ProcStat:
    pid: int
    state: str  # R, S, D, Z (zombie) ...
    ppid: int
    pgrp: int
    session: int
    cpu_ticks: int
    start: int = 0  # clock ticks after boot: with the pid, it tells a process from a reused pid


def has_proc() -> bool:
    """True when per-process counters can be read (Linux)."""
    return (PROC / "self" / "stat").exists()


def read_stat(pid: int) -> ProcStat | None:
    """Parse /proc/<pid>/stat; None when the process is gone."""
    try:
        raw = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    # the command name (field 2) is in parentheses and may itself contain spaces or ')'
    fields = raw[raw.rfind(")") + 2 :].split()
    try:
        state, ppid, pgrp, session = fields[0], int(fields[1]), int(fields[2]), int(fields[3])
        utime, stime, start = int(fields[11]), int(fields[12]), int(fields[19])
    except (IndexError, ValueError):
        return None
    return ProcStat(pid, state, ppid, pgrp, session, utime + stime, start)


def read_environ(pid: int) -> set[bytes]:
    """The ``NAME=value`` entries a process was started with; empty when not readable."""
    try:
        raw = (PROC / str(pid) / "environ").read_bytes()
    except OSError:
        return set()
    return set(raw.split(b"\0"))


def boot_id() -> str:
    """This boot's id: start times count from the boot, so they compare only within one."""
    try:
        return (PROC / "sys" / "kernel" / "random" / "boot_id").read_text().strip()
    except OSError:
        return ""


def read_io_bytes(pid: int) -> int:
    """Bytes read and written through syscalls (rchar + wchar); 0 when not readable."""
    try:
        text = (PROC / str(pid) / "io").read_text()
    except OSError:
        return 0
    total = 0
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key in ("rchar", "wchar"):
            total += int(value.strip() or 0)
    return total


def tree_stats(root: int) -> list[ProcStat]:
    """The root process, everything in its session and all their descendants.

    The session catches grandchildren that were re-parented to init when their parent exited;
    the parent links catch children that started a session of their own. One scan of /proc
    serves both (the per-task ``children`` files would not find the re-parented ones).
    """
    everything = _all_stats()
    by_parent: dict[int, list[ProcStat]] = {}
    for stat in everything:
        by_parent.setdefault(stat.ppid, []).append(stat)
    chosen = {s.pid: s for s in everything if s.pid == root or s.session == root}
    stack = list(chosen)
    while stack:
        for child in by_parent.get(stack.pop(), []):
            if child.pid not in chosen:
                chosen[child.pid] = child
                stack.append(child.pid)
    return list(chosen.values())


def _all_stats() -> list[ProcStat]:
    stats = []
    for entry in PROC.iterdir():
        if entry.name.isdigit():
            stat = read_stat(int(entry.name))
            if stat is not None:
                stats.append(stat)
    return stats


def sample(root: int) -> Activity:
    """CPU ticks and I/O bytes summed over the tree rooted at ``root``."""
    stats = tree_stats(root)
    return Activity(
        cpu_ticks=sum(s.cpu_ticks for s in stats),
        io_bytes=sum(read_io_bytes(s.pid) for s in stats),
        pids=frozenset(s.pid for s in stats),
    )


def group_stats(pgid: int) -> list[ProcStat]:
    """The processes of a process group (zombies included)."""
    return [s for s in _all_stats() if s.pgrp == pgid]


def group_alive(pgid: int) -> bool:
    """Whether any process of the group is still running (zombies do not count on Linux)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    if not has_proc():
        return True
    # a zombie nobody reaps (no init in a container) must not look alive forever
    return any(s.pgrp == pgid and s.state != "Z" for s in _all_stats())


def kill_group(pgid: int, grace: float = 2.0, reap: Callable[[], object] | None = None) -> None:
    """SIGTERM the process group, wait up to ``grace`` seconds, then SIGKILL what is left.

    ``reap`` (e.g. ``Popen.poll``) is called while waiting so the group leader does not linger
    as our own zombie.
    """
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if reap is not None:
            reap()
        if not group_alive(pgid):
            return
        time.sleep(0.05)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass
