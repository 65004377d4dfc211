from __future__ import annotations

import json

import pytest

from tea_agent_mini.errors import ToolError
from tea_agent_mini.llm.repair import (
    JSONRepairError,
    ToolArgumentsError,
    parse_tool_arguments,
    read_json_value,
    repair_json,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"path": "a.txt"}', {"path": "a.txt"}),
        ("", {}),
        ("   \n", {}),
        ('```json\n{"path": "a.txt"}\n```', {"path": "a.txt"}),
        ('```\n{"path": "a.txt"}\n```', {"path": "a.txt"}),
        ('Sure, here you go: {"path": "a.txt"} Let me know!', {"path": "a.txt"}),
        ("{'path': 'a.txt'}", {"path": "a.txt"}),
        ('{"path": "a.txt",}', {"path": "a.txt"}),
        ('{"items": [1, 2, 3,],}', {"items": [1, 2, 3]}),
        ('{"text": "line one\nline two"}', {"text": "line one\nline two"}),
        ('{"text": "tab\there"}', {"text": "tab\there"}),
        ('{"a": True, "b": False, "c": None}', {"a": True, "b": False, "c": None}),
        (
            '{"path": "a.txt", "content": "unterminated',
            {"path": "a.txt", "content": "unterminated"},
        ),
        ('{"items": [1, 2', {"items": [1, 2]}),
        ('{"outer": {"inner": [{"x": 1', {"outer": {"inner": [{"x": 1}]}}),
        ('{"path": ', {"path": None}),
        ('"{\\"a\\": 1}"', {"a": 1}),
        ('"{\\"nested\\": \\"{\\\\\\"no\\\\\\": 1}\\"}"', {"nested": '{"no": 1}'}),
        ("{path: 'a.txt', mode: \"w\"}", {"path": "a.txt", "mode": "w"}),
        ("{'msg': 'don't panic'}", {"msg": "don't panic"}),
        ('{"cmd": "echo \\"hi\\""}', {"cmd": 'echo "hi"'}),
        ('{"text": "say "hi" twice"}', {"text": 'say "hi" twice'}),
        ('{"a": 1, // a comment\n "b": 2 /* another */}', {"a": 1, "b": 2}),
        ('{"e": "\\ud83d\\ude00 \\u00e9"}', {"e": "😀 é"}),
        ('{"path": "C:\\\\temp\\\\x"}', {"path": "C:\\temp\\x"}),
        ('{"pattern": "\\d+"}', {"pattern": "\\d+"}),
        ('"path": "a.txt", "n": 2', {"path": "a.txt", "n": 2}),
        ('{"n": -1.5e2, "m": +3, "k": .5}', {"n": -150.0, "m": 3, "k": 0.5}),
        ('{"a": , "b": 1}', {"a": None, "b": 1}),
        ('{"a": 1} trailing {"b": 2}', {"a": 1}),
        ('{"中文": "你好"}', {"中文": "你好"}),
    ],
)
def test_sloppy_arguments_are_repaired(raw, expected):
    assert parse_tool_arguments(raw) == expected


def test_repair_json_keeps_non_object_values():
    assert repair_json("[1, 2,]") == [1, 2]
    assert repair_json("42") == 42
    assert repair_json('"text"') == "text"
    assert repair_json("null") is None


def test_valid_json_is_never_changed():
    value = {"s": 'it\'s "quoted" {not json}', "n": [1, 2.5, None, True], "u": "ü"}
    assert parse_tool_arguments(json.dumps(value)) == value
    assert parse_tool_arguments(json.dumps(value, ensure_ascii=False)) == value


def test_dict_input_passes_through():
    assert parse_tool_arguments({"a": 1}) == {"a": 1}  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("raw", "kind"),
    [("[1, 2]", "an array"), ('"just text"', "a string"), ("42", "a number"),
     ("true", "a boolean"), ("hello there", "a string")],
)  # fmt: skip
def test_non_objects_are_rejected_with_a_clear_message(raw, kind):
    with pytest.raises(ToolArgumentsError) as info:
        parse_tool_arguments(raw)
    message = str(info.value)
    assert "must be a JSON object" in message
    assert kind in message


@pytest.mark.parametrize("raw", ['{"a" "b"}', '{"a": 1]', "{@}", '{"a": 1, "b" 2}'])
def test_unreadable_arguments_say_where(raw):
    with pytest.raises(ToolArgumentsError) as info:
        parse_tool_arguments(raw)
    message = str(info.value)
    assert "line 1 column" in message
    assert "(char " in message
    assert "near" in message and raw[:3] in message
    assert "JSON object" in message
    assert isinstance(info.value, ToolError)
    assert isinstance(info.value.__cause__, JSONRepairError)


def test_position_reported_on_later_lines():
    raw = '{\n  "a": 1,\n  "b" 2\n}'
    with pytest.raises(ToolArgumentsError) as info:
        parse_tool_arguments(raw)
    assert "line 3" in str(info.value)


@pytest.mark.parametrize("raw", ["{'a': " + "[" * 5000, '{"a": ' + "[" * 50000 + "]" * 50000 + "}"])
def test_deep_nesting_does_not_blow_the_stack(raw):
    with pytest.raises(ToolArgumentsError):
        parse_tool_arguments(raw)


@pytest.mark.parametrize(
    ("text", "start", "value", "end"),
    [
        ('x {"a": 1} tail', 2, {"a": 1}, 10),  # strict JSON, text after it left alone
        ("{'a': 1,} more", 0, {"a": 1}, 9),  # repaired, and it still says where it ended
        ('[{"a": "cut', 0, [{"a": "cut"}], 11),  # cut off: closed at the end of the text
    ],
)
def test_read_json_value_says_where_the_value_ends(text, start, value, end):
    assert read_json_value(text, start) == (value, end)


def test_read_json_value_raises_when_nothing_can_be_read():
    with pytest.raises(JSONRepairError):
        read_json_value("{: :}")
