"""Sessions in real headless Chromium: tabs that keep streaming in the background, rename, delete,
filter, the queue, re-attaching after a reload, the search dialog."""

from __future__ import annotations

import pytest

from tests.fakes.script import without_context_block
from tests.fakes.scripted_server import Reply
from tests.ui.ui_helpers import (
    answer_text,
    chat,
    missing_browser,
    new_chat,
    open_app,
    send,
    wait_turns_finished,
)

REASON = missing_browser()
if REASON:
    pytest.skip(REASON, allow_module_level=True)

SLOW = " ".join(f"part{i}" for i in range(40))  # 40 words, streamed 4 characters at a time


def session_titles(page) -> list[str]:
    return page.locator("#session-list .session-title").all_inner_texts()


def test_a_session_keeps_streaming_while_another_is_shown(page, live, model):
    model.push(Reply(text=SLOW, delay=0.03))
    open_app(page, live.url)
    send(page, "slow one")
    page.wait_for_selector(".msg.assistant .markdown")
    first_id = page.locator(".tab.active").get_attribute("data-id")
    assert page.locator(".tab.active .spinner").count() == 1

    new_chat(page)
    chat(page, "quick one")
    assert answer_text(page) == "echo: quick one"
    assert page.locator(".tab").count() == 2

    page.click(f".tab[data-id='{first_id}'] .tab-open")
    wait_turns_finished(page, 1)
    assert answer_text(page) == SLOW
    assert page.locator(".msg.user").all_inner_texts() == ["slow one"]
    assert sorted(session_titles(page)) == ["quick one", "slow one"]

    # the list switches too, and closing a tab leaves the session in the list
    page.locator("#session-list .session-open", has_text="quick one").click()
    page.wait_for_function("() => document.querySelector('.msg.user').textContent === 'quick one'")
    page.click(".tab.active .tab-close")
    assert page.locator(".tab").count() == 1
    assert len(session_titles(page)) == 2


def test_rename_filter_and_delete_sessions(page, live, model):
    open_app(page, live.url)
    chat(page, "about apples")
    new_chat(page)
    chat(page, "about pears")
    page.wait_for_function("() => document.querySelectorAll('#session-list .session').length === 2")

    item = page.locator("#session-list .session", has_text="about apples")
    item.hover()
    item.locator("button[title=Rename]").click()
    page.fill(".rename-input", "Orchard notes")
    page.press(".rename-input", "Enter")
    page.wait_for_function(
        """() => [...document.querySelectorAll('.session-title')]
            .some(e => e.textContent === 'Orchard notes')"""
    )

    page.fill("#session-filter", "orchard")
    page.wait_for_function("() => document.querySelectorAll('#session-list .session').length === 1")
    assert session_titles(page) == ["Orchard notes"]
    page.fill("#session-filter", "")
    page.wait_for_function("() => document.querySelectorAll('#session-list .session').length === 2")

    item = page.locator("#session-list .session", has_text="about pears")
    item.hover()
    item.locator("button[title=Delete]").click()
    page.click("dialog[open] .btn.danger")
    page.wait_for_function("() => document.querySelectorAll('#session-list .session').length === 1")
    assert session_titles(page) == ["Orchard notes"]
    assert page.locator(".tab").count() == 1
    with live.client() as http:
        assert [s["title"] for s in http.get("/v1/sessions").json()["data"]] == ["Orchard notes"]


def test_messages_sent_while_busy_wait_in_a_cancellable_queue(page, live, model):
    model.push(Reply(text=SLOW, delay=0.03), Reply(text="third answer"))
    open_app(page, live.url)
    send(page, "first")
    page.wait_for_selector(".msg.assistant .markdown")
    send(page, "second")
    page.wait_for_function("() => document.querySelectorAll('#queue .queue-item').length === 1")
    send(page, "third")
    page.wait_for_function("() => document.querySelectorAll('#queue .queue-item').length === 2")
    rows = page.locator("#queue .queue-item")
    assert rows.locator(".queue-pos").all_inner_texts() == ["#1", "#2"]
    assert rows.locator(".queue-text").all_inner_texts() == ["second", "third"]

    rows.filter(has_text="second").locator("button").click()
    page.wait_for_function("() => document.querySelectorAll('#queue .queue-item').length === 1")
    assert page.locator("#queue .queue-pos").inner_text() == "#1"

    wait_turns_finished(page, 2)
    assert page.locator("#queue").is_hidden()
    assert page.locator(".msg.user").all_inner_texts() == ["first", "third"]
    assert answer_text(page) == "third answer"
    sent = [r["messages"][-1]["content"] for r in model.requests if r.get("tools")]
    texts = [without_context_block(text) for text in sent]
    assert texts == ["first", "third"]


def test_reload_mid_turn_reattaches_and_the_answer_continues(page, live, model):
    model.push(Reply(text=SLOW, delay=0.045))
    open_app(page, live.url)
    send(page, "tell me slowly")
    page.wait_for_function(
        "() => document.querySelector('.msg.assistant .markdown')?.textContent.includes('part3')"
    )
    page.reload()
    page.wait_for_selector("#app.ready")
    # the turn is still running after the reload, and shows what it had said before it
    page.wait_for_function(
        """() => !document.querySelector('#stop').hidden
            && document.querySelector('.msg.assistant .markdown')?.textContent.includes('part1')"""
    )
    assert "part39" not in answer_text(page)
    wait_turns_finished(page, 1)
    assert answer_text(page) == SLOW
    assert page.locator(".msg.user").all_inner_texts() == ["tell me slowly"]
    marks = page.evaluate(
        "() => Object.keys(sessionStorage).filter(k => k.startsWith('tea.events.'))"
    )
    assert len(marks) == 1

    page.reload()
    page.wait_for_selector("#app.ready")
    wait_turns_finished(page, 1)
    assert answer_text(page) == SLOW  # from the stored messages now
    assert page.locator(".turn").count() == 1


def test_search_dialog_finds_messages_and_opens_their_session(page, live, model):
    open_app(page, live.url)
    chat(page, "the marmalade recipe")
    new_chat(page)
    chat(page, "something else")
    page.keyboard.press("Control+k")
    page.fill(".search-input", "marmalade")
    hit = page.locator(".search-dialog .search-hit", has_text="marmalade").first
    hit.wait_for()
    groups = page.locator(".search-group h3").all_text_contents()
    assert "Messages" in groups and "Sessions" in groups
    page.locator(".search-group", has_text="Messages").locator(".search-hit").first.click()
    page.wait_for_selector(".search-dialog", state="detached")
    page.wait_for_function(
        "() => document.querySelector('.msg.user')?.textContent === 'the marmalade recipe'"
    )
    assert page.locator(".tab.active .tab-title").inner_text() == "the marmalade recipe"


def test_search_hits_name_their_session(page, live, model):
    open_app(page, live.url)
    chat(page, "garden plans")
    chat(page, "plant quinces by the wall")
    page.keyboard.press("Control+k")
    page.fill(".search-input", "quinces")
    hit = page.locator(".search-group", has_text="Messages").locator(".search-hit").first
    hit.wait_for()
    assert page.locator(".search-group h3").all_text_contents() == ["Messages"]
    assert hit.locator(".hit-session").inner_text() == "in “garden plans”"


def test_a_new_page_opens_the_newest_chat_not_a_tasks_session(page_factory, live, model):
    page = page_factory()
    open_app(page, live.url)
    chat(page, "my own chat")
    mine = page.evaluate("() => document.querySelector('.tab.active').dataset.id")
    with live.client() as http:  # a task runs afterwards: its session is the newest
        task = {"name": "news", "schedule": "daily:08:30", "prompt": "Summarise the news"}
        created = http.post("/v1/tasks", json=task).json()
        run = http.post(f"/v1/tasks/{created['id']}/run").json()
        newest = http.get("/v1/sessions?limit=1").json()["data"][0]
    assert newest["id"] == run["session_id"] != mine
    fresh = page_factory()  # a new tab: nothing open yet (the sidebar lists every source)
    fresh.goto(live.url + "/")
    fresh.evaluate("() => localStorage.setItem('tea.sessionSource', JSON.stringify(''))")
    open_app(fresh, live.url)
    assert fresh.locator("#session-source").input_value() == ""
    assert fresh.locator("#session-list .session").first.get_attribute("data-id") == newest["id"]
    assert fresh.evaluate("() => document.querySelector('.tab.active').dataset.id") == mine
    assert fresh.locator(".msg.user").first.inner_text() == "my own chat"
