"""A phone-sized screen (390×844) in real headless Chromium: nothing is wider than the screen, a
tool card with long arguments and output included, and the Tasks dialog's rows stay readable."""

from __future__ import annotations

import pytest

from tests.fakes.scripted_server import Reply, ToolCallSpec
from tests.ui.ui_helpers import ARTIFACTS, chat, missing_browser, open_app

REASON = missing_browser()
if REASON:
    pytest.skip(REASON, allow_module_level=True)

PHONE = {"width": 390, "height": 844, "is_mobile": True, "has_touch": True}
FITS = "document.documentElement.scrollWidth <= document.documentElement.clientWidth"
# the placeholder's text is narrower than the input's content box
PLACEHOLDER_FITS = """(el) => {
    const style = getComputedStyle(el);
    const context = document.createElement("canvas").getContext("2d");
    context.font = `${style.fontSize} ${style.fontFamily}`;
    const room = el.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    return context.measureText(el.placeholder).width <= room;
}"""
DEEP = "deep/" + "a_rather_long_directory_name_" * 6 + "/notes.txt"


def widest(page, selector: str) -> float:
    return page.evaluate(
        "(s) => Math.max(0, ...[...document.querySelectorAll(s)]"
        ".map((el) => el.getBoundingClientRect().right))",
        selector,
    )


def test_a_tool_card_with_long_arguments_and_output_fits_a_phone(
    page_factory, live, model, workspace
):
    (workspace / "notes.txt").write_text(
        "x" * 600 + "\n" + "a line of words that goes on " * 20 + "\n", encoding="utf-8"
    )
    model.push(
        Reply(
            tool_calls=[
                ToolCallSpec("toolkit_file", {"action": "read", "filename": "notes.txt"}),
                ToolCallSpec("toolkit_file", {"action": "read", "filename": DEEP}),
            ]
        ),
        Reply(text="Read it: `" + "y" * 120 + "`"),
    )
    page = page_factory(**PHONE)
    open_app(page, live.url)
    chat(page, "read my notes")
    cards = page.locator("details.tool")
    assert cards.count() == 2
    for index in range(2):
        cards.nth(index).locator("summary").click()
    page.locator(".tool-result").nth(1).wait_for()
    assert page.evaluate(FITS)
    assert widest(page, ".chat-log .tool, .chat-log .msg") <= 390
    log = page.locator(".chat-log")
    assert log.evaluate("el => el.scrollWidth <= el.clientWidth")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "ui-phone-tool-card.png"))


def test_the_settings_dialog_fits_a_phone(page_factory, live):
    page = page_factory(**PHONE)
    open_app(page, live.url)
    page.click("#toggle-sidebar")
    page.click("#open-settings")
    settings = page.locator("dialog[open]", has_text="Settings")
    settings.locator("button", has_text="Edit…").wait_for()
    assert settings.locator(".modal-body").evaluate("el => el.scrollWidth <= el.clientWidth")
    assert page.evaluate(FITS)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "ui-phone-settings.png"))


def test_the_tasks_dialog_fits_a_phone_and_its_rows_read_on_one_line(page_factory, live):
    with live.client() as http:
        for name, schedule in (
            ("morning news", "daily:08:30"),
            ("weekly report for the team", "cron:*/15 9-17 * * mon-fri"),
        ):
            task = {"name": name, "schedule": schedule, "prompt": "Summarise the news"}
            assert http.post("/v1/tasks", json=task).status_code == 201
    page = page_factory(**PHONE)
    open_app(page, live.url)
    page.click("#toggle-sidebar")
    page.click("#open-tasks")
    panel = page.locator("dialog[open]", has_text="Scheduled tasks")
    panel.locator(".panel-item", has_text="weekly report").wait_for()
    assert page.evaluate(FITS)
    body = panel.locator(".modal-body")
    assert body.evaluate("el => el.scrollWidth <= el.clientWidth")
    name = panel.locator(".panel-item strong", has_text="morning news")
    line = name.evaluate("el => parseFloat(getComputedStyle(el).lineHeight)")
    assert name.bounding_box()["height"] < 1.5 * line  # one line, not a letter per line
    schedule = panel.locator(".panel-item .tag", has_text="cron:")
    assert schedule.bounding_box()["width"] > 120
    for label in ("Schedule", "Task name"):
        field = panel.locator(f"input[aria-label='{label}']")
        assert field.evaluate(PLACEHOLDER_FITS), label
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "ui-phone-tasks.png"))
    panel.locator("input[aria-label=Schedule]").fill("weekly:mon,fri:09:00")
    panel.locator(".schedule-preview.ok").wait_for()
    assert body.evaluate("el => el.scrollWidth <= el.clientWidth")
    page.screenshot(path=str(ARTIFACTS / "ui-phone-tasks-form.png"))
