"""Choosing the tools of a request, rendering them compactly, and finding the rest."""

from __future__ import annotations

import pytest

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import Toolkit
from tea_agent_mini.toolkit.schemas import render_schema, summarise
from tea_agent_mini.toolkit.selection import (
    CORE_TOOLS,
    MAX_TOPIC_TOOLS,
    STATE_KEY,
    ToolIndex,
    ToolMenu,
    with_tools,
)
from tea_agent_mini.tools.finder import toolkit_find_tools


@pytest.fixture(scope="module")
def toolkit() -> Toolkit:
    return Toolkit.load()


def test_summarise_keeps_whole_sentences_within_the_limit():
    text = "Run a command. It returns the output.   Long notes follow here and go on."
    assert (
        summarise(text, 200)
        == "Run a command. It returns the output. Long notes follow here and go on."
    )
    assert summarise(text, 40) == "Run a command. It returns the output."
    assert summarise(text, 20) == "Run a command."
    cut = summarise("one very long first sentence without any stop at all here", 30)
    assert cut.endswith("...") and len(cut) <= 30 and cut.startswith("one very long")


def test_compact_schemas_keep_what_a_call_needs(toolkit):
    spec = toolkit.get("toolkit_file")
    compact = render_schema(spec, "compact")["function"]
    full = render_schema(spec, "full")["function"]
    assert len(compact["description"]) < len(full["description"]) <= len(spec.description)
    assert compact["parameters"]["required"] == ["action"]
    action = compact["parameters"]["properties"]["action"]
    assert action["enum"] == ["read", "write", "list", "append"]
    assert set(compact["parameters"]["properties"]) == set(spec.parameters["properties"])


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("What's the weather in Paris tomorrow?", "toolkit_weather_my"),
        ("commit my changes with a good message", "toolkit_git_commit"),
        ("send an email to bob about the release", "toolkit_send_email"),
        ("schedule a task every day at 9 to back up the db", "toolkit_scheduler"),
        ("run the tests", "toolkit_run_tests"),
        ("export this chat as a PDF", "toolkit_export_last_pdf"),
        # keywords: words a request uses for a tool without naming it
        ("Remember that my favourite colour is turquoise.", "toolkit_memory"),
        ("Will it rain in Paris tomorrow?", "toolkit_weather_my"),
        ("remind me to water the plants daily at 9", "toolkit_scheduler"),
        ("Spawn a teammate to review the parser", "toolkit_spawn_teammate"),
        ("Broadcast to the team that we ship today", "toolkit_broadcast"),
    ],
)
def test_messages_find_their_tools(toolkit, message, expected):
    ranked = [m.name for m in ToolIndex(toolkit.specs()).rank(message)]
    assert ranked and ranked[0] == expected


@pytest.mark.parametrize(
    "message",
    [
        "Create hello.py that prints hello world.",
        "hi",
        "thanks!",
        "Read notes.txt and tell me the warehouse door code.",  # "code", "read": coincidences
        "Which file mentions a blue heron?",
    ],
)
def test_plain_messages_add_no_tools(toolkit, message):
    assert ToolIndex(toolkit.specs()).rank(message) == []


def test_the_core_comes_first_then_the_topics_tools_then_new_ones(toolkit):
    menu = ToolMenu(toolkit)
    choice = menu.choose("What's the weather in Paris?", ["toolkit_git"], ["toolkit_todo"])
    assert choice.names[: len(CORE_TOOLS)] == CORE_TOOLS
    assert choice.names[len(CORE_TOOLS) :] == (
        "toolkit_git",
        "toolkit_todo",
        "toolkit_weather_my",
    )
    assert choice.added == ("toolkit_todo", "toolkit_weather_my")
    assert choice.tokens == menu.tokens(choice.names)


def test_the_budget_holds_extras_back_but_never_the_core(toolkit):
    menu = ToolMenu(toolkit)
    core = menu.tokens(CORE_TOOLS)
    tight = menu.choose("What's the weather in Paris?", ["toolkit_scheduler"], [], budget=core + 1)
    assert tight.names == CORE_TOOLS and tight.added == ()
    none = menu.choose("hi", [], [], budget=1)
    assert none.names == CORE_TOOLS


def test_the_menu_follows_changes_to_the_toolkit(toolkit):
    small = Toolkit.load(["files.files", "finder"])
    menu = ToolMenu(small)
    assert [
        s["function"]["name"] for s in menu.schemas(["toolkit_file", "toolkit_weather_my"])
    ] == ["toolkit_file"]
    small.register(toolkit.get("toolkit_weather_my"))
    assert len(menu.schemas(["toolkit_file", "toolkit_weather_my"])) == 2
    ranked = menu.index.rank("weather forecast in Rome", min_score=1.0)
    assert ranked[0].name == "toolkit_weather_my"


def test_the_topic_set_grows_by_appending_and_is_capped():
    names = [f"tool_{i}" for i in range(MAX_TOPIC_TOOLS + 5)]
    assert with_tools(["a"], ["b", "a", "toolkit_file", "c"]) == ["a", "b", "c"]
    assert with_tools([], names) == names[-MAX_TOPIC_TOOLS:]


def finder_context(toolkit: Toolkit, workspace) -> ToolContext:
    return ToolContext(workspace=workspace, home=workspace / "home", toolkit=toolkit, topic_id="t1")


def test_finding_by_need_enables_and_explains(toolkit, workspace):
    ctx = finder_context(toolkit, workspace)
    text = toolkit_find_tools(ctx, "check the weather forecast")
    assert text.startswith("Available now: toolkit_weather_my")
    assert toolkit.get("toolkit_weather_my").description.split(".")[0] in text
    assert "Parameters:" in text
    assert ctx.state_get(STATE_KEY) == ["toolkit_weather_my"]


def test_finding_by_name_shows_the_whole_description(toolkit, workspace):
    ctx = finder_context(toolkit, workspace)
    text = toolkit_find_tools(ctx, "toolkit_file")
    assert " ".join(toolkit.get("toolkit_file").description.split()) in text
    assert "action (string, required) one of read, write, list, append" in text
    assert ctx.state_get(STATE_KEY, []) == []  # a core tool is always there already
    assert "toolkit_git" in toolkit_find_tools(ctx, "git")


def test_finding_nothing_lists_the_names(toolkit, workspace):
    ctx = finder_context(toolkit, workspace)
    text = toolkit_find_tools(ctx, "xylophone zebra")
    assert text.startswith("No installed tool matches") and "toolkit_weather_my" in text
    with pytest.raises(ToolError, match="need is empty"):
        toolkit_find_tools(ctx, "  ")
