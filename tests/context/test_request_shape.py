"""What a request costs and how it starts: the prompt budget, the stable prefix, small windows.

Driven through the runtime against the scripted model server, which reports reused prompt
tokens the way llama.cpp does with one cache slot (the common prefix with the previous request).
"""

from __future__ import annotations

import asyncio
import json

import pytest

from tea_agent_mini.config import load_config
from tea_agent_mini.llm.tokens import estimate_messages_tokens, estimate_tools_tokens
from tea_agent_mini.runtime import Runtime
from tea_agent_mini.toolkit.selection import CORE_TOOLS
from tea_agent_mini.types import Done, Error, ToolResult, Usage
from tests.fakes.background import turn_requests
from tests.fakes.script import without_context_block
from tests.fakes.scripted_server import Reply, ToolCallSpec

PLAIN_TASK = "Create hello.py that prints hello world, then run it."


def configure(scripted_server, write_config, workspace, max_context_tokens=0, **agent):
    model = {
        "api_key": "sk-test-key-0000",
        "api_url": scripted_server.base_url,
        "model_name": "scripted-model",
    }
    if max_context_tokens:
        model["max_context_tokens"] = max_context_tokens
    write_config({"main_model": model, "agent": {"workspace": str(workspace), **agent}})


def run_turns(*texts: str, topic_id: str | None = None):
    async def go():
        runtime = Runtime(load_config())
        try:
            session = runtime.session(topic_id)
            turns = []
            for text in texts:
                turns.append([e async for e in session.run_turn(text)])
            return turns
        finally:
            await runtime.aclose()

    return asyncio.run(go())


def tokens(request: dict) -> int:
    return estimate_messages_tokens(request["messages"]) + estimate_tools_tokens(
        request.get("tools")
    )


def tool_names(request: dict) -> list[str]:
    return [t["function"]["name"] for t in request.get("tools", [])]


def write_then_answer(scripted_server):
    call = ToolCallSpec(
        "toolkit_file", {"action": "write", "filename": "hello.py", "content": "print(1)"}
    )
    scripted_server.push(Reply(tool_calls=[call]), Reply(text="Done: hello.py written."))


@pytest.mark.parametrize(("window", "limit"), [(8192, 3000), (16384, 3000), (0, 6000)])
def test_the_first_request_of_a_plain_task_stays_small(
    scripted_server, write_config, workspace, window, limit
):
    configure(scripted_server, write_config, workspace, window)
    scripted_server.push(Reply(text="ok"))
    run_turns(PLAIN_TASK)
    request = turn_requests(scripted_server)[0]
    assert tokens(request) <= limit
    assert set(CORE_TOOLS) <= set(tool_names(request)) and len(tool_names(request)) < 12
    if window:
        prefix = estimate_messages_tokens(request["messages"][:1])
        assert prefix + estimate_tools_tokens(request["tools"]) <= window * 0.4


def test_requests_of_a_turn_share_their_prefix_byte_for_byte(
    scripted_server, write_config, workspace
):
    configure(scripted_server, write_config, workspace, 8192)
    write_then_answer(scripted_server)
    (events,) = run_turns(PLAIN_TASK)
    assert isinstance(events[-1], Done)
    first, second = turn_requests(scripted_server)
    assert second["tools"] == first["tools"]
    body_1 = json.dumps(first["messages"], ensure_ascii=False)
    body_2 = json.dumps(second["messages"], ensure_ascii=False)
    assert body_2.startswith(body_1[:-1])  # all of request 1 but its closing bracket
    usage = [e for e in events if isinstance(e, Usage)]
    assert usage[1].cached_tokens >= 0.9 * usage[1].prompt_tokens


def test_a_new_turn_keeps_the_system_prompt_and_tools(scripted_server, write_config, workspace):
    configure(scripted_server, write_config, workspace, 8192)
    write_then_answer(scripted_server)
    scripted_server.push(Reply(text="It prints 1."))
    first_turn, second_turn = run_turns(PLAIN_TASK, "What does hello.py print?")
    assert isinstance(second_turn[-1], Done)
    requests = turn_requests(scripted_server)
    assert len(requests) == 3
    assert requests[2]["messages"][0] == requests[0]["messages"][0]
    assert requests[2]["tools"][: len(requests[0]["tools"])] == requests[0]["tools"]
    # the earlier turn's messages come back as they were sent, without its context block
    earlier = requests[2]["messages"][1]
    assert earlier == {"role": "user", "content": PLAIN_TASK}


def test_the_time_stays_out_of_the_system_prompt(scripted_server, write_config, workspace):
    configure(scripted_server, write_config, workspace)
    scripted_server.push(Reply(text="ok"))
    run_turns("hi")
    system, user = turn_requests(scripted_server)[0]["messages"]
    assert "Local time" not in system["content"] and "Date: " in system["content"]
    assert "Local time" in user["content"] and without_context_block(user["content"]) == "hi"


def test_relevant_tools_join_and_stay_in_order(scripted_server, write_config, workspace):
    configure(scripted_server, write_config, workspace, 8192)
    scripted_server.push(Reply(text="ok"), Reply(text="ok"), Reply(text="ok"))
    run_turns("hi", "What's the weather in Paris tomorrow?", "and in Rome?")
    first, weather, rome = turn_requests(scripted_server)
    assert "toolkit_weather_my" not in tool_names(first)
    assert tool_names(weather)[: len(tool_names(first))] == tool_names(first)
    assert "toolkit_weather_my" in tool_names(weather)
    assert tool_names(rome) == tool_names(weather)  # once joined, it stays: the prefix holds


def test_a_tool_found_mid_turn_is_appended_to_the_list(scripted_server, write_config, workspace):
    configure(scripted_server, write_config, workspace, 8192)
    find = ToolCallSpec("toolkit_find_tools", {"need": "send an email"})
    scripted_server.push(Reply(tool_calls=[find]), Reply(text="I can send it now."))
    (events,) = run_turns("Tell Bob that the build is green.")
    assert isinstance(events[-1], Done)
    found = next(e for e in events if isinstance(e, ToolResult))
    assert found.ok and "toolkit_send_email" in found.output
    first, second = turn_requests(scripted_server)
    assert "toolkit_send_email" not in tool_names(first)
    assert tool_names(second)[: len(tool_names(first))] == tool_names(first)
    assert "toolkit_send_email" in tool_names(second)[len(tool_names(first)) :]
    assert second["messages"][: len(first["messages"])] == first["messages"]


def test_a_window_too_small_fails_at_once_and_says_what_to_change(
    scripted_server, write_config, workspace
):
    configure(scripted_server, write_config, workspace, 1024)
    (events,) = run_turns(PLAIN_TASK)
    error = events[-1]
    assert isinstance(error, Error) and error.kind == "context"
    assert "1,024" in error.message and "max_context_tokens" in error.message
    assert "needs about" in error.message
    assert turn_requests(scripted_server) == []  # nothing was sent


def test_a_long_message_is_cut_but_never_to_nothing(scripted_server, write_config, workspace):
    configure(scripted_server, write_config, workspace, 8192)
    scripted_server.push(Reply(text="ok"))
    words = " ".join(f"word{i}" for i in range(20_000))
    (events,) = run_turns(f"Summarise this: {words}")
    assert isinstance(events[-1], Done)
    sent = without_context_block(turn_requests(scripted_server)[0]["messages"][-1]["content"])
    assert sent.startswith("Summarise this: word0") and len(sent) >= 1024
    assert tokens(turn_requests(scripted_server)[0]) <= 8192 * 0.8


@pytest.mark.parametrize(
    ("window", "setting", "expected"),
    [
        (8192, "auto", "compact"),
        (65536, "auto", "full"),
        (0, "auto", "full"),
        (65536, "compact", "compact"),
        (8192, "full", "full"),
    ],
)
def test_the_prompt_profile(scripted_server, write_config, workspace, window, setting, expected):
    configure(scripted_server, write_config, workspace, window, prompt=setting)
    runtime = Runtime(load_config())
    try:
        assert runtime.prompt_profile == expected
        assert runtime.tool_menu.detail == expected
    finally:
        asyncio.run(runtime.aclose())


def test_the_context_names_the_workspace_top_level(scripted_server, write_config, workspace):
    configure(scripted_server, write_config, workspace, 8192)
    (workspace / "notes.txt").write_text("x")
    (workspace / "src").mkdir()
    (workspace / ".git").mkdir()
    (workspace / "node_modules").mkdir()
    for i in range(30):
        (workspace / f"f{i:02d}.md").write_text("x")
    scripted_server.push(Reply(text="ok"))
    run_turns("what is in notes.txt?")
    block = turn_requests(scripted_server)[0]["messages"][-1]["content"]
    line = next(x for x in block.splitlines() if x.startswith("Workspace top level: "))
    assert "f00.md" in line and "notes.txt" not in line  # sorted, 25 shown in compact
    assert line.endswith("and 7 more.") and ".git" not in line and "node_modules" not in line


@pytest.mark.parametrize(
    ("window", "cap"), [(8192, None), (8192, 100), (8192, 3000), (0, None), (0, 300)]
)
def test_a_reply_may_use_what_the_window_leaves(
    scripted_server, write_config, workspace, window, cap
):
    model = {"api_url": scripted_server.base_url, "model_name": "scripted-model"}
    if window:
        model["max_context_tokens"] = window
    if cap:
        model["max_tokens"] = cap
    write_config({"main_model": model, "agent": {"workspace": str(workspace)}})
    scripted_server.push(Reply(text="ok"))
    run_turns("hi")
    request = turn_requests(scripted_server)[0]
    sent = request.get("max_tokens")
    if cap:
        assert sent == cap  # the configured cap, within the room the window leaves
    elif window:
        assert sent == window // 4  # a quarter of the window: a model that never stops
    else:
        assert sent is None
