"""The scheduled-tasks panel in real headless Chromium.

The tasks routes arrive with the scheduler's issue; until they do, a small in-memory stand-in of
``/v1/tasks`` (the routes as that issue describes them) is registered here so the panel's code is
exercised. Once the real routes are registered the same test runs against them.
"""

from __future__ import annotations

import itertools
import time
from types import SimpleNamespace

import pytest
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tea_agent_mini.server import app as app_module
from tea_agent_mini.server.spec import endpoint
from tests.ui.ui_helpers import missing_browser, open_app

REASON = missing_browser()
if REASON:
    pytest.skip(REASON, allow_module_level=True)


def stand_in_tasks() -> SimpleNamespace:
    tasks: dict[int, dict] = {}
    runs: dict[int, list[dict]] = {}
    ids = itertools.count(1)

    @endpoint("List tasks", tag="tasks")
    async def list_tasks(request: Request) -> JSONResponse:
        return JSONResponse({"object": "list", "data": list(tasks.values())})

    @endpoint("Create a task", tag="tasks", body={"type": "object"}, status=201)
    async def create_task(request: Request) -> JSONResponse:
        body = await request.json()
        task_id = next(ids)
        tasks[task_id] = {"id": task_id, "enabled": True, "next_run_at": time.time() + 60, **body}
        return JSONResponse(tasks[task_id], status_code=201)

    @endpoint("Change a task", tag="tasks", body={"type": "object"})
    async def update_task(request: Request) -> JSONResponse:
        task = tasks[int(request.path_params["id"])]
        task.update(await request.json())
        return JSONResponse(task)

    @endpoint("Delete a task", tag="tasks")
    async def delete_task(request: Request) -> JSONResponse:
        tasks.pop(int(request.path_params["id"]))
        return JSONResponse({"deleted": True})

    @endpoint("Run a task now", tag="tasks")
    async def run_task(request: Request) -> JSONResponse:
        task_id = int(request.path_params["id"])
        now = time.time()
        runs.setdefault(task_id, []).insert(0, {"status": "ok", "started_at": now})
        return JSONResponse({"started": True})

    @endpoint("Runs of a task", tag="tasks")
    async def task_runs(request: Request) -> JSONResponse:
        return JSONResponse({"data": runs.get(int(request.path_params["id"]), [])})

    return SimpleNamespace(
        routes=lambda: [
            Route("/v1/tasks", list_tasks, methods=["GET"]),
            Route("/v1/tasks", create_task, methods=["POST"]),
            Route("/v1/tasks/{id}", update_task, methods=["PATCH"]),
            Route("/v1/tasks/{id}", delete_task, methods=["DELETE"]),
            Route("/v1/tasks/{id}/run", run_task, methods=["POST"]),
            Route("/v1/tasks/{id}/runs", task_runs, methods=["GET"]),
        ]
    )


def stored_tasks(live) -> list[dict]:
    with live.client() as http:
        return http.get("/v1/tasks").json()["data"]


def test_tasks_panel_adds_toggles_runs_and_deletes(
    page, model, model_config, start_live, monkeypatch
):
    if not any(getattr(r, "path", "") == "/v1/tasks" for r in app_module.all_routes()):
        stand_in = stand_in_tasks()
        monkeypatch.setattr(app_module, "ROUTE_MODULES", (*app_module.ROUTE_MODULES, stand_in))
    live = start_live()
    open_app(page, live.url)
    page.click("#open-tasks")
    panel = page.locator("dialog[open]", has_text="Scheduled tasks")
    panel.locator("input[aria-label='Task name']").fill("morning news")
    panel.locator("input[aria-label=Schedule]").fill("daily:08:30")
    panel.locator("textarea").fill("Summarise the news")
    panel.locator("button[type=submit]").click()
    item = panel.locator(".panel-item", has_text="morning news")
    item.wait_for()
    assert [(t["name"], t["prompt"]) for t in stored_tasks(live)] == [
        ("morning news", "Summarise the news")
    ]
    assert "daily:08:30" in item.inner_text()

    item.locator("button", has_text="Disable").click()
    panel.locator(".panel-item.disabled").wait_for()
    assert stored_tasks(live)[0]["enabled"] is False
    panel.locator(".panel-item button", has_text="Run now").click()
    panel.locator(".panel-item button", has_text="Runs").click()
    panel.locator(".runs .run").first.wait_for()
    panel.locator(".panel-item button[title='Delete task']").click()
    page.click("dialog[open] .btn.danger")
    panel.locator(".list-empty").wait_for()
    assert stored_tasks(live) == []
