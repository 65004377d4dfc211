from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path

import pytest

from tea_agent_mini.shell import proctree
from tea_agent_mini.shell.orphans import OWNER_VARIABLE, Job, JobTable, reap_orphans
from tea_agent_mini.shell.runner import run_command

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not proctree.has_proc(),
    reason="PR_SET_PDEATHSIG and process start times need Linux and /proc",
)
DEADLINE = 30.0  # generous: the machine may be loaded; nothing here measures speed

# A stand-in for the server: runs a command whose shell keeps a background job, then waits.
SERVER = """
import sys
from pathlib import Path
from tea_agent_mini.shell.orphans import JobTable
from tea_agent_mini.shell.runner import run_command

home = Path(sys.argv[1])
run_command("sleep 300 & sleep 300; true", home, timeout=600, jobs=JobTable.at(home))
"""


def wait_for(condition: Callable[[], object], what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < deadline, f"still waiting after {DEADLINE:g}s: {what}"
        time.sleep(0.05)


def alive(pid: int) -> bool:
    stat = proctree.read_stat(pid)
    return stat is not None and stat.state != "Z"


def members(pgid: int) -> list[int]:
    return [s.pid for s in proctree.group_stats(pgid) if s.state != "Z"]


def me() -> proctree.ProcStat:
    stat = proctree.read_stat(os.getpid())
    assert stat is not None
    return stat


@pytest.fixture
def groups() -> Iterator[list[int]]:
    """Process groups a test started; whatever is left of them is killed afterwards."""
    started: list[int] = []
    yield started
    for pgid in started:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def start_group(command: str, groups: list[int], **env: str) -> subprocess.Popen:
    proc = subprocess.Popen(
        ["/bin/sh", "-c", command], start_new_session=True, env={**os.environ, **env}
    )
    groups.append(proc.pid)
    return proc


def record(table: JobTable, pgid: int, start: int, owner_start: int) -> Path:
    """A record made by an earlier process with our pid (the start time tells them apart)."""
    job = Job(pgid, start, os.getpid(), owner_start, proctree.boot_id(), "sleep 300")
    table.folder.mkdir(parents=True, exist_ok=True)
    path = table.folder / f"{os.getpid()}-{pgid}.json"
    path.write_text(json.dumps(asdict(job)), encoding="utf-8")
    return path


def test_a_killed_server_takes_its_command_along(tea_home, groups):
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(tea_home)])
    try:
        folder = JobTable.at(tea_home).folder
        wait_for(lambda: list(folder.glob("*.json")), "the command's record")
        (path,) = folder.glob("*.json")
        pgid = json.loads(path.read_text(encoding="utf-8"))["pgid"]
        groups.append(pgid)
        wait_for(lambda: len(members(pgid)) == 3, "the shell and both sleeps")
    finally:
        server.kill()
        server.wait()
    # the kernel kills the shell with the server ...
    wait_for(lambda: not alive(pgid), "the shell to die with the server")
    # ... not what the shell started: that is left for the next start-up
    assert len(members(pgid)) == 2
    killed = reap_orphans(tea_home)
    assert [job.pgid for job in killed] == [pgid]
    wait_for(lambda: not members(pgid), "the background sleeps to be killed")
    assert not list(folder.glob("*.json"))


def test_a_running_command_is_recorded_marked_and_forgotten(tea_home, workspace):
    table = JobTable.at(tea_home)
    records = f'"{table.folder}"/*.json'
    # the record is written just after the shell starts: wait for it
    command = (
        f'until cat {records} 2>/dev/null; do sleep 0.05; done; echo; echo "mark=${OWNER_VARIABLE}"'
    )
    result = run_command(command, workspace, 30, jobs=table)
    recorded, mark = result.output.strip().splitlines()
    job = Job(**json.loads(recorded))
    assert job.command == command and job.owner == os.getpid()
    assert mark == f"mark={os.getpid()}:{me().start}"
    assert not list(table.folder.glob("*.json"))


def test_the_reaper_kills_a_recorded_group_whose_recorder_is_gone(tea_home, groups):
    proc = start_group("sleep 300", groups)
    table = JobTable.at(tea_home)
    leader = proctree.read_stat(proc.pid)
    assert leader is not None
    path = record(table, proc.pid, leader.start, owner_start=me().start - 1)
    assert [job.pgid for job in table.reap()] == [proc.pid]
    assert proc.wait(DEADLINE) == -signal.SIGTERM
    assert not path.exists()


def test_a_pid_with_another_start_time_is_not_killed(tea_home, groups):
    proc = start_group("sleep 300", groups)
    table = JobTable.at(tea_home)
    leader = proctree.read_stat(proc.pid)
    assert leader is not None
    # the recorded command ended long ago and an unrelated process got its pid
    path = record(table, proc.pid, leader.start - 1, owner_start=me().start - 1)
    assert table.reap() == []
    assert alive(proc.pid) and not path.exists()


def test_the_groups_of_a_running_recorder_are_left_alone(tea_home, groups):
    proc = start_group("sleep 300", groups)
    table = JobTable.at(tea_home)
    leader = proctree.read_stat(proc.pid)
    assert leader is not None
    path = record(table, proc.pid, leader.start, owner_start=me().start)
    assert table.reap() == []
    assert alive(proc.pid) and path.exists()


@pytest.mark.parametrize("marked", [True, False])
def test_without_its_leader_a_group_is_killed_only_if_it_carries_the_mark(tea_home, groups, marked):
    owner_start = me().start - 1
    env = {OWNER_VARIABLE: f"{os.getpid()}:{owner_start}"} if marked else {}
    leader = start_group("sleep 300 & exit 0", groups, **env)
    start = proctree.read_stat(leader.pid)
    leader.wait()
    assert start is not None and len(members(leader.pid)) == 1  # the background sleep
    table = JobTable.at(tea_home)
    record(table, leader.pid, start.start, owner_start)
    killed = table.reap()
    if marked:
        assert [job.pgid for job in killed] == [leader.pid]
        wait_for(lambda: not members(leader.pid), "the sleep to be killed")
    else:
        assert killed == [] and len(members(leader.pid)) == 1
