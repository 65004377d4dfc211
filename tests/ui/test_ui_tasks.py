"""The scheduled-tasks panel in real headless Chromium, against the real ``/v1/tasks`` routes and
a prompt task that runs a real turn through the scripted model."""

from __future__ import annotations

import pytest

from tests.fakes.scripted_server import Reply
from tests.ui.ui_helpers import ARTIFACTS, is_main_turn, missing_browser, open_app

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
    # the run finishes (a real turn against the scripted model), its line follows it
    first_run = panel.locator(".runs .run.ok").first
    first_run.wait_for()
    assert "ok" in first_run.inner_text()
    page.locator(".toast", has_text="morning news").wait_for()
    assert page.locator(".toast", has_text="morning news").count() == 1
    panel.locator(".panel-item button", has_text="Runs").click()
    first_run.wait_for()
    panel.locator(".panel-item button[title='Delete task']").click()
    page.click("dialog[open] .btn.danger")
    panel.locator(".list-empty").wait_for()
    assert stored_tasks(live) == []


def test_the_schedule_is_previewed_as_it_is_typed(page, live):
    open_app(page, live.url)
    page.click("#open-tasks")
    panel = page.locator("dialog[open]", has_text="Scheduled tasks")
    field = panel.locator("input[aria-label=Schedule]")
    preview = panel.locator(".schedule-preview")
    field.fill("daily:08:30")
    panel.locator(".schedule-preview.ok").wait_for()
    shown = preview.inner_text()
    assert "next:" in shown and shown.count("·") == 2  # three fire times
    assert "08:30" in shown
    field.fill("daily:25:00")
    panel.locator(".schedule-preview.error").wait_for()
    assert "hour 25 is out of range" in preview.inner_text()
    field.fill("")
    page.wait_for_function("() => !document.querySelector('.schedule-preview').textContent")
    # help: the formats under the field, what each kind does
    schedule_field = panel.locator(".field", has=page.locator("input[aria-label=Schedule]"))
    assert "interval:3600" in schedule_field.inner_text()
    assert "own session" in panel.locator(".kind-help").inner_text()
    panel.locator("select[aria-label='Task kind']").select_option("command")
    assert "exit code" in panel.locator(".kind-help").inner_text()
    assert panel.locator("textarea").get_attribute("placeholder").startswith("The command")


def test_a_shell_command_task_is_added_as_a_shell_task(page, live):
    open_app(page, live.url)
    page.click("#open-tasks")
    panel = page.locator("dialog[open]", has_text="Scheduled tasks")
    panel.locator("input[aria-label='Task name']").fill("disk")
    panel.locator("input[aria-label=Schedule]").fill("hourly:15")
    panel.locator("select[aria-label='Task kind']").select_option("command")
    panel.locator("textarea").fill("df -h")
    panel.locator("button[type=submit]").click()
    panel.locator(".panel-item", has_text="disk").wait_for()
    assert [(t["kind"], t["command"]) for t in stored_tasks(live)] == [("shell", "df -h")]
    # a refused task keeps what was typed
    panel.locator("input[aria-label='Task name']").fill("disk")
    panel.locator("input[aria-label=Schedule]").fill("hourly:15")
    panel.locator("textarea").fill("df -h")
    panel.locator("button[type=submit]").click()
    page.locator(".toast.error", has_text="already exists").wait_for()
    assert panel.locator("input[aria-label='Task name']").input_value() == "disk"


def test_run_now_returns_at_once_and_follows_the_run(page, model, live):
    model.on(is_main_turn, Reply(text="The news: all quiet.", delay=0.4, chunk_chars=2))
    with live.client() as http:
        task = {"name": "slow news", "schedule": "daily:08:30", "prompt": "Summarise the news"}
        assert http.post("/v1/tasks", json=task).status_code == 201
    open_app(page, live.url)
    page.click("#open-tasks")
    panel = page.locator("dialog[open]", has_text="Scheduled tasks")
    button = panel.locator(".panel-item button", has_text="Run now")
    button.click()
    # the run shows as running while its turn goes on; the button waits for it
    running = panel.locator(".runs .run.running")
    running.wait_for()
    assert running.locator(".spinner").count() == 1
    assert panel.locator(".panel-item button", has_text="Running…").is_disabled()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "ui-task-running.png"))
    panel.locator(".runs .run.ok").wait_for(timeout=30_000)
    page.locator(".toast", has_text="slow news").wait_for()
    assert panel.locator(".panel-item button", has_text="Run now").is_enabled()
    assert panel.locator(".runs .run").count() == 1  # the same run, now finished
