"""Running one task: a fresh sandbox, one CLI run per prompt, the judge, the traffic numbers."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from . import tasks_files, tasks_home
from .metrics import TaskResult, traffic
from .proxy import RecordingProxy
from .sandbox import AgentRun, ModelSettings, Sandbox, config_data, run_cli, write_config
from .task import Case, JudgeInput, Task, Verdict

JUDGE_CLI_TIMEOUT = 60.0
ALL_TASKS: tuple[Task, ...] = tasks_files.TASKS + tasks_home.TASKS


def find_tasks(names: Sequence[str] | None) -> list[Task]:
    """The named tasks in the given order (all of them for None). Raises KeyError for an
    unknown name."""
    if not names:
        return list(ALL_TASKS)
    known = {task.name: task for task in ALL_TASKS}
    missing = [name for name in names if name not in known]
    if missing:
        raise KeyError(f"unknown task(s): {', '.join(missing)}; known: {', '.join(known)}")
    return [known[name] for name in names]


@dataclass(frozen=True)
class RunOptions:
    cli: tuple[str, ...]
    settings: ModelSettings
    timeout: float = 600.0  # per task, all its sessions together
    keep: bool = False  # leave the sandbox on disk for a look afterwards


def run_task(task: Task, case: Case, proxy: RecordingProxy, options: RunOptions) -> TaskResult:
    sandbox = Sandbox.create(task.name)
    try:
        return _run_in(sandbox, task, case, proxy, options)
    finally:
        if not options.keep:
            sandbox.remove()


def _run_in(
    sandbox: Sandbox, task: Task, case: Case, proxy: RecordingProxy, options: RunOptions
) -> TaskResult:
    sandbox.lay_out(case.files, sandbox.workspace)
    sandbox.lay_out(case.home_files, sandbox.home)
    started = time.monotonic()
    deadline = started + options.timeout
    runs: list[AgentRun] = []
    tags = [f"{task.name}.{number}" for number in range(1, len(case.prompts) + 1)]
    for tag, prompt in zip(tags, case.prompts, strict=True):
        _configure(sandbox, case, proxy, options.settings, tag)
        run = run_cli(options.cli, ["run", "--json", prompt], sandbox, deadline - time.monotonic())
        runs.append(run)
        if run.timed_out:
            break
    seconds = time.monotonic() - started
    if options.keep:
        _write_exchanges(sandbox.root / "exchanges.jsonl", proxy, tags)
    given = JudgeInput(sandbox.workspace, sandbox.home, case, runs, _cli(sandbox, options))
    verdict = _judge(task, given)
    problem = _problem(runs, options.timeout)
    return TaskResult(
        name=task.name,
        passed=verdict.passed and problem is None,
        reason=verdict.reason if problem is None else f"{problem}; {verdict.reason}",
        seconds=seconds,
        traffic=traffic([proxy.exchanges(tag) for tag in tags]),
        exit_codes=[run.exit_code for run in runs],
        answers=[run.answer for run in runs],
        problem=problem,
    )


def _write_exchanges(path: Path, proxy: RecordingProxy, tags: Sequence[str]) -> None:
    """Each model call of the task, for a look afterwards: the last message sent, the reply."""
    with path.open("w", encoding="utf-8") as out:
        for tag in tags:
            for exchange in proxy.exchanges(tag):
                messages = (exchange.body or {}).get("messages") or [{}]
                record = {
                    "tag": tag,
                    "lane": exchange.lane,
                    "status": exchange.status,
                    "seconds": round(exchange.seconds, 2),
                    "completion_tokens": exchange.tokens.completion,
                    "last_message": messages[-1],
                    "reply": exchange.reply,
                }
                out.write(json.dumps(record, ensure_ascii=False) + "\n")


def _configure(
    sandbox: Sandbox, case: Case, proxy: RecordingProxy, settings: ModelSettings, tag: str
) -> None:
    main, cheap = proxy.url_for(tag, "main"), proxy.url_for(tag, "cheap")
    write_config(sandbox.home, config_data(settings, main, cheap, sandbox.workspace, case.config))


def _cli(sandbox: Sandbox, options: RunOptions) -> Callable[[Sequence[str]], AgentRun]:
    def cli(args: Sequence[str]) -> AgentRun:
        return run_cli(options.cli, args, sandbox, JUDGE_CLI_TIMEOUT)

    return cli


def _judge(task: Task, given: JudgeInput) -> Verdict:
    try:
        return task.judge(given)
    except Exception as exc:  # a judge bug must not stop the other tasks
        return Verdict(False, f"judge error: {exc.__class__.__name__}: {exc}")


def _problem(runs: Sequence[AgentRun], timeout: float) -> str | None:
    """Why the task fails whatever the effects are: a session that hung or printed no JSON."""
    for number, run in enumerate(runs, start=1):
        if run.timed_out:
            return f"session {number} timed out (task limit {timeout:g} s)"
        if run.data is None:
            tail = run.stderr.strip().splitlines()[-1:] or ["no output"]
            return f"session {number} printed no JSON (exit {run.exit_code}: {tail[0][:200]})"
    return None
