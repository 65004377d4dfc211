from __future__ import annotations

import json

import pytest

from tea_agent_mini.llm.textcalls import extract_text_tool_calls

TOOLS = {"toolkit_file", "toolkit_shell"}


def names_and_args(calls) -> list[tuple[str, dict]]:
    return [(call.name, json.loads(call.arguments)) for call in calls]


@pytest.mark.parametrize(
    ("content", "text", "expected"),
    [
        (
            'Let me look.\n<tool_call>\n{"name": "toolkit_file", "arguments": {"path": "a"}}\n'
            "</tool_call>",
            "Let me look.",
            [("toolkit_file", {"path": "a"})],
        ),
        (
            '<tool_call>{"name": "toolkit_file", "arguments": {"path": "a"}}</tool_call>\n'
            '<tool_call>{"name": "toolkit_shell", "arguments": {"cmd": "ls"}}</tool_call>',
            "",
            [("toolkit_file", {"path": "a"}), ("toolkit_shell", {"cmd": "ls"})],
        ),
        (
            '```json\n{"name": "toolkit_file", "parameters": {"path": "b"}}\n```\nDone.',
            "Done.",
            [("toolkit_file", {"path": "b"})],
        ),
        (
            'I will run {"tool": "toolkit_shell", "args": {"cmd": "ls"}} now.',
            "I will run now.",
            [("toolkit_shell", {"cmd": "ls"})],
        ),
        (
            '<function=toolkit_shell>{"cmd": "pwd"}</function>',
            "",
            [("toolkit_shell", {"cmd": "pwd"})],
        ),
        (
            "<tool_call>\n<function=toolkit_file>\n<parameter=path>\nnotes.txt\n</parameter>\n"
            "<parameter=lines>\n[1, 2]\n</parameter>\n</function>\n</tool_call>",
            "",
            [("toolkit_file", {"path": "notes.txt", "lines": [1, 2]})],
        ),
        (
            '[{"name": "toolkit_file", "arguments": {"p": 1}}, {"name": "toolkit_shell"}]',
            "",
            [("toolkit_file", {"p": 1}), ("toolkit_shell", {})],
        ),
        (
            '{"type": "function", '
            '"function": {"name": "toolkit_file", "arguments": "{\\"p\\": 2}"}}',
            "",
            [("toolkit_file", {"p": 2})],
        ),
        (
            # single quotes and a trailing comma inside the tag are repaired
            "<tool_call>{'name': 'toolkit_file', 'arguments': {'path': 'x',},}</tool_call>",
            "",
            [("toolkit_file", {"path": "x"})],
        ),
        (
            # cut off by max_tokens: the open tag, string and objects are closed
            '<tool_call>{"name": "toolkit_file", "arguments": {"path": "cu',
            "",
            [("toolkit_file", {"path": "cu"})],
        ),
    ],
)
def test_text_tool_calls_are_recognised(content, text, expected):
    remaining, calls = extract_text_tool_calls(content, TOOLS)
    assert remaining == text
    assert names_and_args(calls) == expected
    assert len({call.id for call in calls}) == len(calls)
    assert all(call.id.startswith("call_") for call in calls)


@pytest.mark.parametrize(
    "content",
    [
        "Just an answer with no calls.",
        'Use {"name": "rm_everything", "arguments": {}} carefully.',
        '<tool_call>{"name": "unknown_tool", "arguments": {}}</tool_call>',
        "<function=other>{}</function>",
        'Config example: {"name": "demo", "port": 8080}',
        '{"a": 1} and {"b": [1, 2]}',
        "```json\n[1, 2, 3]\n```",
        "code: if (x) { return {y: 1}; }",
    ],
)
def test_text_without_known_calls_is_left_alone(content):
    assert extract_text_tool_calls(content, TOOLS) == (content, [])


def test_mixed_list_with_an_unknown_tool_is_not_taken_apart():
    content = '[{"name": "toolkit_file", "arguments": {}}, {"name": "nope", "arguments": {}}]'
    assert extract_text_tool_calls(content, TOOLS) == (content, [])


def test_no_tools_means_no_calls():
    content = '<tool_call>{"name": "toolkit_file", "arguments": {}}</tool_call>'
    assert extract_text_tool_calls(content, []) == (content, [])


def test_calls_come_back_in_text_order_across_styles():
    content = (
        'first <function=toolkit_shell>{"cmd": "a"}</function> then\n'
        '<tool_call>{"name": "toolkit_file", "arguments": {"path": "b"}}</tool_call>'
    )
    remaining, calls = extract_text_tool_calls(content, TOOLS)
    assert [c.name for c in calls] == ["toolkit_shell", "toolkit_file"]
    assert remaining == "first then"
