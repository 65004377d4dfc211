"""Scheduled tasks over REST: list, add, read, change, delete, run now, run history, and
``GET /v1/tasks/preview`` (a schedule's next fire times, nothing saved).

Every call goes through :class:`~tea_agent_mini.scheduler.service.TaskService`, the facade the
tool and the CLI use, so a task is validated the same way whoever makes it. Store work runs in
worker threads; "run now" goes through the scheduler the server started (``runtime.scheduler``),
so a manual run and a scheduled one of the same task never overlap.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ..api_errors import ApiError
from ..bodies import Fields, path_id, query_bool, query_int, read_json
from ..paging import MAX_ID, MAX_OFFSET, limit_of, page_json, trim
from ..spec import endpoint
from ..state import ServerState, blocking, state
from .task_views import (
    PREVIEW_SCHEMA,
    RUN_LIST,
    RUN_SCHEMA,
    TASK_ADD,
    TASK_DELETED,
    TASK_LIST,
    TASK_PATCH,
    TASK_SCHEMA,
    preview_json,
    run_json,
    task_json,
)

if TYPE_CHECKING:
    from ...scheduler.service import TaskService

T = TypeVar("T")

KINDS = {"shell": "shell", "command": "shell", "prompt": "prompt"}
ADD_FIELDS: tuple[str, ...] = ("name", "kind", "schedule", "tz", "command", "prompt")
ADD_FIELDS += ("enabled", "timeout", "grace_seconds", "notify")
PATCH_FIELDS = ADD_FIELDS
COMMAND_LIMIT = 8000
PROMPT_LIMIT = 20000
PREVIEW_MAX = 50
TASKS_DEFAULT = 100
TASKS_MAX = 500
RUNS_MAX = 200

# -- input checks -----------------------------------------------------------------------------


def translate(exc: Exception) -> ApiError | None:
    """The HTTP error for a scheduler exception: 404 unknown task, 409 busy, 400 invalid."""
    from ...scheduler.cron import ScheduleError
    from ...scheduler.errors import TaskBusy, TaskError, TaskNotFound

    if isinstance(exc, TaskNotFound):
        return ApiError(404, str(exc))
    if isinstance(exc, TaskBusy):
        return ApiError(409, str(exc))
    if isinstance(exc, (TaskError, ScheduleError)):
        return ApiError(400, str(exc))
    return None


async def guarded(work: Awaitable[T]) -> T:
    """``await work`` with its scheduler errors turned into API errors."""
    try:
        return await work
    except Exception as exc:
        error = translate(exc)
        if error is None:
            raise
        raise error from exc


async def call(func: Callable[..., T], *args: Any) -> T:
    """``func(*args)`` in a worker thread, its scheduler errors turned into API errors."""
    return await guarded(blocking(func, *args))


def _check_known(body: Fields, allowed: tuple[str, ...]) -> None:
    unknown = sorted(set(body.data) - set(allowed))
    if unknown:
        raise ApiError(400, f"unknown field(s) {', '.join(unknown)}; expected {', '.join(allowed)}")


def _seconds(body: Fields, name: str) -> float | None:
    value = body.raw(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ApiError(400, f"field '{name}': expected a number of seconds, got {value!r}")
    return float(value)


def _kind(body: Fields) -> str | None:
    kind = body.text("kind")
    if kind is None:
        return None
    if kind.strip().lower() not in KINDS:
        raise ApiError(400, f"field 'kind': expected shell, command or prompt, got {kind!r}")
    return KINDS[kind.strip().lower()]


def task_fields(body: Fields, *, creating: bool) -> dict[str, Any]:
    """The keyword arguments of ``TaskService.add`` / ``update`` from a checked body (without
    ``enabled``, which the routes handle)."""
    _check_known(body, ADD_FIELDS if creating else PATCH_FIELDS)
    fields: dict[str, Any] = {
        "name": body.text("name", required=creating),
        "schedule": body.text("schedule", required=creating),
        "kind": _kind(body),
        "command": body.text("command", max_length=COMMAND_LIMIT),
        "prompt": body.text("prompt", max_length=PROMPT_LIMIT),
        "tz": body.text("tz"),
        "timeout": _seconds(body, "timeout"),
        "grace_seconds": _seconds(body, "grace_seconds"),
    }
    if not creating and "tz" in body and fields["tz"] is None:
        fields["tz"] = ""  # null: back to the local zone ("" reaches the service, None not)
    if body.raw("notify") is not None:
        fields["notify"] = body.flag("notify")
    return {name: value for name, value in fields.items() if value is not None}


# -- routes -----------------------------------------------------------------------------------


def service(st: ServerState) -> TaskService:
    from ...scheduler.service import TaskService

    # the runtime carries the scheduler the lifespan started; run_now goes through it
    return TaskService(st.store, runtime=st.runtime)


def _list(svc: TaskService, query: str | None, limit: int, offset: int = 0) -> list[dict[str, Any]]:
    now = svc.clock.now()
    # described (the schedule parsed) only for the page returned
    return [task_json(task, now) for task in svc.matching(query)[offset : offset + limit]]


def search_tasks(st: ServerState, query: str, limit: int) -> list[dict[str, Any]]:
    """Tasks whose name, command or prompt contains ``query`` (for ``/v1/search``; blocking)."""
    return _list(service(st), query, limit)


@endpoint(
    "List scheduled tasks",
    tag="tasks",
    query={
        "q": "str - only tasks whose name, command or prompt contains this text",
        "limit": f"int - at most {TASKS_MAX} (default {TASKS_DEFAULT})",
        "offset": f"int - tasks to skip, at most {MAX_OFFSET}",
    },
    response=TASK_LIST,
    errors=(400,),
    description="In id order (oldest first); `has_more` says more follow at offset + limit.",
)
async def list_tasks(request: Request) -> JSONResponse:
    query = (request.query_params.get("q") or "").strip()
    if len(query) > 500:
        raise ApiError(400, "query parameter 'q' is longer than 500 characters")
    limit = limit_of(request, TASKS_DEFAULT, TASKS_MAX)
    offset = query_int(request, "offset", 0, maximum=MAX_OFFSET)
    found = await call(_list, service(state(request)), query or None, limit + 1, offset)
    data, more = trim(found, limit)
    return JSONResponse(page_json(data, more))


def _add(svc: TaskService, fields: dict[str, Any]) -> dict[str, Any]:
    task = svc.add(fields.pop("name"), fields.pop("schedule"), **fields)
    return task_json(task, svc.clock.now())


@endpoint(
    "Add a scheduled task",
    tag="tasks",
    body=TASK_ADD,
    response=TASK_SCHEMA,
    status=201,
    errors=(400, 403),
    description=(
        "A shell task needs `command`, a prompt task `prompt`; `kind` defaults from which is "
        "given. The schedule must parse and fire again after now (else 400 saying why). "
        "Under `agent.approval: never` shell tasks are refused (403), and existing ones do "
        "not run."
    ),
)
async def add_task(request: Request) -> JSONResponse:
    body = await read_json(request)
    fields = task_fields(body, creating=True)
    if fields.get("kind") == "shell" or (fields.get("kind") is None and fields.get("command")):
        _check_shell_allowed(request)
    fields["enabled"] = body.flag("enabled", True)
    task = await call(_add, service(state(request)), fields)
    return JSONResponse(task, status_code=201)


def _check_shell_allowed(request: Request) -> None:
    """Read-only mode refuses shell commands on every path, scheduled ones included."""
    from ...scheduler.execute import shell_task_decision

    decision = shell_task_decision(state(request).runtime.config.agent.approval)
    if not decision.runs:
        raise ApiError(403, decision.reason)


def _get(svc: TaskService, ident: int) -> dict[str, Any]:
    return task_json(svc.get(ident), svc.clock.now())


@endpoint("Get a scheduled task", tag="tasks", response=TASK_SCHEMA, errors=(404,))
async def get_task(request: Request) -> JSONResponse:
    return JSONResponse(await call(_get, service(state(request)), path_id(request, "task")))


def _update(
    svc: TaskService, ident: int, fields: dict[str, Any], enabled: bool | None
) -> dict[str, Any]:
    task = svc.get(ident)
    if fields:
        task = svc.update(task.id, **fields)
    if enabled is not None:
        task = svc.set_enabled(task.id, enabled)
    return task_json(task, svc.clock.now())


@endpoint(
    "Change a scheduled task",
    tag="tasks",
    body=TASK_PATCH,
    response=TASK_SCHEMA,
    errors=(400, 403, 404),
    description=(
        "Only the fields sent change. A new schedule or zone, and enabling, reschedule from "
        "now (missed runs are not caught up); `tz: null` returns to local time."
    ),
)
async def update_task(request: Request) -> JSONResponse:
    ident = path_id(request, "task")
    body = await read_json(request)
    fields = task_fields(body, creating=False)
    if fields.get("command") is not None or fields.get("kind") == "shell":
        _check_shell_allowed(request)
    enabled = body.flag("enabled") if body.raw("enabled") is not None else None
    if not fields and enabled is None:
        raise ApiError(400, f"nothing to change: send one of {', '.join(PATCH_FIELDS)}")
    task = await call(_update, service(state(request)), ident, fields, enabled)
    return JSONResponse(task)


@endpoint(
    "Delete a scheduled task",
    tag="tasks",
    response=TASK_DELETED,
    errors=(404,),
    description="The task and its run history; a prompt task's session is kept.",
)
async def delete_task(request: Request) -> JSONResponse:
    ident = path_id(request, "task")
    await call(service(state(request)).delete, ident)
    return JSONResponse({"id": ident, "object": "task", "deleted": True})


@endpoint(
    "Run a scheduled task now",
    tag="tasks",
    query={"wait": "bool - false: answer 202 as soon as the run has started (default true)"},
    response=RUN_SCHEMA,
    errors=(400, 404, 409),
    description=(
        "Runs the task at once, whatever its schedule or enabled flag, and answers with the "
        "finished run; with `wait=false`, with the started run (202, status `running`), whose "
        "progress `GET /v1/tasks/{id}/runs` shows. 409 while a run of it is in progress: runs "
        "never overlap."
    ),
)
async def run_task(request: Request) -> JSONResponse:
    ident = path_id(request, "task")
    wait = query_bool(request, "wait", True)
    svc = service(state(request))
    if not wait:
        run = await guarded(svc.astart_now(ident))
        return JSONResponse(run_json(run), status_code=202)
    # shielded: a client that stops waiting does not cancel the run, which is recorded anyway
    run = await guarded(asyncio.shield(svc.arun_now(ident)))
    return JSONResponse(run_json(run))


@endpoint(
    "Runs of a scheduled task",
    tag="tasks",
    query={
        "limit": f"int - at most {RUNS_MAX} (default 20)",
        "before": "int - only runs with a lower id (the page after the last one shown)",
    },
    response=RUN_LIST,
    errors=(400, 404),
    description=(
        "Newest first, including missed and skipped occurrences; `has_more` says older ones "
        "exist (ask again with `before` = the id of the last run of this page)."
    ),
)
async def task_runs(request: Request) -> JSONResponse:
    ident = path_id(request, "task")
    limit = limit_of(request, 20, RUNS_MAX)
    before = query_int(request, "before", 0, minimum=1, maximum=MAX_ID) or None
    svc = service(state(request))
    found = await call(svc.history, ident, limit + 1, before)
    runs, more = trim(found, limit)
    return JSONResponse(page_json([run_json(run) for run in runs], more))


@endpoint(
    "Try a schedule",
    tag="tasks",
    query={
        "schedule": "str - the schedule text, e.g. weekly:mon:09:00 (required)",
        "tz": "str - an IANA time zone (default: local time)",
        "count": f"int - how many fire times, at most {PREVIEW_MAX} (default 5)",
    },
    response=PREVIEW_SCHEMA,
    errors=(400,),
    description="The schedule in words and its next fire times from now; nothing is saved.",
)
async def preview_schedule(request: Request) -> JSONResponse:
    params = request.query_params
    schedule = (params.get("schedule") or "").strip()
    if not schedule:
        raise ApiError(400, "query parameter 'schedule' is required")
    count = query_int(request, "count", 5, minimum=1, maximum=PREVIEW_MAX)
    svc = service(state(request))
    preview = await call(svc.preview, schedule, params.get("tz") or None, count)
    return JSONResponse(preview_json(preview))


def routes() -> list[Route]:
    return [
        Route("/v1/tasks", list_tasks, methods=["GET"]),
        Route("/v1/tasks", add_task, methods=["POST"]),
        # before /{id}, which would otherwise take "preview" for an id
        Route("/v1/tasks/preview", preview_schedule, methods=["GET"]),
        Route("/v1/tasks/{id}", get_task, methods=["GET"]),
        Route("/v1/tasks/{id}", update_task, methods=["PATCH"]),
        Route("/v1/tasks/{id}", delete_task, methods=["DELETE"]),
        Route("/v1/tasks/{id}/run", run_task, methods=["POST"]),
        Route("/v1/tasks/{id}/runs", task_runs, methods=["GET"]),
    ]
