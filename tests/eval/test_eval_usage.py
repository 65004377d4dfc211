"""Token counts from usage objects, llama.cpp timings and captured llama.cpp streams."""

from __future__ import annotations

from pathlib import Path

import pytest
from teaeval.usage import (
    StreamTap,
    TokenCounts,
    body_counts,
    body_reply,
    estimate_prompt_tokens,
    read_counts,
    reply_fragments,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "llamacpp"


def test_openai_usage_with_cached_tokens():
    payload = {
        "usage": {
            "prompt_tokens": 1200,
            "completion_tokens": 40,
            "prompt_tokens_details": {"cached_tokens": 1024},
        }
    }
    assert read_counts(payload) == TokenCounts(prompt=1200, completion=40, cached=1024)


def test_llamacpp_timings_alone_add_the_cached_tokens_to_the_prompt():
    payload = {"timings": {"cache_n": 900, "prompt_n": 35, "predicted_n": 12}}
    assert read_counts(payload) == TokenCounts(prompt=935, completion=12, cached=900)


def test_usage_wins_and_timings_fill_the_gaps():
    payload = {
        "usage": {"prompt_tokens": 50, "completion_tokens": 5, "prompt_tokens_details": None},
        "timings": {"cache_n": 30, "prompt_n": 99, "predicted_n": 77},
    }
    assert read_counts(payload) == TokenCounts(prompt=50, completion=5, cached=30)


@pytest.mark.parametrize("payload", [{}, {"usage": None}, {"usage": {"prompt_tokens": "x"}}, []])
def test_nothing_reported_is_none(payload):
    assert read_counts(payload) == TokenCounts()


def test_update_keeps_what_the_newer_counts_do_not_know():
    counts = TokenCounts(prompt=10, completion=2, cached=None)
    counts.update(TokenCounts(prompt=None, completion=3, cached=4))
    assert counts == TokenCounts(prompt=10, completion=3, cached=4)


def feed(name: str, size: int) -> StreamTap:
    data = (FIXTURES / name).read_bytes()
    tap = StreamTap()
    for start in range(0, len(data), size):
        tap.feed(data[start : start + size])
    tap.finish()
    return tap


@pytest.mark.parametrize("size", [1, 7, 100_000])
def test_a_captured_stream_with_usage_in_any_pieces(size):
    tap = feed("stream_text.sse", size)
    # the last chunk: usage {prompt 45, cached 1, completion 12}, timings {cache_n 1, prompt_n 44}
    assert tap.counts == TokenCounts(prompt=45, completion=12, cached=1)
    assert tap.events > 3


@pytest.mark.parametrize("size", [3, 100_000])
def test_a_captured_stream_with_timings_on_the_finish_chunk_only(size):
    tap = feed("stream_with_tools.sse", size)
    assert tap.counts == TokenCounts(prompt=37, completion=60, cached=1)


def test_a_multibyte_character_split_between_pieces():
    data = 'data: {"choices":[{"delta":{"content":"茶"}}],"usage":{"prompt_tokens":9}}\n\n'
    raw = data.encode("utf-8")
    cut = raw.index("茶".encode()) + 1
    tap = StreamTap()
    tap.feed(raw[:cut])
    tap.feed(raw[cut:])
    tap.finish()
    assert tap.counts.prompt == 9 and tap.events == 1


def test_a_captured_json_answer():
    data = (FIXTURES / "nonstream_with_tools.json").read_bytes()
    assert body_counts(data) == TokenCounts(prompt=30, completion=60, cached=1)
    assert body_counts(b"<html>bad gateway</html>") == TokenCounts()


def test_the_estimate_counts_messages_and_tools():
    small = estimate_prompt_tokens({"messages": [{"role": "user", "content": "hi"}]})
    tool = {"type": "function", "function": {"name": "x" * 400}}
    bigger = estimate_prompt_tokens(
        {"messages": [{"role": "user", "content": "hi"}], "tools": [tool]}
    )
    assert 1 <= small < bigger and bigger >= 100
    assert estimate_prompt_tokens(None) == estimate_prompt_tokens({})


def test_the_tap_keeps_what_the_reply_said_text_and_tool_call_pieces():
    assert "".join(feed("stream_text.sse", 5).reply).startswith("Name two colour")
    tool_chunk = {
        "choices": [
            {"delta": {"tool_calls": [{"function": {"name": "toolkit_file", "arguments": "{}"}}]}}
        ]
    }
    assert reply_fragments(tool_chunk) == ["toolkit_file", "{}"]
    assert reply_fragments({"usage": {"prompt_tokens": 3}}) == []
    assert reply_fragments({"choices": [{"delta": {"content": None}}]}) == []


def test_a_json_answer_keeps_its_text_or_its_calls():
    assert body_reply(b'{"choices":[{"message":{"content":"hi"}}]}') == "hi"
    called = body_reply(b'{"choices":[{"message":{"content":null,"tool_calls":[{"id":"c"}]}}]}')
    assert called == '[{"id": "c"}]'
    assert body_reply(b"<html>bad gateway</html>") == ""
