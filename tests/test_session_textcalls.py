"""Small-model habits through the whole turn loop, against the scripted model server: calls
printed as text, a missing ``action``, wrong tool names, and JSON that is only an explanation."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tea_agent_mini.config import load_config
from tea_agent_mini.runtime import Runtime
from tea_agent_mini.types import Done, Notice, ToolCallStart, ToolResult
from tests.fakes.background import turn_requests
from tests.fakes.scripted_server import Reply, ToolCallSpec


def run_turn(text: str):
    async def go():
        runtime = Runtime(load_config())
        try:
            session = runtime.session()
            events = [e async for e in session.run_turn(text)]
            return events, runtime.store.messages.of_topic(session.topic_id)
        finally:
            await runtime.aclose()

    return asyncio.run(go())


def fenced(call: dict, lead_in: str = "") -> str:
    block = f"```json\n{json.dumps(call)}\n```"
    return f"{lead_in}\n{block}" if lead_in else block


def test_a_fenced_call_without_action_writes_the_file(model_config, scripted_server, workspace):
    call = {"name": "toolkit_file", "arguments": {"filename": "hello.txt", "content": "hi\n"}}
    scripted_server.push(
        Reply(text=fenced(call, "Sure, I'll create the file:")),
        Reply(text="Created hello.txt."),
    )
    events, history = run_turn("create hello.txt saying hi")
    assert (workspace / "hello.txt").read_text() == "hi\n"
    result = next(e for e in events if isinstance(e, ToolResult))
    assert result.ok and result.output == "created 3 bytes in hello.txt"
    assert any(isinstance(e, Notice) and e.kind == "text_tools" for e in events)
    assert isinstance(events[-1], Done) and events[-1].text == "Created hello.txt."
    # the lead-in stays the assistant's text; the call is stored as a real call
    assert history[1].content == "Sure, I'll create the file:"
    assert [c.name for c in history[1].tool_calls] == ["toolkit_file"]
    second = turn_requests(scripted_server)[1]["messages"]
    assert second[-1]["role"] == "tool" and second[-1]["content"] == result.output


def test_documentation_with_json_runs_nothing(model_config, scripted_server, workspace):
    write = {"name": "toolkit_file", "arguments": {"action": "write", "filename": "x.txt"}}
    rm = {"name": "toolkit_exec", "arguments": {"command": "rm -rf *"}}
    answer = (
        "## Calling tools\n\nTo write a file the agent sends:\n\n"
        f"{fenced(write)}\n\nand to run a command, for example `{json.dumps(rm)}`.\n\n"
        "Both run in the workspace."
    )
    (workspace / "keep.txt").write_text("still here")
    scripted_server.push(Reply(text=answer))
    events, history = run_turn("how do tool calls look?")
    assert not any(isinstance(e, (ToolCallStart, ToolResult)) for e in events)
    assert isinstance(events[-1], Done) and events[-1].text == answer
    assert [m.role for m in history] == ["user", "assistant"]
    assert not history[1].tool_calls
    assert (workspace / "keep.txt").exists() and not (workspace / "x.txt").exists()
    assert len(turn_requests(scripted_server)) == 1


def test_a_wrong_tool_name_twice_stops_with_the_right_name(
    model_config, scripted_server, workspace
):
    call = {"name": "write_file", "arguments": {"filename": "a.txt", "content": "x"}}
    scripted_server.push(*[Reply(text=json.dumps(call)) for _ in range(4)])
    events, history = run_turn("write a.txt")
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [r.ok for r in results] == [False, False]  # nothing ran on a guess
    assert "Did you mean: toolkit_file?" in (results[0].error or "")
    assert not (workspace / "a.txt").exists()
    done = events[-1]
    assert isinstance(done, Done) and done.finish_reason == "loop"
    assert "write_file failed 2 times" in done.text and "exact names" in done.text
    assert len(turn_requests(scripted_server)) == 2


def test_a_text_call_the_model_explains_afterwards_is_only_text(
    model_config, scripted_server, workspace: Path
):
    call = {"name": "toolkit_exec", "arguments": {"command": "touch made.txt"}}
    answer = f"{json.dumps(call)}\nThis command would create made.txt."
    scripted_server.push(Reply(text=answer))
    events, _ = run_turn("how would you create made.txt?")
    assert isinstance(events[-1], Done) and events[-1].text == answer
    assert not (workspace / "made.txt").exists()


def test_described_steps_are_sent_back_once_and_never_run(model_config, scripted_server, workspace):
    exec_call = {"name": "toolkit_exec", "arguments": {"command": "echo ran > ran.txt"}}
    described = (
        "To do this I'll follow these steps:\n1. Run the command:\n"
        f"{fenced(exec_call)}\n2. Then I will read the output."
    )
    scripted_server.push(
        Reply(text=described),
        Reply(text=fenced(exec_call)),
        Reply(text="It printed nothing; ran.txt exists."),
    )
    events, history = run_turn("run echo ran into ran.txt")
    assert (workspace / "ran.txt").exists()  # by the call made after the correction
    assert [e.name for e in events if isinstance(e, ToolCallStart)] == ["toolkit_exec"]
    assert any(isinstance(e, Notice) and "described tool calls" in e.message for e in events)
    first, second, third = turn_requests(scripted_server)
    assert second["messages"][: len(first["messages"])] == first["messages"]
    assert second["messages"][-2] == {"role": "assistant", "content": described}
    assert "reply with only that one tool call" in second["messages"][-1]["content"]
    # the exchange is not stored: the history holds the call, its result and the answer
    assert [m.role for m in history] == ["user", "assistant", "tool", "assistant"]
    assert all(m.content != described for m in history)
    assert "reply with only" not in json.dumps(third["messages"])


def test_a_model_that_keeps_describing_gets_two_corrections_then_its_answer(
    model_config, scripted_server, workspace
):
    call = {"name": "toolkit_exec", "arguments": {"command": "rm -rf build"}}
    described = f"Let's do it step by step. First:\n{fenced(call)}\nThat cleans the build."
    scripted_server.push(Reply(text=described), Reply(text=described), Reply(text=described))
    events, history = run_turn("clean the build")
    assert not any(isinstance(e, ToolCallStart) for e in events)
    assert len(turn_requests(scripted_server)) == 3
    assert isinstance(events[-1], Done) and events[-1].text == described


def test_a_repeated_call_is_pointed_at_its_result_once(model_config, scripted_server, workspace):
    grep = ToolCallSpec("toolkit_grep", {"pattern": "heron"})
    (workspace / "journal.txt").write_text("saw a blue heron\n")
    scripted_server.push(
        Reply(tool_calls=[grep]), Reply(tool_calls=[grep]), Reply(text="journal.txt mentions it.")
    )
    events, history = run_turn("which file mentions a heron?")
    assert isinstance(events[-1], Done) and events[-1].text == "journal.txt mentions it."
    first, second, third = turn_requests(scripted_server)
    assert second["messages"][-1]["role"] == "tool"  # no hint after the first call
    hint = third["messages"][-1]
    assert hint["role"] == "user" and "twice with the same arguments" in hint["content"]
    assert third["messages"][-2]["role"] == "tool" and "heron" in third["messages"][-2]["content"]
    assert all("twice with the same" not in (m.content or "") for m in history)


def test_an_empty_reply_is_asked_again_once(model_config, scripted_server, workspace):
    scripted_server.push(Reply(text="<tools></tools>\n```"), Reply(text="The code is 40085."))
    events, history = run_turn("what is the door code in notes.txt?")
    assert isinstance(events[-1], Done) and events[-1].text == "The code is 40085."
    assert any(isinstance(e, Notice) and e.kind == "empty" for e in events)
    second = turn_requests(scripted_server)[1]["messages"]
    assert second[-1]["content"].startswith("Your reply was empty")
    assert [m.role for m in history] == ["user", "assistant"]


def test_after_a_correction_a_quoted_read_only_call_is_taken(
    model_config, scripted_server, workspace
):
    (workspace / "data.txt").write_text("a\nb\nc\n")
    read = {"name": "toolkit_file", "arguments": {"action": "read", "filename": "data.txt"}}
    # the tool named in prose, the arguments alone in JSON: a described call
    described = (
        "I will use the `toolkit_file` tool with these arguments:\n"
        '```json\n{"action": "read", "filename": "data.txt"}\n```\nThis returns the text.'
    )
    quoted_again = f"I will read it now.\n{fenced(read)}\nThis will return the text of data.txt."
    scripted_server.push(
        Reply(text=described), Reply(text=quoted_again), Reply(text="data.txt has 3 lines.")
    )
    events, history = run_turn("how many lines does data.txt have?")
    assert isinstance(events[-1], Done) and events[-1].text == "data.txt has 3 lines."
    result = next(e for e in events if isinstance(e, ToolResult))
    assert result.name == "toolkit_file" and result.ok and "b" in result.output
    assert [m.role for m in history] == ["user", "assistant", "tool", "assistant"]


def test_after_a_correction_a_quoted_write_still_does_not_run(
    model_config, scripted_server, workspace
):
    write = {"name": "toolkit_file", "arguments": {"action": "write", "filename": "x.txt"}}
    described = f"I'll write the file:\n{fenced(write)}\nThat creates x.txt."
    scripted_server.push(Reply(text=described), Reply(text=described), Reply(text=described))
    events, _ = run_turn("create x.txt")
    assert not any(isinstance(e, ToolCallStart) for e in events)
    assert not (workspace / "x.txt").exists()


FIXED_CODE = "Here's the corrected function:\n\n```python\ndef half(x):\n    return x / 2\n```\n"


def test_code_shown_after_tools_ran_but_never_applied_is_sent_back_once(
    model_config, scripted_server, workspace
):
    (workspace / "calc.py").write_text("def half(x):\n    return x * 2\n")
    run = ToolCallSpec("toolkit_exec", {"command": "python -c 'import calc'"})
    write = ToolCallSpec(
        "toolkit_file",
        {"action": "write", "filename": "calc.py", "content": "def half(x):\n    return x / 2\n"},
    )
    scripted_server.push(
        Reply(tool_calls=[run]), Reply(text=FIXED_CODE), Reply(tool_calls=[write]), Reply("Fixed.")
    )
    events, history = run_turn("fix half() in calc.py")
    assert (workspace / "calc.py").read_text().endswith("x / 2\n")
    assert isinstance(events[-1], Done) and events[-1].text == "Fixed."
    hint = turn_requests(scripted_server)[2]["messages"][-1]
    assert hint["role"] == "user" and "no file was changed" in hint["content"]
    assert all("shows code" not in (m.content or "") for m in history)


def test_a_failed_edit_answered_with_a_python_style_call_is_sent_back(
    model_config, scripted_server, workspace
):
    (workspace / "r.py").write_text("a = f(1)\nb = f(2)\n")
    edit = ToolCallSpec("toolkit_edit", {"file_path": "r.py", "old_string": "f", "new_string": "g"})
    as_code = 'You can do it like this: toolkit_edit("r.py", "f", "g", replace_all=True)'
    scripted_server.push(Reply(tool_calls=[edit]), Reply(text=as_code), Reply(text="Done."))
    events, _ = run_turn("rename f to g in r.py")
    hint = turn_requests(scripted_server)[2]["messages"][-1]
    assert "your last tool call failed" in hint["content"]
    assert isinstance(events[-1], Done) and events[-1].text == "Done."


def test_code_in_an_answer_without_tools_or_after_a_change_is_the_answer(
    model_config, scripted_server, workspace
):
    scripted_server.push(Reply(text=FIXED_CODE))
    events, _ = run_turn("how do I halve a number in Python?")
    assert isinstance(events[-1], Done) and events[-1].text == FIXED_CODE.strip()
    write = ToolCallSpec("toolkit_file", {"action": "write", "filename": "a.txt", "content": "x"})
    scripted_server.push(Reply(tool_calls=[write]), Reply(text=FIXED_CODE))
    events, _ = run_turn("write a.txt, then show me a halving function")
    assert isinstance(events[-1], Done) and "def half" in events[-1].text
    assert not any(isinstance(e, Notice) and "showed code" in e.message for e in events)


def test_a_skill_called_as_a_tool_returns_its_instructions(
    model_config, scripted_server, workspace
):
    skill = workspace / ".tea_agent" / "skills" / "release-notes"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: release-notes\ndescription: Write RELEASE_NOTES.md for the project.\n---\n"
        "Put the codename Osprey in the first heading.\n"
    )
    as_tool = {"name": "release-notes", "arguments": {"changelog": ["- fixed X"]}}
    scripted_server.push(Reply(text=fenced(as_tool)), Reply(text="Following it now."))
    events, history = run_turn("write the release notes, following the release-notes skill")
    result = next(e for e in events if isinstance(e, ToolResult))
    assert result.ok and result.name == "release-notes"
    assert "is a skill, not a tool" in result.output and "codename Osprey" in result.output
    assert [m.role for m in history] == ["user", "assistant", "tool", "assistant"]
    assert isinstance(events[-1], Done) and events[-1].text == "Following it now."


def test_an_unknown_name_that_is_no_skill_is_still_an_unknown_tool(
    model_config, scripted_server, workspace
):
    scripted_server.push(
        Reply(tool_calls=[ToolCallSpec("release-notes", {})]), Reply(text="Sorry.")
    )
    events, _ = run_turn("write the release notes")
    result = next(e for e in events if isinstance(e, ToolResult))
    assert not result.ok and result.error.startswith("unknown tool 'release-notes'")


SCHEDULE = {
    "name": "toolkit_scheduler",
    "arguments": {"action": "list"},
}
HANDED_OVER = (
    f"To see your tasks, you can use the following command:\n{fenced(SCHEDULE)}\nIt lists them."
)


def test_a_call_handed_to_the_user_is_sent_back_when_the_user_asked_for_the_result(
    model_config, scripted_server, workspace
):
    scripted_server.push(Reply(text=HANDED_OVER), Reply(text="No tasks yet."))
    events, _ = run_turn("List my scheduled tasks.")
    assert any(isinstance(e, Notice) and "described tool calls" in e.message for e in events)
    assert turn_requests(scripted_server)[1]["messages"][-1]["content"].startswith("You described")


def test_a_call_quoted_for_a_user_who_asked_how_is_the_answer(
    model_config, scripted_server, workspace
):
    scripted_server.push(Reply(text=HANDED_OVER))
    events, _ = run_turn("How do I list my scheduled tasks?")
    assert isinstance(events[-1], Done) and events[-1].text == HANDED_OVER.strip()
    assert len(turn_requests(scripted_server)) == 1


def test_code_quoted_from_a_file_the_turn_read_is_the_answer(
    model_config, scripted_server, workspace
):
    (workspace / "calc.py").write_text("def half(x):\n    return x / 2\n")
    read = ToolCallSpec("toolkit_file", {"action": "read", "filename": "calc.py"})
    scripted_server.push(Reply(tool_calls=[read]), Reply(text=FIXED_CODE))
    events, _ = run_turn("show me half() from calc.py")
    assert isinstance(events[-1], Done) and events[-1].text == FIXED_CODE.strip()
    assert len(turn_requests(scripted_server)) == 2


def test_a_one_line_command_block_after_a_failed_call_is_sent_back(
    model_config, scripted_server, workspace
):
    (workspace / "r.py").write_text("a = f(1)\nb = f(2)\n")
    edit = ToolCallSpec("toolkit_edit", {"file_path": "r.py", "old_string": "f", "new_string": "g"})
    as_command = (
        'Here is the command:\n\n```python\ntoolkit_edit r.py "f" "g" replace_all=True\n```'
    )
    scripted_server.push(Reply(tool_calls=[edit]), Reply(text=as_command), Reply(text="Done."))
    run_turn("rename f to g in r.py")
    assert (
        "your last tool call failed" in turn_requests(scripted_server)[2]["messages"][-1]["content"]
    )


def test_a_question_answered_with_a_file_that_does_not_exist_is_sent_back_once(
    model_config, scripted_server, workspace
):
    (workspace / "misc").mkdir()
    (workspace / "misc" / "journal_07.txt").write_text("a blue heron\n")
    grep = ToolCallSpec("toolkit_grep", {"pattern": "heron"})
    scripted_server.push(
        Reply(text="The file is `docs/README.md`."),
        Reply(tool_calls=[grep]),
        Reply(text="It is misc/journal_07.txt."),
    )
    events, history = run_turn("Which file mentions a heron?")
    hint = turn_requests(scripted_server)[1]["messages"][-1]["content"]
    assert hint.startswith("You named docs/README.md, but the workspace has no such file")
    assert isinstance(events[-1], Done) and events[-1].text == "It is misc/journal_07.txt."
    assert all("no such file" not in (m.content or "") for m in history)


def test_files_that_exist_or_answers_to_requests_are_not_questioned(
    model_config, scripted_server, workspace
):
    (workspace / "notes.txt").write_text("x\n")
    scripted_server.push(Reply(text="It is in notes.txt."))
    events, _ = run_turn("Where did I put the notes?")
    assert events[-1].text == "It is in notes.txt."
    scripted_server.push(Reply(text="Sure: I would call it plan.md."))
    events, _ = run_turn("Suggest a name for the plan file.")
    assert events[-1].text == "Sure: I would call it plan.md."
    assert len(turn_requests(scripted_server)) == 2
