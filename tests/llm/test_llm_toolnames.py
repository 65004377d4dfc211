from __future__ import annotations

import pytest

from tea_agent_mini.llm.toolnames import close_tool_names, rank_tool_names, unknown_tool_message
from tea_agent_mini.toolkit.registry import Toolkit


@pytest.fixture(scope="module")
def names() -> list[str]:
    return Toolkit.load().names()


@pytest.mark.parametrize(
    ("wrong", "meant"),
    [
        ("file", "toolkit_file"),
        ("toolkit_files", "toolkit_file"),
        ("Toolkit_File", "toolkit_file"),
        ("functions.toolkit_exec", "toolkit_exec"),
        ("read_file", "toolkit_file"),
        ("write_file", "toolkit_file"),
        ("readFile", "toolkit_file"),
        ("list_files", "toolkit_file"),
        ("exec", "toolkit_exec"),
        ("shell", "toolkit_exec"),
        ("bash", "toolkit_exec"),
        ("run_command", "toolkit_exec"),
        ("run_shell_command", "toolkit_exec"),
        ("grep", "toolkit_grep"),
        ("search_files", "toolkit_grep"),
        ("edit_file", "toolkit_edit"),
        ("str_replace_editor", "toolkit_edit"),
        ("fetch", "toolkit_web_fetch"),
        ("web_search", "toolkit_search"),
        ("TodoWrite", "toolkit_todo"),
    ],
)
def test_a_wrong_name_finds_the_tool_it_meant_first(names, wrong, meant):
    assert close_tool_names(wrong, names)[0] == meant
    assert rank_tool_names(wrong, names)[0][0] == meant


@pytest.mark.parametrize("unrelated", ["demo", "name", "title", "unknown_tool", "rm_everything"])
def test_unrelated_names_are_not_close_to_any_tool(names, unrelated):
    assert close_tool_names(unrelated, names) == []


def test_the_message_leads_with_the_likely_tool_and_stays_short(names):
    message = unknown_tool_message("file", names)
    assert message.startswith("unknown tool 'file'. Did you mean: toolkit_file?")
    listed = [name for name in names if name in message]
    assert len(listed) <= 8
    assert "more" in message and "Call a tool by its exact name." in message
    assert "toolkit_kb" not in message and "toolkit_lunar" not in message


def test_without_a_close_match_the_nearest_eight_are_listed_and_the_rest_counted(names):
    message = unknown_tool_message("xyzzy", names)
    assert "Did you mean" not in message
    assert sum(name in message for name in names) == 8
    assert f"and {len(names) - 8} more" in message


def test_few_tools_are_all_named_or_counted():
    assert unknown_tool_message("ecko", ["echo", "as_json"]) == (
        "unknown tool 'ecko'. Did you mean: echo? 1 other tool exists. "
        "Call a tool by its exact name."
    )
    assert unknown_tool_message("zz", ["echo"]) == (
        "unknown tool 'zz'. Tools with the nearest names: echo. Call a tool by its exact name."
    )
    assert unknown_tool_message("echo2", []) == "unknown tool 'echo2'. No tools are available."
