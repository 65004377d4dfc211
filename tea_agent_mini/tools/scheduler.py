"""toolkit_scheduler: the model's access to scheduled tasks (shell commands or agent prompts).

Everything goes through ``scheduler.service.TaskService``, the same checks the CLI and the REST
routes use. ``run_now`` waits for the run and shows its outcome; in the server it runs on the
server's scheduler, elsewhere on the session's runtime. The tool is ``async``: it awaits the
run on the event loop, and hands the store's blocking calls to a worker thread.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args

from tea_agent_mini.errors import ToolError
from tea_agent_mini.scheduler.cron import ScheduleError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import tool

if TYPE_CHECKING:
    from tea_agent_mini.scheduler.service import TaskService

Action = Literal[
    "list", "add", "update", "delete", "enable", "disable", "run_now", "history", "test"
]
ACTIONS: tuple[str, ...] = get_args(Action)
MUTATING = ("add", "update", "delete", "enable", "disable", "run_now")
DEFAULT_COUNT = 5


@tool(
    "toolkit_scheduler",
    mutates=True,
    mutating_actions=MUTATING,
    keywords="schedule every daily nightly weekly hourly cron remind",
)
async def toolkit_scheduler(
    ctx: ToolContext,
    action: Action,
    id: int | str | None = None,
    name: str | None = None,
    schedule: str | None = None,
    tz: str | None = None,
    kind: Literal["shell", "prompt"] | None = None,
    command: str | None = None,
    prompt: str | None = None,
    timeout: float | None = None,
    grace_seconds: float | None = None,
    notify: bool | None = None,
    count: Annotated[
        int | None,
        f"[test] how many fire times (default {DEFAULT_COUNT}) / [history] how many runs",
    ] = None,
) -> str:
    """Scheduled tasks that run on their own: a shell command or an agent prompt, on a
    schedule (once, interval, hourly, daily, weekly or cron; local time unless tz is given).
    Runs are recorded with status, exit code and output; a prompt task's answers are kept in
    its own session. Use test to check a schedule before adding it.

    Args:
        action: list tasks; add one; update/delete/enable/disable one; run_now (run it at once
            and show the result); history (its recent runs); test (show the next fire times of
            a schedule without saving anything)
        id: [update/delete/enable/disable/run_now/history] the task's id or name
        name: [add/update] a short unique name
        schedule: [add/update/test] once:2026-12-24T18:00 | interval:SECONDS | hourly:MM |
            daily:HH:MM | weekly:mon,fri:HH:MM | cron:MIN HOUR DOM MON DOW (five fields, e.g.
            cron:*/15 9-17 * * mon-fri)
        tz: [add/update/test] IANA time zone such as Europe/Berlin (default: the machine's
            local zone)
        kind: [add/update] shell (run a command) or prompt (run an agent turn); implied by
            giving command or prompt
        command: [add/update] shell command, run in the workspace
        prompt: [add/update] what to ask the agent; each run is a turn in the task's own
            session
        timeout: [add/update] seconds (default 300; for commands: without activity)
        grace_seconds: [add/update] a run missed while nothing was running still runs if at
            most this late (default 600)
        notify: [add/update] notify the user when a run finishes
    """
    from tea_agent_mini.scheduler.errors import TaskError

    if action not in ACTIONS:
        raise ToolError(f"unknown action {action!r}; expected one of: {', '.join(ACTIONS)}")
    fields = {
        "name": name,
        "schedule": schedule,
        "tz": tz,
        "kind": kind,
        "command": command,
        "prompt": prompt,
        "timeout": timeout,
        "grace_seconds": grace_seconds,
        "notify": notify,
    }
    try:
        if action == "run_now":
            return await _run_now(ctx, id)
        # the store's calls block: off the event loop
        return await asyncio.to_thread(_dispatch, ctx, action, id, fields, count)
    except (ScheduleError, TaskError) as exc:
        raise ToolError(str(exc)) from exc


async def _run_now(ctx: ToolContext, ref: int | str | None) -> str:
    from tea_agent_mini.scheduler import text

    service = _service(ctx)
    task = await asyncio.to_thread(service.get, _ref(ref, "run_now"))
    run = await service.arun_now(task.id)
    return f"Ran #{task.id} {task.name}:\n" + text.format_run(run, task.tz)


def _dispatch(
    ctx: ToolContext, action: str, ref: int | str | None, fields: dict[str, Any], count: int | None
) -> str:
    from tea_agent_mini.scheduler import text
    from tea_agent_mini.scheduler.service import preview_schedule

    if action == "test":
        return text.format_preview(
            preview_schedule(fields["schedule"], fields["tz"], count or DEFAULT_COUNT)
        )
    service = _service(ctx)
    if action == "list":
        tasks = service.matching()
        if not tasks:
            return "No scheduled tasks."
        return f"{len(tasks)} task(s):\n" + "\n".join(text.format_task(t) for t in tasks)
    if action == "add":
        task = service.add(
            fields.pop("name"), fields.pop("schedule"), **_given(fields, notify=False)
        )
        return "Added:\n" + text.format_task(task)
    task_ref = _ref(ref, action)
    if action == "update":
        return "Updated:\n" + text.format_task(service.update(task_ref, **fields))
    if action in ("enable", "disable"):
        task = service.set_enabled(task_ref, action == "enable")
        return f"{action.capitalize()}d:\n" + text.format_task(task)
    if action == "delete":
        task = service.delete(task_ref)
        return f"Deleted task #{task.id} {task.name} and its run history."
    if action == "history":
        task = service.get(task_ref)
        runs = service.history(task.id, count or 10)
        if not runs:
            return f"Task #{task.id} {task.name} has not run yet."
        views = "\n".join(text.format_run(r, task.tz, output_chars=500) for r in runs)
        return f"Last {len(runs)} run(s) of #{task.id} {task.name}, newest first:\n{views}"
    raise ToolError(f"unknown action {action!r}")


def _service(ctx: ToolContext) -> TaskService:
    from tea_agent_mini.scheduler.service import TaskService

    if ctx.store is None:
        raise ToolError("scheduled tasks need the store, which is not available here")
    return TaskService(ctx.store, runtime=ctx.runtime)


def _ref(ref: int | str | None, action: str) -> int | str:
    if ref is None or not str(ref).strip():
        raise ToolError(f"{action} needs the task's id (or name); list shows them")
    return ref


def _given(fields: dict[str, Any], **defaults: Any) -> dict[str, Any]:
    given = {key: value for key, value in fields.items() if value is not None}
    return {**defaults, **given}
