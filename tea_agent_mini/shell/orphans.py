"""Commands die with the process that started them, even when it is killed with SIGKILL.

Two layers, because neither covers everything alone:

- On Linux a command's shell is started with ``PR_SET_PDEATHSIG``: the kernel kills it when the
  thread that started it ends. ``run_command`` waits for its command in that very thread, and
  an MCP server is started on its loop's thread, which lives as long as the server should.
- The signal reaches only that one child, not what it started (``a & b``). So each running
  command is recorded in ``<home>/running/`` (one small file: its process group, the leader's
  start time, who recorded it), and at start-up the groups whose recorder is gone are killed.

A recorded group is killed only when it is provably the one recorded: its leader still runs with
the recorded start time, or, once the leader is gone, one of its processes carries the recorder's
mark in its environment (``TEA_AGENT_OWNER``, which every command inherits). A pid reused by an
unrelated process matches neither. Without /proc (macOS, Windows) nothing is recorded.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import json
import logging
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tea_agent_mini.private import PRIVATE_FILE, private_dirs
from tea_agent_mini.shell import proctree

__all__ = ["Job", "JobTable", "die_with_parent", "owner_mark", "reap_orphans"]

log = logging.getLogger(__name__)

OWNER_VARIABLE = "TEA_AGENT_OWNER"
FOLDER = "running"
COMMAND_CHARS = 500  # the record names the command for a person reading it, not for matching
REAP_GRACE = 1.0
_PR_SET_PDEATHSIG = 1


def die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` after which the kernel SIGKILLs the child when the thread that started
    it ends (Linux); None where there is no such signal."""
    prctl = _prctl()
    if prctl is None:
        return None
    parent = os.getpid()

    def arm() -> None:
        # runs in the child between fork and exec: only calls prepared in the parent
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the signal was armed
            os._exit(1)

    return arm


@functools.cache
def _prctl() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    prctl.argtypes = [ctypes.c_int] + [ctypes.c_ulong] * 4  # variadic: widths must be exact
    prctl.restype = ctypes.c_int
    return prctl


@dataclass(frozen=True)
class Owner:
    """A process told apart from any later one with the same pid by its start time."""

    pid: int
    start: int

    @property
    def mark(self) -> str:
        return f"{self.pid}:{self.start}"

    def running(self) -> bool:
        stat = proctree.read_stat(self.pid)
        return stat is not None and stat.start == self.start and stat.state != "Z"


def _me() -> Owner | None:
    stat = proctree.read_stat(os.getpid())
    return Owner(stat.pid, stat.start) if stat is not None else None


def owner_mark() -> dict[str, str]:
    """The environment entry that marks a command, and all it starts, as this process's."""
    me = _me()
    return {OWNER_VARIABLE: me.mark} if me is not None else {}


@dataclass(frozen=True)
class Job:
    """One recorded command: a process group and the process that started it."""

    pgid: int
    start: int  # the group leader's start time, clock ticks after boot
    owner: int
    owner_start: int
    boot: str
    command: str

    def still_ours(self) -> bool:
        """Whether the group with this id is still the one recorded (see the module doc)."""
        leader = proctree.read_stat(self.pgid)
        if leader is not None:
            # a pid is not reused while a group of that id lives: another start time means
            # ours ended and an unrelated process got the number
            return leader.start == self.start
        mark = f"{OWNER_VARIABLE}={self.owner}:{self.owner_start}".encode()
        return any(mark in proctree.read_environ(s.pid) for s in proctree.group_stats(self.pgid))


@dataclass(frozen=True)
class JobTable:
    """The running commands of the processes sharing a home, one file each (no locking)."""

    folder: Path

    @classmethod
    def at(cls, home: Path) -> JobTable:
        return cls(Path(home) / FOLDER)

    def add(self, pid: int, command: str) -> Path | None:
        """Record the command whose group leader is ``pid``; the record, or None when it cannot
        be told apart from later processes (no /proc) or cannot be written."""
        me, leader = _me(), proctree.read_stat(pid)
        if me is None or leader is None:
            return None
        job = Job(pid, leader.start, me.pid, me.start, proctree.boot_id(), command[:COMMAND_CHARS])
        path = self.folder / f"{me.pid}-{pid}.json"
        try:
            private_dirs(self.folder)
            _write_new(path, json.dumps(asdict(job)))
        except OSError as exc:
            log.warning("cannot record the running command in %s: %s", self.folder, exc)
            return None
        return path

    def remove(self, record: Path | None) -> None:
        if record is not None:
            with contextlib.suppress(OSError):
                record.unlink()

    def reap(self) -> list[Job]:
        """Kill the recorded groups whose recorder stopped running, forget their records, and
        return the jobs killed. Records of running recorders are left to them."""
        if not proctree.has_proc():
            return []
        boot = proctree.boot_id()
        killed: list[Job] = []
        for path in sorted(self.folder.glob("*.json")):
            job = _read(path)
            if job is not None and job.boot == boot:
                if Owner(job.owner, job.owner_start).running():
                    continue
                if job.still_ours() and _kill(job):
                    killed.append(job)
            with contextlib.suppress(OSError):
                path.unlink()
        return killed


def reap_orphans(home: Path) -> list[Job]:
    """``JobTable.at(home).reap()``, saying what it killed in the log."""
    killed = JobTable.at(home).reap()
    for job in killed:
        log.warning(
            "stopped a command left running by process %d, which ended first: %s",
            job.owner,
            job.command,
        )
    return killed


def _kill(job: Job) -> bool:
    try:
        proctree.kill_group(job.pgid, REAP_GRACE)
    except OSError as exc:  # e.g. not ours to signal after all: starting up matters more
        log.warning("cannot stop process group %d (%s): %s", job.pgid, job.command, exc)
        return False
    return True


def _write_new(path: Path, text: str) -> None:
    # written aside and renamed: a reaper never sees half a record (and would delete it)
    partial = path.with_suffix(".tmp")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(partial, path)


def _read(path: Path) -> Job | None:
    try:
        return Job(**json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None
