"""Finding and continuing conversations from the terminal: /switch by prefix or title, chat -c,
run -c, history, the history shown on resuming, and unknown /commands."""

from __future__ import annotations

from pathlib import Path

import pytest

from tea_agent_mini.types import Message, ToolCall
from tests.fakes.background import turn_requests
from tests.fakes.scripted_server import Reply
from tests.pg import home_store
from tests.test_cli import cli


def seed(home: Path, title: str, *exchange: str) -> str:
    """A topic with the given user/assistant texts (alternating) and one tool call."""
    store = home_store(home)
    try:
        topic = store.topics.create(title=title)
        for number, text in enumerate(exchange):
            role = "user" if number % 2 == 0 else "assistant"
            store.messages.add(topic.id, Message(role=role, content=text))
        call = ToolCall(id="c1", name="toolkit_gettime", arguments="{}")
        store.messages.add(topic.id, Message(role="assistant", tool_calls=(call,)))
        store.messages.add(
            topic.id,
            Message(role="tool", content="12:00", tool_call_id="c1", name="toolkit_gettime"),
        )
        store.topics.touch(topic.id)
        return topic.id
    finally:
        store.close()


@pytest.fixture
def topics(tea_home: Path, model_config) -> dict[str, str]:
    rome = seed(tea_home, "Trip to Rome", "plan a trip to Rome", "Day 1: the Colosseum.")
    notes = seed(tea_home, "Rome notes", "notes on Rome", "Noted.")
    last = seed(tea_home, "Shopping list", "milk and eggs", "Added both.")
    return {"rome": rome, "notes": notes, "last": last}


def test_switch_takes_an_id_prefix_or_a_title(topics, scripted_server):
    rome = topics["rome"]
    result = cli("chat", stdin=f"/switch {rome[:6]}\n/switch notes\n/exit\n")
    assert result.returncode == 0, result.stderr
    assert f"topic {rome}" in result.stderr and f"topic {topics['notes']}" in result.stderr
    assert "you> plan a trip to Rome" in result.stderr  # the history of the topic switched to


def test_switch_says_which_topics_an_ambiguous_reference_matches(topics, scripted_server):
    result = cli("chat", stdin="/switch rome\n/switch nothing-like-it\n/exit\n")
    assert "'rome' matches several topics" in result.stderr
    assert topics["rome"] in result.stderr and topics["notes"] in result.stderr
    assert "no topic matches 'nothing-like-it'" in result.stderr


def test_an_unknown_command_is_named(model_config, scripted_server):
    result = cli("chat", stdin="/frobnicate\n/exit\n")
    assert result.returncode == 0
    assert "unknown command /frobnicate" in result.stderr and "/switch" in result.stderr
    assert not turn_requests(scripted_server)


def test_chat_continue_resumes_the_last_topic_with_its_history(topics, scripted_server):
    scripted_server.push(Reply(text="And bread?"))
    result = cli("chat", "-c", stdin="anything else?\n/exit\n")
    assert result.returncode == 0, result.stderr
    assert f"topic {topics['last']}" in result.stderr
    assert "you> milk and eggs" in result.stderr and "Added both." in result.stderr
    assert "→ toolkit_gettime({})" in result.stderr and "← toolkit_gettime: 12:00" in result.stderr
    sent = [m["content"] for m in turn_requests(scripted_server)[0]["messages"]]
    assert "milk and eggs" in " ".join(str(c) for c in sent)


def test_chat_topic_by_title_shows_the_history(topics, scripted_server):
    result = cli("chat", "--topic", "Trip to Rome", stdin="/exit\n")
    assert f"topic {topics['rome']}" in result.stderr
    assert "Day 1: the Colosseum." in result.stderr


def test_run_continue_sends_the_earlier_turns(topics, scripted_server):
    scripted_server.push(Reply(text="Also butter."))
    result = cli("run", "-c", "what else?")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "Also butter."
    sent = " ".join(str(m["content"]) for m in turn_requests(scripted_server)[0]["messages"])
    assert "milk and eggs" in sent and "what else?" in sent


def test_continue_without_any_conversation_says_so(model_config):
    result = cli("chat", "-c", stdin="/exit\n")
    assert result.returncode == 2
    assert "there is no earlier conversation to continue" in result.stderr


def test_history_prints_a_conversation(topics):
    last = cli("history")
    assert last.returncode == 0, last.stderr
    lines = last.stdout.splitlines()
    assert lines[0].startswith(topics["last"]) and lines[0].endswith("Shopping list")
    assert lines[1:] == [
        "you> milk and eggs",
        "Added both.",
        "  → toolkit_gettime({})",
        "  ← toolkit_gettime: 12:00",
    ]
    by_title = cli("history", "trip", "-n", "2").stdout.splitlines()
    assert by_title[0].startswith(topics["rome"])
    assert by_title[1:] == [
        "… 2 earlier message(s)",
        "  → toolkit_gettime({})",
        "  ← toolkit_gettime: 12:00",
    ]


def test_history_without_conversations(tea_home):
    result = cli("history")
    assert result.returncode == 1 and "no conversations yet" in result.stderr
