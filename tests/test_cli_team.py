"""/team and /inbox in the terminal chat: teammates an earlier process ran show offline, the
lead's inbox is read once, and a teammate spawned in a chat answers while /inbox waits."""

from __future__ import annotations

from pathlib import Path

from tests.agents.test_subagents import last_user, system_text
from tests.fakes.script import Reply, ToolCallSpec
from tests.pg import home_store
from tests.test_cli import cli


def seed_team(home: Path) -> None:
    """A teammate left ``idle`` by a process that crashed, with mail both ways."""
    store = home_store(home)
    try:
        topic = store.topics.create(title="teammate alice", source="subagent").id
        store.teammates.add("alice", "reviewer", "", None, topic)
        store.inbox.send("lead", "alice", "are you there?")
        store.inbox.send("alice", "lead", "the parser looks fine")
    finally:
        store.close()


def test_team_lists_teammates_and_inbox_reads_the_leads_messages(
    tea_home, model_config, scripted_server
):
    seed_team(tea_home)
    result = cli("chat", stdin="/team\n/inbox\n/inbox\n/help\n/exit\n")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "alice" in out and "offline" in out and "1 unread  reviewer" in out
    assert "alice (message):\nthe parser looks fine" in out
    assert out.count("the parser looks fine") == 1 and "the inbox is empty" in out
    assert "/team" in out and "/inbox [SECONDS]" in out


def test_a_teammate_spawned_in_the_chat_answers_while_inbox_waits(model_config, scripted_server):
    scripted_server.on(
        lambda request: "You are bob, a teammate" in system_text(request),
        lambda request: Reply(text="bob on: " + last_user(request).splitlines()[-1]),
    )
    scripted_server.push(
        Reply(
            tool_calls=[
                ToolCallSpec(
                    "toolkit_spawn_teammate", {"name": "bob", "role": "tester", "prompt": ""}
                )
            ]
        ),
        Reply(tool_calls=[ToolCallSpec("toolkit_send_message", {"to": "bob", "text": "run it"})]),
        Reply(text="asked bob"),
    )
    result = cli("chat", stdin="form a team\n/inbox 10\n/team\n/exit\n")
    assert result.returncode == 0, result.stderr
    assert "bob (message):\nbob on: run it" in result.stdout
    listed = result.stdout.split("bob on: run it", 1)[1]  # /team, after the inbox
    assert "bob              idle       0 unread  tester" in listed
