"""``GET /v1/flows/runs`` and ``GET /v1/flows/runs/{run_id}``: the runs of flows and workflows
saved under ``<home>/flows`` (read-only), with their steps and traces."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ...flows.checkpoints import list_runs, load_run
from ...flows.errors import FlowError, RunNotFound
from ..api_errors import ApiError
from ..bodies import query_int
from ..paging import MAX_OFFSET, limit_of, page_json, trim
from ..schemas import ANY_OBJECT, BOOL, INT, NUM, STR, nullable, obj, page_schema
from ..spec import endpoint
from ..state import blocking, state

MAX_LIMIT = 200
STATUS = {"enum": ["running", "completed", "failed"]}
RUN_SUMMARY = obj(
    {
        "run_id": STR,
        "flow": {**STR, "description": "the Flow class's name or the Workflow's"},
        "kind": {"enum": ["flow", "workflow"]},
        "status": {**STATUS, "description": "running: under way, or its process died"},
        "started": NUM,
        "finished": nullable(NUM),
        "steps": {**INT, "description": "finished steps"},
        "error": nullable(STR),
    },
    ("run_id", "flow", "status", "started", "steps"),
)
SPAN = obj(
    {
        "kind": {**STR, "description": "step, agent or wait"},
        "name": STR,
        "started": NUM,
        "finished": nullable(NUM),
        "duration": nullable(NUM),
        "ok": BOOL,
        "error": nullable(STR),
        "step": {**nullable(STR), "description": "the step it happened in"},
        "detail": {**ANY_OBJECT, "description": "an agent's task, tokens and topic_id ..."},
    }
)
STEP = obj({"name": STR, "output": {}, "trigger": nullable(STR), "started": NUM, "finished": NUM})
PENDING = obj({"step": STR, "value": {}, "trigger": nullable(STR), "cause": INT})
RUN_DETAIL = obj(
    {
        **RUN_SUMMARY["properties"],
        "steps": {"type": "array", "items": STEP, "description": "finished, in order"},
        "state": {"description": "the shared state, as saved"},
        "pending": {"type": "array", "items": PENDING, "description": "due when it stopped"},
        "joins": ANY_OBJECT,
        "fired": ANY_OBJECT,
        "output": {"description": "what the last finished step returned"},
        "failed_step": nullable(STR),
        "trace": {"type": "array", "items": SPAN},
    },
    ("run_id", "flow", "status", "steps", "trace"),
)


def folder(request: Request) -> Path:
    return state(request).runtime.config.home / "flows"


def _summaries(where: Path, offset: int, count: int) -> list[dict[str, Any]]:
    return [run.summary() for run in list_runs(where)[offset : offset + count]]


@endpoint(
    "Runs of flows and workflows, newest first",
    tag="flows",
    query={
        "limit": f"int - at most this many (default 50, up to {MAX_LIMIT})",
        "offset": f"int - runs to skip, at most {MAX_OFFSET}",
    },
    response=page_schema(RUN_SUMMARY),
    errors=(400,),
    description="Every run saved under the home's `flows/` folder; `steps` counts finished ones.",
)
async def list_flow_runs(request: Request) -> JSONResponse:
    limit = limit_of(request, 50, MAX_LIMIT)
    offset = query_int(request, "offset", 0, maximum=MAX_OFFSET)
    found = await blocking(_summaries, folder(request), offset, limit + 1)
    data, more = trim(found, limit)
    return JSONResponse(page_json(data, more))


@endpoint(
    "A run of a flow or workflow, with its steps and trace",
    tag="flows",
    response=RUN_DETAIL,
    errors=(404,),
)
async def get_flow_run(request: Request) -> JSONResponse:
    run_id = request.path_params["run_id"]
    try:
        run = await blocking(load_run, folder(request), run_id)
    except RunNotFound as exc:
        raise ApiError(404, f"no flow run {run_id!r}") from exc
    except FlowError as exc:
        raise ApiError(500, f"the checkpoint of flow run {run_id!r} cannot be read") from exc
    return JSONResponse(run.to_json())


def routes() -> list[Route]:
    return [
        Route("/v1/flows/runs", list_flow_runs, methods=["GET"]),
        Route("/v1/flows/runs/{run_id}", get_flow_run, methods=["GET"]),
    ]
