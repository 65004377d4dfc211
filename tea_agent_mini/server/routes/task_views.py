"""The JSON shapes of scheduled tasks, their runs and schedule previews on the REST API, with
the OpenAPI schemas that describe them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..schemas import BOOL, INT, NUM, STR, nullable, obj, page_schema

if TYPE_CHECKING:
    from ...scheduler.service import Preview
    from ...store.tasks import Task, TaskRun

TASK_SCHEMA = obj(
    {
        "id": INT,
        "object": {"const": "task"},
        "name": STR,
        "kind": {"enum": ["shell", "prompt"]},
        "schedule": {**STR, "description": "kind:spec, e.g. daily:08:30 or cron:*/5 * * * *"},
        "tz": {**nullable(STR), "description": "IANA zone; null: the server's local time"},
        "description": {**STR, "description": "the schedule in words"},
        "command": nullable(STR),
        "prompt": nullable(STR),
        "enabled": BOOL,
        "running": {**BOOL, "description": "a run is in progress (here or in another process)"},
        "next_run_at": nullable(NUM),
        "last_run_at": nullable(NUM),
        "last_status": nullable(STR),
        "grace_seconds": NUM,
        "timeout": NUM,
        "notify": BOOL,
        "session_id": {**nullable(STR), "description": "a prompt task's own session"},
        "created": NUM,
        "updated": NUM,
    },
    ("id", "name", "kind", "schedule", "enabled"),
)
TASK_LIST = page_schema(TASK_SCHEMA)
_FIELDS = {
    "name": {**STR, "maxLength": 80},
    "kind": {"enum": ["shell", "prompt", "command"], "description": "command means shell"},
    "schedule": {
        **STR,
        "description": "once:ISO-8601, interval:SECONDS, hourly:MM, daily:HH:MM, "
        "weekly:mon:HH:MM or cron:m h dom mon dow (a trailing tz=Zone sets the zone)",
    },
    "tz": {**nullable(STR), "description": "IANA zone such as Europe/Berlin"},
    "command": {**STR, "description": "the shell command (kind shell)"},
    "prompt": {**STR, "description": "what to ask the agent (kind prompt)"},
    "enabled": BOOL,
    "timeout": {**NUM, "description": "seconds, 1 to 21600 (default 300)"},
    "grace_seconds": {**NUM, "description": "how late a missed run may still start (600)"},
    "notify": {**BOOL, "description": "tell the user how each run went"},
}
TASK_ADD = obj(_FIELDS, ("name", "schedule"))
TASK_PATCH = obj(_FIELDS)
TASK_DELETED = obj({"id": INT, "object": {"const": "task"}, "deleted": BOOL})
RUN_SCHEMA = obj(
    {
        "id": INT,
        "object": {"const": "task.run"},
        "task_id": INT,
        "status": {"enum": ["running", "ok", "failed", "missed", "timeout", "skipped"]},
        "scheduled_for": nullable(NUM),
        "started_at": nullable(NUM),
        "ended_at": nullable(NUM),
        "duration": nullable(NUM),
        "exit_code": nullable(INT),
        "output": {**STR, "description": "stdout and stderr, or the agent's answer (capped)"},
        "error": nullable(STR),
        "session_id": nullable(STR),
    },
    ("id", "task_id", "status"),
)
RUN_LIST = page_schema(RUN_SCHEMA)
PREVIEW_SCHEMA = obj(
    {
        "object": {"const": "task.schedule"},
        "schedule": STR,
        "tz": nullable(STR),
        "description": STR,
        "next": {"type": "array", "items": {**STR, "format": "date-time"}},
        "next_at": {"type": "array", "items": NUM},
    }
)


def task_json(task: Task, now: float) -> dict[str, Any]:
    from ...scheduler.schedules import ScheduleError, parse_schedule

    try:
        description = parse_schedule(task.schedule, task.tz).describe()
    except ScheduleError:
        description = task.schedule
    return {
        "id": task.id,
        "object": "task",
        "name": task.name,
        "kind": task.kind,
        "schedule": task.schedule,
        "tz": task.tz,
        "description": description,
        "command": task.command,
        "prompt": task.prompt,
        "enabled": task.enabled,
        "running": task.lease_until > now,
        "next_run_at": task.next_run_at,
        "last_run_at": task.last_run_at,
        "last_status": task.last_status,
        "grace_seconds": task.grace_seconds,
        "timeout": task.timeout,
        "notify": task.notify,
        "session_id": task.topic_id,
        "created": task.created_at,
        "updated": task.updated_at,
    }


def run_json(run: TaskRun) -> dict[str, Any]:
    return {
        "id": run.id,
        "object": "task.run",
        "task_id": run.task_id,
        "status": run.status,
        "scheduled_for": run.scheduled_for,
        "started_at": run.started_at,
        "ended_at": run.ended_at,
        "duration": run.duration,
        "exit_code": run.exit_code,
        "output": run.output,
        "error": run.error,
        "session_id": run.topic_id,
    }


def preview_json(preview: Preview) -> dict[str, Any]:
    schedule = preview.schedule
    return {
        "object": "task.schedule",
        "schedule": f"{schedule.kind}:{schedule.spec}",
        "tz": schedule.tz,
        "description": schedule.describe(),
        "next": [moment.isoformat() for moment in preview.times],
        "next_at": [moment.timestamp() for moment in preview.times],
    }
