"""A long session in real headless Chromium: its last page of messages first, earlier pages on
"Load earlier messages", in order, and the button gone once the first message is shown."""

from __future__ import annotations

import pytest

from tea_agent_mini.types import Message
from tests.ui.ui_helpers import missing_browser, open_app

REASON = missing_browser()
if REASON:
    pytest.skip(REASON, allow_module_level=True)

TURNS = 250  # 500 messages: more than one page (400)


def user_texts(page) -> list[str]:
    return page.locator(".chat-log .msg.user").all_inner_texts()


def wait_turns(page, count: int) -> None:
    page.wait_for_function(
        "(count) => document.querySelectorAll('.chat-log .turn').length === count", arg=count
    )


def test_a_long_session_shows_its_last_page_then_earlier_ones(page, live):
    store = live.runtime.store
    topic = store.topics.create(title="long one").id
    store.messages.add(topic, Message(role="assistant", content="a greeting before any question"))
    for n in range(TURNS):
        store.messages.add(topic, Message(role="user", content=f"question {n}"))
        store.messages.add(topic, Message(role="assistant", content=f"answer {n}"))
    open_app(page, live.url)
    page.locator("#session-list .session-open", has_text="long one").click()
    wait_turns(page, 200)  # the newest 400 messages, whole turns
    assert user_texts(page)[0] == "question 50" and user_texts(page)[-1] == "question 249"
    scrolled = page.evaluate("() => document.querySelector('.chat-log').scrollTop")
    assert scrolled > 0  # still at the newest message

    button = page.locator(".load-earlier button")
    button.click()
    wait_turns(page, TURNS + 1)  # the greeting is a turn of its own
    assert user_texts(page) == [f"question {n}" for n in range(TURNS)]
    assert page.locator(".chat-log .turn").first.inner_text().strip().startswith("a greeting")
    assert page.locator(".load-earlier").is_hidden()
