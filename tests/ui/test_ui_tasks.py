"""The scheduled-tasks panel in real headless Chromium, against the real ``/v1/tasks`` routes and
a prompt task that runs a real turn through the scripted model."""

from __future__ import annotations

import pytest

from tests.ui.ui_helpers import missing_browser, open_app

REASON = missing_browser()
if REASON:
    pytest.skip(REASON, allow_module_level=True)


def stored_tasks(live) -> list[dict]:
    with live.client() as http:
        return http.get("/v1/tasks").json()["data"]


def test_tasks_panel_adds_toggles_runs_and_deletes(page, model, model_config, start_live):
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
    # the run finishes (a real turn against the scripted model), then its runs are shown
    first_run = panel.locator(".runs .run").first
    first_run.wait_for()
    assert "ok" in first_run.inner_text()
    assert page.locator(".toast", has_text="morning news").count() == 1
    panel.locator(".panel-item button", has_text="Runs").click()
    first_run.wait_for()
    panel.locator(".panel-item button[title='Delete task']").click()
    page.click("dialog[open] .btn.danger")
    panel.locator(".list-empty").wait_for()
    assert stored_tasks(live) == []
