"""Tasks that use the agent's home: scheduled tasks, memory across sessions, skills, MCP."""

from __future__ import annotations

import random
import re
import string
import sys
from dataclasses import dataclass
from pathlib import Path

from .task import Case, JudgeInput, Task, Verdict, failed, has_word, passed, quote, read_file

MCP_SERVER = Path(__file__).resolve().with_name("mcp_server.py")
COLOURS = ("teal", "maroon", "ochre", "lavender", "crimson", "turquoise")
CODENAMES = ("amber-otter", "silent-lynx", "copper-finch", "misty-badger")
BACKUP_COMMAND = "echo backup"

_TASK_HEAD = re.compile(r"^#(?P<id>\d+) (?P<name>.*?) \[(?P<kind>\w+), (?P<state>\w+)[^\]]*\]")
_NEXT = re.compile(r"^\s+next: \S+ (?P<clock>\d\d:\d\d):\d\d")
_TEXT = re.compile(r"^\s+(?:command|prompt): (?P<text>.*)$")


@dataclass
class ListedTask:
    """One task as ``tea-agent-mini tasks list`` prints it."""

    name: str
    kind: str
    enabled: bool
    next_clock: str = ""  # HH:MM of the next run, in the task's zone
    text: str = ""  # its command or prompt


def parse_task_list(output: str) -> list[ListedTask]:
    tasks: list[ListedTask] = []
    for line in output.splitlines():
        head = _TASK_HEAD.match(line)
        if head:
            enabled = head.group("state") == "enabled"
            tasks.append(ListedTask(head.group("name"), head.group("kind"), enabled))
        elif tasks and (found := _NEXT.match(line)):
            tasks[-1].next_clock = found.group("clock")
        elif tasks and (found := _TEXT.match(line)):
            tasks[-1].text = found.group("text")
    return tasks


def _schedule_case(rng: random.Random) -> Case:
    clock = f"{rng.choice((2, 3, 4, 5, 22, 23)):02d}:{rng.choice((15, 30, 45)):02d}"
    prompt = (
        f"Schedule a shell task named nightly-backup that runs the command `{BACKUP_COMMAND}` "
        f"every day at {clock}."
    )
    return Case(prompts=(prompt,), facts={"clock": clock})


def _schedule_judge(given: JudgeInput) -> Verdict:
    listing = given.cli(["tasks", "list"])
    if listing.exit_code != 0:
        return failed(f"tasks list failed: {quote(listing.stderr)}")
    tasks = parse_task_list(listing.stdout)
    if not tasks:
        return failed("no task was scheduled")
    clock = given.facts["clock"]
    runs_backup = [task for task in tasks if _runs_backup(task)]
    for task in runs_backup:
        if task.next_clock == clock:
            return passed(f"task {task.name!r} runs {BACKUP_COMMAND!r} daily at {clock}")
    if runs_backup:
        first = runs_backup[0]
        return failed(f"task {first.name!r} next runs at {first.next_clock}, not {clock}")
    shown = "; ".join(f"{t.name} [{t.kind}] {t.text}" for t in tasks)
    return failed(f"no enabled shell task runs {BACKUP_COMMAND!r}: {quote(shown)}")


def _runs_backup(task: ListedTask) -> bool:
    command = task.text.replace('"', "").replace("'", "")
    return task.kind == "shell" and task.enabled and BACKUP_COMMAND in command


def _memory_case(rng: random.Random) -> Case:
    colour = rng.choice(COLOURS)
    prompts = (f"Remember that my favourite colour is {colour}.", "What is my favourite colour?")
    return Case(prompts=prompts, facts={"colour": colour})


def _memory_judge(given: JudgeInput) -> Verdict:
    topics = [run.topic_id for run in given.runs]
    if len(topics) != 2 or topics[0] is None or topics[0] == topics[1]:
        return failed(f"the two sessions did not run as two topics: {topics}")
    colour = given.facts["colour"]
    if has_word(given.answer, colour):
        return passed(f"a new session recalls {colour}")
    return failed(f"session 2 does not say {colour}: {quote(given.answer)}")


SKILL = """---
name: release-notes
description: How to write the release notes of this project (RELEASE_NOTES.md).
---
# Writing release notes

1. Read the version number from the file VERSION.
2. Write the file RELEASE_NOTES.md. Its first line is exactly `# Release <version>`.
3. Its second line is exactly `Codename: {codename}` (every release of this project has it).
4. Then one bullet line per entry of CHANGES.txt.
"""


def _skill_case(rng: random.Random) -> Case:
    version = f"{rng.randint(1, 4)}.{rng.randint(0, 12)}.{rng.randint(0, 9)}"
    codename = rng.choice(CODENAMES)
    return Case(
        prompts=("Write the release notes for this project, following the release-notes skill.",),
        facts={"version": version, "codename": codename},
        files={
            "VERSION": version + "\n",
            "CHANGES.txt": "faster start-up\nfix the CSV export\n",
            ".tea_agent/skills/release-notes/SKILL.md": SKILL.format(codename=codename),
        },
    )


def _skill_judge(given: JudgeInput) -> Verdict:
    text = read_file(given.workspace / "RELEASE_NOTES.md")
    if text is None:
        return failed("RELEASE_NOTES.md was not written")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    heading = f"# Release {given.facts['version']}"
    if not lines or lines[0] != heading:
        return failed(f"the first line is not {heading!r}: {quote(text)}")
    codename = f"Codename: {given.facts['codename']}"
    if codename not in lines:
        return failed(f"no line {codename!r} (it is only in the skill): {quote(text)}")
    return passed("RELEASE_NOTES.md follows the skill (version and codename)")


def _mcp_case(rng: random.Random) -> Case:
    secret = "".join(rng.choices(string.ascii_uppercase, k=2) + rng.choices(string.digits, k=4))
    order = rng.randint(1000, 9999)
    server = {
        "command": sys.executable,
        "args": [str(MCP_SERVER)],
        # not named like a secret: the agent masks secret-looking env values in tool output
        "env": {"EVAL_MCP_PREFIX": secret},
    }
    prompt = f"Use the order_status tool to look up order {order} and tell me its tracking code."
    return Case(
        prompts=(prompt,),
        facts={"code": f"{secret}-{order}"},
        config={"mcp_servers": {"orders": server}},
    )


def _mcp_judge(given: JudgeInput) -> Verdict:
    code = given.facts["code"]
    if code.lower() in given.answer.lower():
        return passed(f"the answer has the tracking code {code} only the MCP server knows")
    return failed(f"the answer lacks the tracking code {code}: {quote(given.answer)}")


TASKS = (
    Task("schedule_task", "schedule a daily shell task", _schedule_case, _schedule_judge),
    Task("remember_fact", "recall a colour in a new session", _memory_case, _memory_judge),
    Task("use_skill", "write release notes as a workspace skill says", _skill_case, _skill_judge),
    Task("use_mcp_tool", "call a stdio MCP server's tool", _mcp_case, _mcp_judge),
)
