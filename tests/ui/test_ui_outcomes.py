"""In real headless Chromium: the sidebar lists the UI's chats by default and other sources on
request (and deletes what it lists); stopped and failed turns and tool cards look the same after
a reload as they did live."""

from __future__ import annotations

import pytest

from tests.fakes.scripted_server import Reply, ToolCallSpec
from tests.ui.ui_helpers import (
    chat,
    missing_browser,
    open_app,
    send,
    wait_turns_finished,
)

REASON = missing_browser()
if REASON:
    pytest.skip(REASON, allow_module_level=True)

SLOW = " ".join(f"part{i}" for i in range(60))


def titles(page) -> list[str]:
    return page.locator("#session-list .session-title").all_inner_texts()


def test_the_sidebar_filters_by_source_and_deletes_what_it_lists(page, live):
    with live.client() as http:
        body = {"model": "m", "messages": [{"role": "user", "content": "from a client"}]}
        for _ in range(2):
            assert http.post("/v1/chat/completions", json=body).status_code == 200
    open_app(page, live.url)
    chat(page, "from the page")
    # the sidebar shows "New chat" until the session's title arrives
    page.wait_for_function(
        "() => [...document.querySelectorAll('#session-list .session-title')]"
        ".some(e => e.textContent === 'from the page')"
    )
    assert titles(page) == ["from the page"]

    page.select_option("#session-source", "api")
    page.wait_for_function("() => document.querySelectorAll('#session-list .session').length == 2")
    assert titles(page) == ["from a client", "from a client"]
    assert page.locator("#session-list .session-source").all_inner_texts() == ["api", "api"]

    page.click("#delete-listed")
    page.click("dialog[open] .btn.danger")
    page.wait_for_selector("#session-list .list-empty")
    page.select_option("#session-source", "")
    page.wait_for_function("() => document.querySelectorAll('#session-list .session').length == 1")
    assert titles(page) == ["from the page"]
    page.reload()
    page.wait_for_selector("#app.ready")
    assert page.locator("#session-source").input_value() == ""  # the choice is remembered


def test_stopped_and_failed_turns_and_tool_cards_survive_a_reload(page, live, model, workspace):
    (workspace / "a.txt").write_text("alpha\n")
    model.push(
        Reply(
            tool_calls=[
                ToolCallSpec("toolkit_file", {"action": "read", "filename": "a.txt"}),
                ToolCallSpec("toolkit_file", {"action": "read", "filename": "missing.txt"}),
            ]
        ),
        Reply(text=SLOW, delay=0.05),
        Reply(status=400, error_message="the model refused"),
    )
    open_app(page, live.url)
    send(page, "read and tell")
    page.wait_for_function(
        "() => document.querySelector('.msg.assistant .markdown')?.textContent.includes('part3')"
    )
    page.click("#stop")
    wait_turns_finished(page, 1)
    chat(page, "again")
    live_view = page.locator(".chat-log").inner_html()
    assert "the model refused" in live_view

    page.reload()
    page.wait_for_selector("#app.ready")
    page.wait_for_function("() => document.querySelectorAll('.chat-log .turn').length == 2")
    first, second = page.locator(".chat-log .turn").all()
    cards = first.locator("details.tool")
    assert cards.count() == 2
    assert "ok" in cards.nth(0).get_attribute("class")
    assert "failed" in cards.nth(1).get_attribute("class")
    assert cards.nth(0).locator(".tool-time").inner_text().endswith(" s")
    partial = first.locator(".markdown").last.inner_text()
    assert partial.startswith("part0 part1 part2") and "part59" not in partial
    assert first.locator(".notice.cancelled").inner_text() == "Stopped: the turn was stopped"
    assert "the model refused" in second.locator(".notice.error").inner_text()
