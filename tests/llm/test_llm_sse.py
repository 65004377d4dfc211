from __future__ import annotations

import json
from pathlib import Path

import pytest

from tea_agent_mini.llm.sse import SSEEvent, SSEParser, parse_sse

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "llamacpp"


def feed_in_pieces(text: str, size: int) -> list[SSEEvent]:
    parser = SSEParser()
    events: list[SSEEvent] = []
    for start in range(0, len(text), size):
        events += parser.feed(text[start : start + size])
    return events + parser.finish()


def test_basic_events_and_done():
    events = parse_sse('data: {"a": 1}\n\ndata: [DONE]\n\n')
    assert [e.data for e in events] == ['{"a": 1}', "[DONE]"]
    assert [e.is_done for e in events] == [False, True]


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_line_endings(newline):
    text = f"data: one{newline}{newline}data: two{newline}{newline}"
    assert [e.data for e in parse_sse(text)] == ["one", "two"]


@pytest.mark.parametrize("size", [1, 2, 3, 7, 1000])
def test_any_chunking_gives_the_same_events(size):
    text = (
        ": keep-alive comment\r\n"
        "event: message\r\nid: 7\r\ndata: first\r\ndata: second\r\n\r\n"
        "data:no-space\n\n"
        "data: [DONE]\n\n"
    )
    events = feed_in_pieces(text, size)
    assert [e.data for e in events] == ["first\nsecond", "no-space", "[DONE]"]
    assert events[0].event == "message"
    assert events[0].id == "7"


def test_crlf_split_across_feeds_is_one_line_ending():
    parser = SSEParser()
    assert parser.feed("data: x\r") == []
    assert parser.feed("\n\r") == []
    assert [e.data for e in parser.feed("\n")] == ["x"]


def test_comments_and_unknown_fields_are_ignored():
    text = ": ping\nretry: 100\nfoo: bar\n\n: another\ndata: kept\n\n"
    assert [e.data for e in parse_sse(text)] == ["kept"]


def test_finish_flushes_an_event_without_trailing_blank_line():
    parser = SSEParser()
    assert parser.feed("data: [DONE]") == []
    events = parser.finish()
    assert len(events) == 1 and events[0].is_done


def test_leading_bom_is_dropped():
    assert [e.data for e in parse_sse("\ufeffdata: x\n\n")] == ["x"]


def test_empty_data_line_is_an_event_but_blank_lines_alone_are_not():
    assert parse_sse("\n\n\n") == []
    assert [e.data for e in parse_sse("data:\n\n")] == [""]


@pytest.mark.parametrize("name", ["stream_text.sse", "stream_with_tools.sse"])
def test_llamacpp_transcripts_parse_into_json_chunks_then_done(name):
    events = feed_in_pieces((FIXTURES / name).read_text(encoding="utf-8"), 97)
    assert events[-1].is_done
    chunks = [json.loads(e.data) for e in events[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
