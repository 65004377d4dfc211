"""The home tasks: the scheduled-task judge through the real CLI, memory, skill and MCP judges,
and the harness's own MCP server through the agent's MCP client."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest
from teaeval import mcp_server
from teaeval.runner import find_tasks
from teaeval.sandbox import AgentRun, ModelSettings, Sandbox, config_data, run_cli, write_config
from teaeval.task import Case, JudgeInput, Verdict
from teaeval.tasks_home import parse_task_list

from tea_agent_mini.config import load_config
from tea_agent_mini.mcp.manager import McpManager
from tea_agent_mini.skills.loader import load_skills


def answered(text: str, topic: str = "topic-2") -> AgentRun:
    return AgentRun(0, "", "", 1.0, {"ok": True, "answer": text, "topic_id": topic})


def no_cli(args: Sequence[str]) -> AgentRun:
    raise AssertionError("this judge needs no CLI")


def judge(
    name: str, sandbox: Sandbox, runs: Sequence[AgentRun], cli=no_cli
) -> tuple[Case, Verdict]:
    [task] = find_tasks([name])
    case = task.case("test-seed")
    given = JudgeInput(sandbox.workspace, sandbox.home, case, list(runs), cli)
    return case, task.judge(given)


@pytest.fixture
def sandbox(tmp_path: Path) -> Sandbox:
    workspace, home = tmp_path / "workspace", tmp_path / "home"
    workspace.mkdir()
    home.mkdir()
    return Sandbox(tmp_path, workspace, home)


def test_schedule_task_judged_from_the_real_task_list(sandbox, agent_cli):
    [task] = find_tasks(["schedule_task"])
    clock = task.case("test-seed").facts["clock"]

    def cli(args):
        return run_cli(agent_cli, args, sandbox, 60)

    assert "no task was scheduled" in judge("schedule_task", sandbox, [], cli)[1].reason
    wrong = "00:05" if clock != "00:05" else "00:10"
    add = ["tasks", "add", "--name", "nightly-backup", "--command", "echo backup"]
    assert cli([*add, "--schedule", f"daily:{wrong}"]).exit_code == 0
    verdict = judge("schedule_task", sandbox, [], cli)[1]
    assert not verdict.passed and f"not {clock}" in verdict.reason
    assert cli([*add[:3], "backup-2", *add[4:], "--schedule", f"daily:{clock}"]).exit_code == 0
    assert judge("schedule_task", sandbox, [], cli)[1].passed


def test_the_task_list_parser_reads_names_states_times_and_commands():
    output = (
        "2 task(s):\n"
        "#1 nightly [shell, enabled] daily:03:30 (every day at 03:30)\n"
        "    next: 2026-05-02 03:30:00 CEST   last: - (never run)\n"
        "    command: echo backup\n"
        "#2 ask [prompt, disabled, notify] hourly:15 tz=UTC (every hour at :15)\n"
        "    next: -   last: - (never run)\n"
        "    prompt: say hi\n"
    )
    first, second = parse_task_list(output)
    assert (first.name, first.kind, first.enabled) == ("nightly", "shell", True)
    assert (first.next_clock, first.text) == ("03:30", "echo backup")
    assert (second.kind, second.enabled, second.next_clock, second.text) == (
        "prompt",
        False,
        "",
        "say hi",
    )


def test_remember_fact(sandbox):
    [task] = find_tasks(["remember_fact"])
    colour = task.case("test-seed").facts["colour"]
    first = answered("Noted.", "topic-1")
    assert judge("remember_fact", sandbox, [first, answered(f"It is {colour}.")])[1].passed
    assert not judge("remember_fact", sandbox, [first, answered("I don't know.")])[1].passed
    same_topic = [first, answered(f"It is {colour}.", "topic-1")]
    assert "two topics" in judge("remember_fact", sandbox, same_topic)[1].reason


def test_the_skill_is_valid_and_its_judge_wants_the_codename(sandbox):
    [task] = find_tasks(["use_skill"])
    case = task.case("test-seed")
    sandbox.lay_out(case.files, sandbox.workspace)
    catalog = load_skills(None, sandbox.workspace, bundled=False)
    assert list(catalog.skills) == ["release-notes"] and catalog.problems == []
    assert case.facts["codename"] in catalog.skills["release-notes"].body
    assert "not written" in judge("use_skill", sandbox, [])[1].reason
    notes = sandbox.workspace / "RELEASE_NOTES.md"
    notes.write_text(f"# Release {case.facts['version']}\n\n- faster start-up\n")
    assert "Codename" in judge("use_skill", sandbox, [])[1].reason
    notes.write_text(
        f"# Release {case.facts['version']}\nCodename: {case.facts['codename']}\n- faster\n"
    )
    assert judge("use_skill", sandbox, [])[1].passed


def test_the_mcp_server_speaks_plain_json_rpc():
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "x"}}
    assert mcp_server.handle(init, "S")["result"]["protocolVersion"] == "2025-06-18"
    assert mcp_server.handle({"jsonrpc": "2.0", "method": "notifications/initialized"}, "S") is None
    call = {"name": "order_status", "arguments": {"order_id": "12"}}
    reply = mcp_server.handle({"id": 2, "method": "tools/call", "params": call}, "S")
    assert reply["result"]["content"][0]["text"].endswith("tracking code S-12")
    bad = mcp_server.handle({"id": 3, "method": "tools/call", "params": {"name": "x"}}, "S")
    assert bad["result"]["isError"] is True
    assert mcp_server.handle({"id": 4, "method": "resources/list"}, "S")["error"]["code"] == -32601


def test_the_mcp_task_config_runs_the_server_through_the_agents_mcp_manager(sandbox):
    [task] = find_tasks(["use_mcp_tool"])
    case = task.case("test-seed")
    settings = ModelSettings(model="m")
    data = config_data(settings, "http://x/v1", "http://x/v1", sandbox.workspace, case.config)
    write_config(sandbox.home, data)
    config = load_config(home=sandbox.home, env={})
    manager = McpManager(config.mcp_servers, sandbox.home, startup_timeout=20)
    try:
        [status] = manager.start()
        assert status.state == "ready", status
        order = case.facts["code"].rsplit("-", 1)[1]
        text = manager.call_tool("orders", "order_status", {"order_id": int(order)})
    finally:
        manager.close()
    assert case.facts["code"] in text
    assert judge("use_mcp_tool", sandbox, [answered(f"Tracking: {case.facts['code']}")])[1].passed
    assert not judge("use_mcp_tool", sandbox, [answered("Tracking: unknown")])[1].passed


def test_the_server_answers_over_stdio(tmp_path):
    import subprocess

    lines = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]
    result = subprocess.run(
        [sys.executable, str(Path(mcp_server.__file__))],
        input="".join(json.dumps(line) + "\n" for line in lines) + "not json\n",
        capture_output=True,
        text=True,
        timeout=30,
    )
    replies = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r.get("id") for r in replies] == [1, 2, None]
    assert replies[1]["result"]["tools"][0]["name"] == "order_status"
    assert replies[2]["error"]["code"] == -32700
