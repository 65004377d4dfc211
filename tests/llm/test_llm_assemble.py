from __future__ import annotations

import json
from pathlib import Path

import pytest

from tea_agent_mini.llm.assemble import (
    StreamAssembler,
    clean_template_tokens,
    completion_events,
    completion_from_response,
)
from tea_agent_mini.llm.sse import parse_sse
from tea_agent_mini.types import Completion, ReasoningDelta, TextDelta, ToolCall, Usage

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "llamacpp"


def assemble_fixture(name: str) -> tuple[StreamAssembler, list]:
    assembler = StreamAssembler()
    deltas = []
    for event in parse_sse((FIXTURES / name).read_text(encoding="utf-8")):
        if event.is_done:
            break
        deltas += assembler.feed(json.loads(event.data))
    return assembler, deltas


def delta(**fields) -> dict:
    return {"choices": [{"index": 0, "delta": fields, "finish_reason": None}]}


def finish(reason: str) -> dict:
    return {"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}


def test_stream_text_fixture():
    assembler, deltas = assemble_fixture("stream_text.sse")
    result = assembler.result()
    assert result.content == "Name two colour.<|im_end|>\n<|"
    assert "".join(d.text for d in deltas) == result.content
    assert all(isinstance(d, TextDelta) for d in deltas)
    assert result.finish_reason == "length"
    assert result.usage == Usage(
        prompt_tokens=45, completion_tokens=12, total_tokens=57, cached_tokens=1
    )
    assert result.model == "gemma-3-270m-q4_k_m.gguf"
    assert result.tool_calls == ()
    assert result.reasoning == ""


def test_stream_with_tools_fixture_answers_in_text_without_usage():
    assembler, _ = assemble_fixture("stream_with_tools.sse")
    result = assembler.result()
    assert result.content.startswith("User and Assistant will be able to view the user's logs")
    assert result.finish_reason == "length"
    assert result.usage is None  # include_usage was not requested in that capture
    assert result.tool_calls == ()


def test_nonstream_fixture():
    data = json.loads((FIXTURES / "nonstream_with_tools.json").read_text(encoding="utf-8"))
    result = completion_from_response(data)
    assert result.content.startswith("<|im_end|>user\nList files with toolkit_file.")
    assert result.finish_reason == "length"
    assert result.usage == Usage(
        prompt_tokens=30, completion_tokens=60, total_tokens=90, cached_tokens=1
    )
    assert result.model == "gemma-3-270m-q4_k_m.gguf"
    assert clean_template_tokens(result.content) == (
        "user\nList files with toolkit_file.\n"
        "user\nList files with toolkit_file.\n"
        "List files with toolkit_file."
    )


def test_null_content_is_not_output():
    assembler = StreamAssembler()
    assert assembler.feed(delta(role="assistant", content=None)) == []
    assert not assembler.has_output
    assert assembler.feed(delta(content="")) == []
    assert not assembler.has_output


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_reasoning_from_either_field(field):
    assembler = StreamAssembler()
    events = assembler.feed(delta(**{field: "let me think"}))
    events += assembler.feed(delta(content="answer"))
    assembler.feed(finish("stop"))
    assert events == [ReasoningDelta("let me think"), TextDelta("answer")]
    result = assembler.result()
    assert (result.reasoning, result.content, result.finish_reason) == (
        "let me think",
        "answer",
        "stop",
    )


def test_reasoning_given_in_both_fields_is_not_doubled():
    assembler = StreamAssembler()
    assembler.feed(delta(reasoning_content="x", reasoning="x"))
    assert assembler.result().reasoning == "x"


def test_openai_style_tool_call_fragments():
    assembler = StreamAssembler()
    chunks = [
        delta(tool_calls=[{"index": 0, "id": "call_a", "type": "function",
                           "function": {"name": "toolkit_file", "arguments": ""}}]),
        delta(tool_calls=[{"index": 0, "function": {"arguments": '{"pa'}}]),
        delta(tool_calls=[{"index": 0, "function": {"arguments": 'th": "a.txt"}'}}]),
        delta(tool_calls=[{"index": 1, "id": "call_b", "type": "function",
                           "function": {"name": "toolkit_shell", "arguments": '{"cmd"'}}]),
        delta(tool_calls=[{"index": 1, "function": {"arguments": ': "ls"}'}}]),
        finish("tool_calls"),
    ]  # fmt: skip
    for chunk in chunks:
        assert assembler.feed(chunk) == []
    assert assembler.has_output
    assert assembler.result().tool_calls == (
        ToolCall("call_a", "toolkit_file", '{"path": "a.txt"}'),
        ToolCall("call_b", "toolkit_shell", '{"cmd": "ls"}'),
    )
    assert assembler.result().finish_reason == "tool_calls"


def test_whole_calls_in_one_chunk_without_index_and_dict_arguments():
    assembler = StreamAssembler()
    assembler.feed(
        delta(
            tool_calls=[
                {"id": "c1", "function": {"name": "a", "arguments": {"x": 1}}},
                {"id": "c2", "function": {"name": "b", "arguments": "{}"}},
            ]
        )
    )
    calls = assembler.result().tool_calls
    assert [(c.id, c.name, json.loads(c.arguments)) for c in calls] == [
        ("c1", "a", {"x": 1}),
        ("c2", "b", {}),
    ]


def test_fragments_without_index_continue_the_current_call():
    assembler = StreamAssembler()
    assembler.feed(delta(tool_calls=[{"function": {"name": "a", "arguments": '{"x"'}}]))
    assembler.feed(delta(tool_calls=[{"function": {"arguments": ": 1}"}}]))
    assembler.feed(delta(tool_calls=[{"function": {"name": "b", "arguments": "{}"}}]))
    calls = assembler.result().tool_calls
    assert [(c.name, c.arguments) for c in calls] == [("a", '{"x": 1}'), ("b", "{}")]
    assert all(c.id.startswith("call_") for c in calls)
    assert calls[0].id != calls[1].id


def test_repeated_id_and_name_on_every_fragment():
    assembler = StreamAssembler()
    for piece in ['{"q":', ' "tea"', "}"]:
        assembler.feed(
            delta(tool_calls=[{"id": "same", "function": {"name": "search", "arguments": piece}}])
        )
    assert assembler.result().tool_calls == (ToolCall("same", "search", '{"q": "tea"}'),)


def test_parallel_calls_that_all_claim_index_0_stay_apart():
    assembler = StreamAssembler()
    for call_id, name in [("c1", "a"), ("c2", "b")]:
        fragment = {"index": 0, "id": call_id, "function": {"name": name, "arguments": "{"}}
        assembler.feed(delta(tool_calls=[fragment]))
        assembler.feed(delta(tool_calls=[{"index": 0, "function": {"arguments": "}"}}]))
    calls = assembler.result().tool_calls
    assert [(c.id, c.name, c.arguments) for c in calls] == [("c1", "a", "{}"), ("c2", "b", "{}")]


def test_empty_arguments_become_an_empty_object():
    assembler = StreamAssembler()
    assembler.feed(delta(tool_calls=[{"index": 0, "id": "c", "function": {"name": "now"}}]))
    assert assembler.result().tool_calls == (ToolCall("c", "now", "{}"),)


def test_usage_on_finish_chunk_and_choice_level_usage():
    assembler = StreamAssembler()
    chunk = finish("stop")
    chunk["usage"] = {"prompt_tokens": 3, "completion_tokens": 2}
    assembler.feed(chunk)
    assert assembler.result().usage == Usage(3, 2, 5, 0)
    other = StreamAssembler()
    other.feed({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop",
                             "usage": {"prompt_tokens": 7, "completion_tokens": 1}}]})  # fmt: skip
    assert other.result().usage == Usage(7, 1, 8, 0)


def test_default_finish_only_applies_when_there_was_output():
    assembler = StreamAssembler()
    assert assembler.result(default_finish="stop").finish_reason is None
    assembler.feed(delta(content="hi"))
    assert assembler.result().finish_reason is None
    assert assembler.result(default_finish="stop").finish_reason == "stop"


def test_nonstream_tool_calls_and_reasoning():
    data = {
        "model": "m",
        "choices": [
            {
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "reasoning": "thinking",
                    "tool_calls": [
                        {"id": "x1", "type": "function",
                         "function": {"name": "f", "arguments": '{"a": 1}'}},
                        {"type": "function", "function": {"name": "g", "arguments": {"b": 2}}},
                    ],
                },
            }
        ],
    }  # fmt: skip
    result = completion_from_response(data)
    assert result.content == "" and result.reasoning == "thinking"
    assert result.tool_calls[0] == ToolCall("x1", "f", '{"a": 1}')
    assert result.tool_calls[1].name == "g" and result.tool_calls[1].id
    assert json.loads(result.tool_calls[1].arguments) == {"b": 2}
    assert result.usage is None


def test_completion_events_replays_a_whole_answer():
    completion = Completion(content="hi", reasoning="hm")
    assert completion_events(completion) == [ReasoningDelta("hm"), TextDelta("hi"), completion]


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("Name two colour.<|im_end|>\n<|", "Name two colour."),
        ("Hello<|eot_id|>", "Hello"),
        ("Hi there<end_of_turn>\n<start_of_turn>user\nmore", "Hi there\nmore"),
        ("<|im_start|>assistant\nSure.<|im_end|>", "Sure."),
        ("Answer</s>", "Answer"),
        ("cut at the end <|im_", "cut at the end"),
        ("a < b and c > d", "a < b and c > d"),
        ("x <y", "x <y"),
        ("plain text", "plain text"),
    ],
)
def test_clean_template_tokens(raw, clean):
    assert clean_template_tokens(raw) == clean
