from __future__ import annotations

import json

import pytest

from tea_agent_mini.llm.textcalls import extract_text_tool_calls

TOOLS = {"toolkit_file", "toolkit_exec", "toolkit_grep"}

WRITE_ARGS = {"action": "write", "filename": "a.txt", "content": "hi"}
WRITE = json.dumps({"name": "toolkit_file", "arguments": WRITE_ARGS})
LS = '{"name": "toolkit_exec", "arguments": {"command": "ls"}}'
RM = '{"name": "toolkit_exec", "arguments": {"command": "rm -rf build"}}'


def names_and_args(calls) -> list[tuple[str, dict]]:
    return [(call.name, json.loads(call.arguments)) for call in calls]


@pytest.mark.parametrize(
    ("content", "text", "expected"),
    [
        # the whole reply is one call: bare, or in a fence of any of the usual kinds
        (WRITE, "", [("toolkit_file", WRITE_ARGS)]),
        (f"```json\n{WRITE}\n```", "", [("toolkit_file", WRITE_ARGS)]),
        (f"```\n{WRITE}\n```\n", "", [("toolkit_file", WRITE_ARGS)]),
        (f"```tool_call\n{LS}\n```", "", [("toolkit_exec", {"command": "ls"})]),
        (f"  \n```JSON\n{LS}\n```", "", [("toolkit_exec", {"command": "ls"})]),
        # one short line may lead in
        (
            f"Sure, I'll create the file:\n```json\n{WRITE}\n```",
            "Sure, I'll create the file:",
            [("toolkit_file", WRITE_ARGS)],
        ),
        (
            f"Let me list the files.\n\n{LS}",
            "Let me list the files.",
            [("toolkit_exec", {"command": "ls"})],
        ),
        (
            f"I'll use `toolkit_exec` for this:\n{LS}",
            "I'll use `toolkit_exec` for this:",
            [("toolkit_exec", {"command": "ls"})],
        ),
        # several calls: consecutive objects, several fences, a list, two objects in one fence
        (f"{WRITE}\n{LS}", "", [("toolkit_file", WRITE_ARGS), ("toolkit_exec", {"command": "ls"})]),
        (
            f"```json\n{WRITE}\n```\n\n```json\n{LS}\n```",
            "",
            [("toolkit_file", WRITE_ARGS), ("toolkit_exec", {"command": "ls"})],
        ),
        (
            f"[{WRITE}, {LS}]",
            "",
            [("toolkit_file", WRITE_ARGS), ("toolkit_exec", {"command": "ls"})],
        ),
        (
            f"```json\n{WRITE}\n{LS}\n```",
            "",
            [("toolkit_file", WRITE_ARGS), ("toolkit_exec", {"command": "ls"})],
        ),
        # argument shapes
        (
            '{"name": "toolkit_grep", "parameters": {"pattern": "x"}}',
            "",
            [("toolkit_grep", {"pattern": "x"})],
        ),
        (
            '{"tool": "toolkit_exec", "args": {"command": "pwd"}}',
            "",
            [("toolkit_exec", {"command": "pwd"})],
        ),
        ('{"name": "functions.toolkit_exec", "arguments": {}}', "", [("toolkit_exec", {})]),
        (
            '{"type": "function", '
            '"function": {"name": "toolkit_file", "arguments": "{\\"p\\": 2}"}}',
            "",
            [("toolkit_file", {"p": 2})],
        ),
        (
            '{"name": "toolkit_exec", "command": "ls -la"}',
            "",
            [("toolkit_exec", {"command": "ls -la"})],
        ),
        ('{"name": "toolkit_exec"}', "", [("toolkit_exec", {})]),
        # sloppy JSON, a template token, a reply cut off by the output limit
        (
            "{'name': 'toolkit_exec', 'arguments': {'command': 'ls',},}",
            "",
            [("toolkit_exec", {"command": "ls"})],
        ),
        (f"{LS}<|im_end|>", "", [("toolkit_exec", {"command": "ls"})]),
        (
            '```json\n{"name": "toolkit_file", "arguments": {"action": "write", "content": "cu',
            "",
            [("toolkit_file", {"action": "write", "content": "cu"})],
        ),
        # a file whose content holds a fence does not end the block early
        (
            '```json\n{"name": "toolkit_file", "arguments": {"action": "write", "filename": '
            '"R.md", "content": "# R\\n```sh\\nmake\\n```\\n"}}\n```',
            "",
            [
                (
                    "toolkit_file",
                    {"action": "write", "filename": "R.md", "content": "# R\n```sh\nmake\n```\n"},
                )
            ],
        ),
        # reasoning printed inline before the reply is kept, and not counted as the lead-in
        (
            f"<think>\nThe user wants a file.\nI should write it.\n</think>\n\nOn it:\n{WRITE}",
            "<think>\nThe user wants a file.\nI should write it.\n</think>\nOn it:",
            [("toolkit_file", WRITE_ARGS)],
        ),
        # tags are call syntax: text may come before them
        (
            'Let me look.\n<tool_call>\n{"name": "toolkit_file", "arguments": {"path": "a"}}\n'
            "</tool_call>",
            "Let me look.",
            [("toolkit_file", {"path": "a"})],
        ),
        (
            "The user wants the tests run. First I need the file list.\n"
            "Then I can decide.\n\n"
            f"<tool_call>\n{LS}\n</tool_call>\n<tool_call>\n{WRITE}\n</tool_call>\n",
            "The user wants the tests run. First I need the file list.\nThen I can decide.",
            [("toolkit_exec", {"command": "ls"}), ("toolkit_file", WRITE_ARGS)],
        ),
        (
            '<function=toolkit_exec>{"command": "pwd"}</function>',
            "",
            [("toolkit_exec", {"command": "pwd"})],
        ),
        (
            "<tool_call>\n<function=toolkit_file>\n<parameter=path>\nnotes.txt\n</parameter>\n"
            "<parameter=lines>\n[1, 2]\n</parameter>\n</function>\n</tool_call>",
            "",
            [("toolkit_file", {"path": "notes.txt", "lines": [1, 2]})],
        ),
        (
            "<tool_call>{'name': 'toolkit_file', 'arguments': {'path': 'x',},}</tool_call>",
            "",
            [("toolkit_file", {"path": "x"})],
        ),
        (
            '<tool_call>{"name": "toolkit_file", "arguments": {"path": "cu',
            "",
            [("toolkit_file", {"path": "cu"})],
        ),
        (f"<tool_call>{LS}</tool_call><|im_end|>", "", [("toolkit_exec", {"command": "ls"})]),
        # Qwen 1.5B echoing its template: the schemas' <tools> tag, doubled braces
        (f"<tools></tools> {{{LS}}}", "", [("toolkit_exec", {"command": "ls"})]),
        (f"<tools>\n{LS}\n</tools>", "", [("toolkit_exec", {"command": "ls"})]),
        (f"<tools> {LS} </tools> ```", "", [("toolkit_exec", {"command": "ls"})]),
        # calls that open the reply: what follows imagines their results and is dropped
        (
            f"<tool_call>\n{RM}\n</tool_call>\nThen I will check that the build is gone.",
            "",
            [("toolkit_exec", {"command": "rm -rf build"})],
        ),
        (
            f"<tools>\n{LS}\n</tools>\n\nThe output is:\n```\nnotes.txt\n```",
            "",
            [("toolkit_exec", {"command": "ls"})],
        ),
        (
            '{{"name": "toolkit_grep", "arguments": {"pattern": "heron", "glob": None}}}',
            "",
            [("toolkit_grep", {"pattern": "heron", "glob": None})],
        ),
    ],
)
def test_calls_small_models_print_are_recognised(content, text, expected):
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
        '{"name": "demo", "port": 8080}',
        '{"a": 1} and {"b": [1, 2]}',
        "```json\n[1, 2, 3]\n```",
        "code: if (x) { return {y: 1}; }",
        # a call inside a sentence
        'I will run {"tool": "toolkit_exec", "args": {"command": "ls"}} now.',
        f"Call {RM} to clean up.",
        # a call followed by more text
        f"```json\n{WRITE}\n```\nDone.",
        f"{WRITE}\nThis replaces a.txt with the greeting.",
        # tags after prose that goes on after them
        f"First I will clean up.\nThen:\n<tool_call>\n{RM}\n</tool_call>\nThat removes it.",
        f"<tool_call>\n{LS}\n</tool_call>\nand later\n<tool_call>\n{RM}\n</tool_call>",
        # documentation written for the user
        "## Writing files\n\nTo write a file, call toolkit_file like this:\n\n"
        f"```json\n{WRITE}\n```\n\nThe file is replaced, not appended to.",
        "To clean the build, the agent sends:\n\n"
        f"```json\n{RM}\n```\n\nand the directory is removed.",
        # JSON in the middle of paragraphs; a fenced block among other text
        f"First I checked the tests.\n\n{RM}\n\nAfter that the build folder is gone.",
        f"Steps:\n1. Write the file:\n```json\n{WRITE}\n```\n2. Run `ls` to check.",
        # a lead-in that introduces an example, or is more than one line
        f"For example:\n```json\n{WRITE}\n```",
        f"Here is an example call:\n{RM}",
        f"Here's how to delete the build folder:\n```json\n{RM}\n```",
        f"A call to toolkit_exec looks like this:\n{RM}",
        f"e.g.\n{LS}",
        f"I looked at the project.\nNow I'll write the file:\n```json\n{WRITE}\n```",
        f"Call it as {{name}}:\n{LS}",
        "Sure" + ", really" * 40 + f":\n{LS}",
        "For example:\n<tool_call>\n" + RM + "\n</tool_call>",
        f"<think>\nExplain it.\n</think>\nFor example:\n{RM}",
        f"<think>\nok\n</think>\n{RM}\nThat removes the build.",
        # tags inside code, or in the middle of a line
        f"Qwen prints calls like this:\n```xml\n<tool_call>\n{RM}\n</tool_call>\n```",
        f"Qwen prints `<tool_call>{RM}</tool_call>` when the server does not parse it.",
        f"The model emits <tool_call>{RM}</tool_call> and the server runs it.",
        'first <function=toolkit_exec>{"command": "a"}</function> then',
        # not every block is a call
        f"{LS}\n" + '{"note": "and this is data"}',
        f"```json\n{LS}\n```\n```python\nprint('hi')\n```",
        f"```python\n{LS}\n```",
        f"<tool_call>\n{LS}\n</tool_call>\n<tool_call>\n" + '{"name": "nope"}' + "\n</tool_call>",
        '[{"name": "toolkit_file", "arguments": {}}, {"name": "nope", "arguments": {}}]',
        # a name close to a tool, but no call syntax
        '{"name": "file", "size": 10}',
        'Call {"name": "file", "arguments": {"action": "read"}} to read it.',
        f"Templates escape braces: {{{LS}}} renders as a call.",
    ],
)
def test_text_that_is_not_only_calls_is_left_alone(content):
    assert extract_text_tool_calls(content, TOOLS) == (content, [])


@pytest.mark.parametrize(
    ("content", "name"),
    [
        ('{"name": "file", "arguments": {"action": "read", "filename": "a"}}', "file"),
        ('```json\n{"tool": "toolkit_files", "args": {"filename": "a"}}\n```', "toolkit_files"),
        ('<tool_call>\n{"name": "write_file", "filename": "a"}\n</tool_call>', "write_file"),
        ('<function=bash>{"command": "ls"}</function>', "bash"),
        ('{"name": "functions.exec", "arguments": {"command": "ls"}}', "exec"),
    ],
)
def test_a_call_to_a_name_close_to_a_tool_keeps_the_wrong_name(content, name):
    # The executor answers it with the likely tool names; nothing runs on a guess.
    remaining, calls = extract_text_tool_calls(content, TOOLS)
    assert remaining == "" and [call.name for call in calls] == [name]


def test_no_tools_means_no_calls():
    content = f"<tool_call>{LS}</tool_call>"
    assert extract_text_tool_calls(content, []) == (content, [])


def test_tags_and_function_tags_come_back_in_order():
    content = (
        'Checking.\n<function=toolkit_exec>{"command": "a"}</function>\n'
        '<tool_call>{"name": "toolkit_file", "arguments": {"path": "b"}}</tool_call>'
    )
    remaining, calls = extract_text_tool_calls(content, TOOLS)
    assert [c.name for c in calls] == ["toolkit_exec", "toolkit_file"]
    assert remaining == "Checking."
