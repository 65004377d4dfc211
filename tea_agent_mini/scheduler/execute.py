"""Executing one task: a shell command in the workspace, or an agent turn in its own session.

Shell tasks go through the same deny-list, sandbox (``agent.sandbox``) and supervised
``run_command`` as ``toolkit_exec`` (activity-aware timeout, process-group kill). Prompt tasks
run a real turn through ``Runtime.session`` on the task's own topic, created on the first run
and titled after the task, so every run's answer can be read later like any conversation.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import TYPE_CHECKING

from ..errors import TeaAgentError, ToolError
from ..policy import Decision, decide
from ..store.tasks import OUTPUT_LIMIT
from ..types import Done, Error, TextDelta
from .runner import RunResult

if TYPE_CHECKING:
    from ..agent.session import Session
    from ..runtime import Runtime
    from ..shell.runner import CommandResult
    from ..store.tasks import Task

__all__ = ["TaskExecutor", "shell_result", "shell_task_decision"]

log = logging.getLogger(__name__)


def shell_task_decision(policy: str) -> Decision:
    """A shell task runs a command the user approved by creating the task (``ask`` is satisfied);
    read-only mode refuses it when it is created and at every run."""
    return decide(policy, "a shell task", changes=True, confirmed=True)


NOTICE_CHARS = 300  # how much of a run's output or error a notification carries
TOPIC_TITLE = "Task: {name}"


class TaskExecutor:
    """``await executor(task) -> RunResult``, using ``runtime`` for the workspace, the model,
    the tools and the store. Failures come back as results, not exceptions."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    async def __call__(self, task: Task) -> RunResult:
        if task.kind == "shell":
            result = await self.run_shell(task)
        elif task.kind == "prompt":
            result = await self.run_prompt(task)
        else:
            result = RunResult("failed", error=f"unknown task kind {task.kind!r}")
        if task.notify:
            await asyncio.to_thread(self.notify, task, result)
        return result

    async def run_shell(self, task: Task) -> RunResult:
        from ..shell.denylist import check_command
        from ..shell.orphans import JobTable
        from ..shell.runner import run_command

        command = task.command or ""
        if not command.strip():
            return RunResult("failed", error="the task has no command")
        decision = shell_task_decision(self.runtime.config.agent.approval)
        if not decision.runs:  # decided at every run: the policy may have changed since
            return RunResult("failed", error=decision.reason)
        workspace = self.runtime.config.workspace
        if not workspace.is_dir():
            return RunResult("failed", error=f"the workspace {workspace} is not a directory")
        cancel = threading.Event()
        try:
            check_command(command)
            jobs = JobTable.at(self.runtime.config.home)
            prefix = self.runtime.sandbox.prefix(workspace, workspace)
            done = await asyncio.to_thread(
                run_command, command, workspace, task.timeout, OUTPUT_LIMIT, cancel, jobs, prefix
            )
        except ToolError as exc:
            return RunResult("failed", error=str(exc))
        except asyncio.CancelledError:
            cancel.set()  # the thread goes on; this makes it kill the command at once
            raise
        return shell_result(done)

    async def run_prompt(self, task: Task) -> RunResult:
        prompt = task.prompt or ""
        if not prompt.strip():
            return RunResult("failed", error="the task has no prompt")
        try:
            session = await asyncio.to_thread(self._session, task)
        except TeaAgentError as exc:
            return RunResult("failed", error=f"cannot start the turn: {exc}")
        parts: list[str] = []
        outcome: list[Done | Error] = []

        async def consume() -> None:
            async for event in session.run_turn(prompt):
                if isinstance(event, TextDelta):
                    parts.append(event.text)
                elif isinstance(event, (Done, Error)):
                    outcome.append(event)

        topic_id = session.topic_id
        try:
            await asyncio.wait_for(consume(), task.timeout)
        except asyncio.TimeoutError:
            error = f"timeout: the turn did not finish within {task.timeout:g} s"
            return RunResult("timeout", "".join(parts), error=error, topic_id=topic_id)
        last = outcome[-1] if outcome else None
        if isinstance(last, Done):
            return RunResult("ok", last.text, topic_id=topic_id)
        error = f"{last.kind}: {last.message}" if last else "the turn ended without an answer"
        return RunResult("failed", "".join(parts), error=error, topic_id=topic_id)

    def _session(self, task: Task) -> Session:
        """The task's own session; a new one when it has none yet (or it was deleted)."""
        store = self.runtime.store
        topic_id = task.topic_id
        if topic_id is not None and store.topics.get(topic_id) is None:
            topic_id = None
        session = self.runtime.session(topic_id, source="task")
        if topic_id is None:
            store.topics.rename(session.topic_id, TOPIC_TITLE.format(name=task.name))
        return session

    def notify(self, task: Task, result: RunResult) -> None:
        """Tell the user how the run went: a desktop notification, else a notice the web UI
        shows (saved in the state of the task's session, or of the default scope)."""
        from ..toolkit.context import ToolContext
        from ..toolkit.notices import notify as notify_user

        config = self.runtime.config
        ctx = ToolContext(
            workspace=config.workspace,
            home=config.home,
            store=self.runtime.store,
            topic_id=result.topic_id or task.topic_id,
        )
        detail = (result.error if result.status != "ok" else result.output) or ""
        detail = detail.strip() or "(no output)"
        if len(detail) > NOTICE_CHARS:
            detail = detail[: NOTICE_CHARS - 3] + "..."
        urgency = "normal" if result.status == "ok" else "critical"
        try:
            notify_user(ctx, f"Task {task.name}: {result.status}", detail, urgency)
        except TeaAgentError as exc:
            log.warning("task #%s: could not notify: %s", task.id, exc)


def shell_result(done: CommandResult) -> RunResult:
    """A finished command as a run: killed by its timeout -> timeout, non-zero exit -> failed."""
    if done.killed:
        status = "timeout" if "timeout" in done.killed or "hard limit" in done.killed else "failed"
        return RunResult(status, done.output, done.exit_code, done.killed)
    if done.exit_code != 0:
        return RunResult("failed", done.output, done.exit_code, f"exit code {done.exit_code}")
    return RunResult("ok", done.output, done.exit_code)
