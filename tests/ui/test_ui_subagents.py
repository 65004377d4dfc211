"""Subagents in the chat (issue 15), in real headless Chromium: the subagent card streams its
child's tool calls and text, links to the child's session, and is shown again after a reload,
during the turn (replayed events) and after it (stored messages)."""

from __future__ import annotations

import threading

import pytest

from tests.fakes.scripted_server import Reply, ToolCallSpec
from tests.ui.ui_helpers import missing_browser, open_app, send, wait_turns_finished

REASON = missing_browser()
if REASON:
    pytest.skip(REASON, allow_module_level=True)

CHILD_ANSWER = "The notes are in notes.md, two lines."


def is_explorer(request: dict) -> bool:
    first = request["messages"][0]
    return first["role"] == "system" and "You are the explorer" in first["content"]


def script(model, gate: threading.Event | None = None) -> None:
    """The parent hands a task to the explorer, which globs and then answers slowly."""

    def explorer(request: dict) -> Reply:
        if not any(m["role"] == "tool" for m in request["messages"]):
            glob = ToolCallSpec("toolkit_glob", {"pattern": "*.md"})
            return Reply(tool_calls=[glob], prompt_tokens=480, completion_tokens=20)
        if gate is not None:
            gate.wait(10)
        return Reply(text=CHILD_ANSWER, delay=0.08, prompt_tokens=900, completion_tokens=100)

    model.on(is_explorer, explorer)
    task = {"task": "find the notes", "agent": "explorer"}
    model.push(
        Reply(tool_calls=[ToolCallSpec("toolkit_subagent", task)]), Reply(text="Found: notes.md")
    )


def active_tab(page) -> str:
    return page.evaluate("() => document.querySelector('.tab.active')?.dataset.id || ''")


def test_the_subagent_card_streams_the_child_and_opens_its_session(page, live, model, workspace):
    (workspace / "notes.md").write_text("one\ntwo\n")
    script(model)
    open_app(page, live.url)
    before = send(page, "where are my notes?")
    # running: the child's tool call is listed and its text streams in
    page.wait_for_function(
        """() => {
            const sub = document.querySelector('.subagents .sub.running');
            const text = sub && sub.querySelector('.sub-text').textContent;
            return text && text.length < 37 && sub.querySelector('.sub-tool.ok');
        }"""
    )
    card = page.locator(".subagents .sub")
    assert card.locator(".sub-head b").inner_text() == "explorer"
    assert "toolkit_glob pattern=*.md" in card.locator(".sub-tool").inner_text()
    wait_turns_finished(page, before + 1)
    assert card.get_attribute("class") == "sub done"
    assert card.locator(".sub-text").inner_text() == CHILD_ANSWER
    assert card.locator(".sub-meta").inner_text() == "1.5k tokens"
    # the parent's own card comes before it, its answer after
    assert page.locator(".tool .tool-name").inner_text() == "toolkit_subagent"
    assert "Found: notes.md" in page.locator(".msg.assistant .markdown").last.inner_text()

    parent = active_tab(page)
    child = card.locator(".sub-link").get_attribute("data-session")
    assert child and child != parent
    # the child's session is not among the sidebar's chats, but the link opens it
    assert page.locator(f"#session-list [data-id='{child}']").count() == 0
    card.locator(".sub-link").click()
    page.wait_for_function(
        "(id) => document.querySelector('.tab.active')?.dataset.id === id", arg=child
    )
    shown = page.locator(f".chat-log[data-session='{child}']")
    shown.locator(".msg.assistant", has_text=CHILD_ANSWER).wait_for()
    assert "Subagent explorer" in shown.locator(".chat-origin").inner_text()
    shown.locator(".chat-origin a").click()  # and back to the conversation that started it
    page.wait_for_function(
        "(id) => document.querySelector('.tab.active')?.dataset.id === id", arg=parent
    )

    # after a reload the finished turn is rebuilt from the stored messages: the child's summary
    page.reload()
    page.wait_for_selector("#app.ready")
    stored = page.locator(f".chat-log[data-session='{parent}'] .subagents .sub")
    stored.wait_for()
    assert stored.get_attribute("class") == "sub done"
    assert stored.locator(".sub-meta").inner_text().startswith("1 tool calls · 1,500 tokens · ")
    assert stored.locator(".sub-link").get_attribute("data-topic-prefix") == child[:8]
    stored.locator(".sub-link").click()  # found among the parent's children
    page.wait_for_function(
        "(id) => document.querySelector('.tab.active')?.dataset.id === id", arg=child
    )


def test_a_reload_during_the_turn_shows_the_running_subagent_again(page, live, model, workspace):
    gate = threading.Event()
    script(model, gate)
    open_app(page, live.url)
    try:
        before = send(page, "where are my notes?")
        page.locator(".subagents .sub.running .sub-tool").wait_for()
        page.reload()
        page.wait_for_selector("#app.ready")
        # the running turn is replayed from its events: the child's card and its tool call
        running = page.locator(".subagents .sub.running")
        running.locator(".sub-tool", has_text="toolkit_glob").wait_for()
        assert page.locator(".subagents .sub").count() == 1
    finally:
        gate.set()
    wait_turns_finished(page, before + 1)
    card = page.locator(".subagents .sub")
    assert card.get_attribute("class") == "sub done"
    assert card.locator(".sub-text").inner_text() == CHILD_ANSWER
