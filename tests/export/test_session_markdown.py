"""The Markdown export of a stored session: latest / answers / full, headings, code fences."""

from __future__ import annotations

import json

import pytest

from tea_agent_mini.errors import StoreError
from tea_agent_mini.export import parse_markdown
from tea_agent_mini.export.markdown_blocks import CodeBlock, Heading
from tea_agent_mini.export.session_markdown import (
    RESULT_PREVIEW_CHARS,
    UnknownSession,
    code_span,
    demote_headings,
    export_filename,
    session_to_markdown,
)
from tea_agent_mini.store import Store
from tea_agent_mini.types import Message, ToolCall

FIRST_ANSWER = "# Forecast\n\nIt is sunny in Paris today.\n\n```md\n# not a heading\n```"
SECOND_ANSWER = "明天巴黎多云，气温十八度。"
BIG_RESULT = "x" * (RESULT_PREVIEW_CHARS + 500)


@pytest.fixture
def store(tmp_path):
    with Store.open(tmp_path / "chat.db") as opened:
        yield opened


def add(store: Store, topic_id: str, *messages: Message) -> None:
    for message in messages:
        store.messages.add(topic_id, message)


def weather_session(store: Store) -> str:
    """Two exchanges: one with reasoning and a tool call, one plain Chinese answer."""
    topic = store.topics.create(title="Weather report")
    call = ToolCall("c1", "toolkit_weather_my", json.dumps({"city": "Paris", "days": 1}))
    add(
        store,
        topic.id,
        Message("user", "What is the weather in Paris?"),
        Message(
            "assistant",
            "Let me check the forecast.",
            reasoning="The user wants\n\nthe weather   for Paris.",
            tool_calls=(call,),
        ),
        Message("tool", "Sunny, 21 °C ```raw```", tool_call_id="c1", name="toolkit_weather_my"),
        Message("assistant", FIRST_ANSWER),
        Message("user", "明天呢？"),
        Message("assistant", SECOND_ANSWER),
    )
    return topic.id


def test_answers_mode_holds_each_question_and_its_final_answer_only(store):
    text = session_to_markdown(store, weather_session(store), "answers")
    assert text.startswith("# Weather report\n\nQuestions and answers · ")
    assert "## 1. What is the weather in Paris?" in text
    assert "## 2. 明天呢？" in text
    assert "It is sunny in Paris today." in text and SECOND_ANSWER in text
    assert text.index("It is sunny") < text.index("## 2.") < text.index(SECOND_ANSWER)
    # headings of the answer nest under the question; the one inside code does not move
    assert "\n### Forecast\n" in text and "\n# not a heading\n" in text
    for trajectory_only in ("Let me check", "toolkit_weather_my", "Reasoning", "Sunny"):
        assert trajectory_only not in text


def test_latest_mode_is_the_last_finished_exchange(store):
    topic_id = weather_session(store)
    text = session_to_markdown(store, topic_id)  # latest is the default
    assert text.startswith("# Weather report\n\nLatest answer · ")
    assert "## 1. 明天呢？" in text and SECOND_ANSWER in text
    assert "Paris?" not in text and "sunny" not in text

    # a turn in progress (a tool call, no answer yet) is not "the last answer"
    call = ToolCall("c2", "toolkit_export_last_pdf", "{}")
    add(store, topic_id, Message("user", "Export it"), Message("assistant", "", tool_calls=(call,)))
    assert session_to_markdown(store, topic_id, "latest") == text


def test_latest_without_any_answer_shows_the_last_question(store):
    topic = store.topics.create(title="")
    add(store, topic.id, Message("user", "Hello?"))
    text = session_to_markdown(store, topic.id, "latest")
    assert text.startswith(f"# Session {topic.id[:8]}\n")
    assert "## 1. Hello?\n\n(no answer)" in text


def test_full_mode_shows_reasoning_tool_calls_and_results(store):
    text = session_to_markdown(store, weather_session(store), "full")
    assert text.startswith("# Weather report\n\nFull trajectory · ")
    assert "> **Reasoning:** The user wants the weather for Paris." in text
    assert "Let me check the forecast." in text
    assert "**Tool call** `toolkit_weather_my`:" in text
    assert '```json\n{\n  "city": "Paris",\n  "days": 1\n}\n```' in text
    assert "**Result** of `toolkit_weather_my`:" in text
    # the result holds three backticks, so its fence needs four
    assert "````text\nSunny, 21 °C ```raw```\n````" in text
    order = ["Reasoning", "Tool call", "Result", "It is sunny", "## 2.", SECOND_ANSWER]
    positions = [text.index(piece) for piece in order]
    assert positions == sorted(positions)
    blocks = parse_markdown(text)
    codes = [b.text for b in blocks if isinstance(b, CodeBlock)]
    assert codes[:2] == ['{\n  "city": "Paris",\n  "days": 1\n}', "Sunny, 21 °C ```raw```"]
    assert [b.text for b in blocks if isinstance(b, Heading)][:2] == [
        "Weather report",
        "1. What is the weather in Paris?",
    ]


def test_full_mode_previews_long_results_and_keeps_bad_json_arguments(store):
    topic = store.topics.create(title="Big")
    call = ToolCall("c1", "toolkit_exec", "{not json")
    add(
        store,
        topic.id,
        Message("user", "run it"),
        Message("assistant", None, tool_calls=(call,)),
        Message("tool", BIG_RESULT, tool_call_id="c1", name="toolkit_exec"),
        Message("assistant", "Done."),
    )
    text = session_to_markdown(store, topic.id, "full")
    assert "```json\n{not json\n```" in text
    assert "x" * RESULT_PREVIEW_CHARS + "\n… (500 more characters)" in text
    assert "x" * (RESULT_PREVIEW_CHARS + 1) not in text
    assert text.rstrip().endswith("Done.")


def test_a_long_question_is_shortened_in_the_heading_and_given_in_full(store):
    topic = store.topics.create(title="Long")
    question = "Please explain " + "very " * 30 + "carefully\nand mind the second line"
    add(store, topic.id, Message("user", question), Message("assistant", "Sure."))
    text = session_to_markdown(store, topic.id, "answers")
    heading = next(line for line in text.splitlines() if line.startswith("## "))
    assert heading.startswith("## 1. Please explain very") and heading.endswith("…")
    assert len(heading) <= len("## 1. ") + 80
    assert f"\n\n{question}\n\n---\n\nSure." in text


def test_images_are_mentioned_and_system_messages_left_out(store):
    topic = store.topics.create(title="Pictures")
    parts = [
        {"type": "text", "text": "What is this?"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
    ]
    add(
        store,
        topic.id,
        Message("system", "secret system prompt"),
        Message("user", parts),
        Message("assistant", "A cat."),
    )
    text = session_to_markdown(store, topic.id, "full")
    assert "## 1. What is this?\n\n**Attached:** 1 image\n\nA cat." in text
    assert "secret" not in text and "base64" not in text


def attachment_session(store: Store) -> str:
    """A question with two files and an image attached, stored as the server stores them."""
    topic = store.topics.create(title="Files")
    parts = [
        {"type": "text", "text": "Summarize these"},
        {"type": "text", "text": "[attached file notes.md]\n# Notes\nfirst note"},
        {"type": "text", "text": "[attached file my_data.csv]\na,b\n1,2"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
    ]
    add(store, topic.id, Message("user", parts), Message("assistant", "Two notes."))
    return topic.id


@pytest.mark.parametrize("mode", ["latest", "answers"])
def test_attachments_are_named_on_their_own_line(store, mode):
    text = session_to_markdown(store, attachment_session(store), mode)
    assert "## 1. Summarize these\n\n**Attached:** `notes.md`, `my_data.csv`, 1 image\n\n" in text
    assert "first note" not in text and "[attached file" not in text
    assert text.endswith("Two notes.\n")


def test_full_mode_shows_the_attached_files_text(store):
    text = session_to_markdown(store, attachment_session(store), "full")
    assert "**Attached:** `notes.md`, `my_data.csv`, 1 image" in text
    assert "**Attached file** `notes.md`:\n\n```text\n# Notes\nfirst note\n```" in text
    assert "**Attached file** `my_data.csv`:\n\n```text\na,b\n1,2\n```\n\n---\n\nTwo notes." in text
    assert "[attached file" not in text


def test_code_span_fences_backticks_inside():
    assert code_span("a.md") == "`a.md`"
    assert code_span("x`y") == "``x`y``"
    assert code_span("`odd`") == "`` `odd` ``"


def test_an_empty_session_says_so(store):
    topic = store.topics.create(title="Nothing")
    for mode in ("latest", "answers", "full"):
        assert "(This session has no messages yet.)" in session_to_markdown(store, topic.id, mode)


def test_unknown_session_and_mode_are_refused(store):
    with pytest.raises(UnknownSession) as raised:
        session_to_markdown(store, "nope")
    assert isinstance(raised.value, StoreError) and isinstance(raised.value, LookupError)
    topic_id = weather_session(store)
    with pytest.raises(ValueError, match="latest, answers, full"):
        session_to_markdown(store, topic_id, "everything")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("# A\n## B\n###### F", "### A\n#### B\n###### F"),
        ("```\n# code\n```\n# after", "```\n# code\n```\n### after"),
        ("````\n```\n# code\n````\n#x", "````\n```\n# code\n````\n#x"),
        ("~~~\n# code\n~~~", "~~~\n# code\n~~~"),
    ],
)
def test_demote_headings(text, expected):
    assert demote_headings(text) == expected


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("Weather report / 天气", "Weather_report_天气.pdf"),
        ("../../etc/passwd", "etc_passwd.pdf"),
        ('a:b*c?"<>|', "a_b_c.pdf"),
        ("...", "session-abcdef12.pdf"),
        ("", "session-abcdef12.pdf"),
    ],
)
def test_export_filename_is_safe(title, expected):
    assert export_filename(title, "abcdef1234567890", ".pdf") == expected
