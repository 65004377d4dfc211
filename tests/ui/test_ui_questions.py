"""Tools reaching the user in real headless Chromium: a toolkit_question card answered by a click
(and shown again after a reload), an approval card, a toolkit_notify toast and the notices bell."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.scripted_server import Reply, ToolCallSpec
from tests.ui.ui_helpers import (
    ARTIFACTS,
    answer_text,
    missing_browser,
    open_app,
    send,
    wait_turns_finished,
)

REASON = missing_browser()
if REASON:
    pytest.skip(REASON, allow_module_level=True)

ASK = {"question": "Which colour?", "choices": ["red", "green"], "default": "red", "timeout": 60}


def tool_output(model) -> str:
    """What the tool told the model (the last tool message the scripted model received)."""
    messages = [m for r in model.requests for m in r.get("messages", []) if m["role"] == "tool"]
    return messages[-1]["content"]


def test_question_is_answered_by_clicking_a_choice(page, live, model):
    model.push(
        Reply(tool_calls=[ToolCallSpec("toolkit_question", ASK)]), Reply(text="Green it is.")
    )
    open_app(page, live.url)
    send(page, "paint it")
    card = page.locator(".question.open")
    card.wait_for()
    assert card.locator(".question-text").inner_text() == "Which colour?"
    assert card.locator(".question-choice").all_inner_texts() == ["red", "green"]
    assert "left to answer" in card.inner_text() and "default: red" in card.inner_text()

    page.reload()  # a re-attached stream shows the still open question again
    page.wait_for_selector("#app.ready")
    card = page.locator(".question.open")
    card.wait_for()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "ui-question.png"))
    card.get_by_role("button", name="green").click()

    wait_turns_finished(page, 1)
    answered = page.locator(".question.answered")
    assert answered.locator(".question-status").inner_text() == "Answered: green"
    assert page.locator(".question .question-choice").count() == 0
    assert "Green it is." in answer_text(page)
    assert tool_output(model) == "The user answered: green"


def test_typed_answer_to_a_question_without_choices(page, live, model):
    ask = {"question": "Your name?", "timeout": 60}
    model.push(Reply(tool_calls=[ToolCallSpec("toolkit_question", ask)]), Reply(text="Hi."))
    open_app(page, live.url)
    send(page, "greet me")
    card = page.locator(".question.open")
    card.wait_for()
    assert card.locator(".question-choice").count() == 0
    card.locator(".question-input").fill("Ada")
    card.locator(".question-input").press("Enter")
    wait_turns_finished(page, 1)
    assert page.locator(".question-status").inner_text() == "Answered: Ada"
    assert tool_output(model) == "The user answered: Ada"


def test_notice_shows_a_toast_and_the_bell_counts_it(
    page, live, model, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    empty = tmp_path / "no-bin"  # no notify-send or osascript: the notice is stored
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    notify = {"title": "Backup done", "message": "3 files saved", "urgency": "normal"}
    model.push(Reply(tool_calls=[ToolCallSpec("toolkit_notify", notify)]), Reply(text="Done."))
    open_app(page, live.url)
    bell = page.locator("#notices")
    assert bell.is_visible() and not page.locator("#notices .badge").is_visible()
    send(page, "back it up")
    toast = page.locator(".toast", has_text="Backup done: 3 files saved")
    toast.wait_for()
    wait_turns_finished(page, 1)
    assert "Backup done: 3 files saved" in page.locator(".notice.notify").inner_text()
    page.wait_for_function("() => document.querySelector('#notices .badge')?.textContent === '1'")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "ui-notices.png"))

    bell.click()
    item = page.locator(".notice-item")
    assert item.count() == 1 and "3 files saved" in item.inner_text()
    page.keyboard.press("Escape")
    page.wait_for_function("() => document.querySelector('#notices .badge').hidden")


def test_approval_card_allows_then_denies(page, live, model, workspace: Path):
    with live.client() as http:
        assert http.patch("/v1/config", json={"agent": {"approval": "ask"}}).status_code == 200
    for name in ("yes.txt", "no.txt"):
        write = {"action": "write", "filename": name, "content": "x"}
        model.push(Reply(tool_calls=[ToolCallSpec("toolkit_file", write)]), Reply(text="Ok."))
    open_app(page, live.url)
    send(page, "write yes.txt")
    card = page.locator(".question.approval.open")
    card.wait_for()
    assert card.locator(".question-text").inner_text() == "Allow toolkit_file to run?"
    assert '"filename": "yes.txt"' in card.locator(".question-call").inner_text()
    assert card.locator(".question-input").count() == 0
    assert "denied if nobody answers" in card.inner_text()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "ui-approval.png"))
    card.get_by_role("button", name="Allow").click()
    wait_turns_finished(page, 1)
    assert page.locator(".question.approval .question-status").inner_text() == "Allowed"
    assert (workspace / "yes.txt").exists()

    send(page, "write no.txt")
    page.locator(".question.approval.open").get_by_role("button", name="Deny").click()
    wait_turns_finished(page, 2)
    assert page.locator(".question.approval .question-status").last.inner_text() == "Denied"
    assert not (workspace / "no.txt").exists()
    assert "declined" in tool_output(model)
