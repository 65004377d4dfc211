from __future__ import annotations

from pathlib import Path

import pytest

from tea_agent_mini.errors import ToolError
from tea_agent_mini.store import Store, topic_scope
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.tools.commands import render_template, toolkit_custom_commands
from tea_agent_mini.tools.plan import toolkit_plan, toolkit_task_resume
from tea_agent_mini.tools.todo import toolkit_todo
from tea_agent_mini.tools.topics import complete_exchanges, toolkit_fork_session
from tea_agent_mini.types import Message, ToolCall


@pytest.fixture
def store(tmp_path: Path):
    store = Store.open(tmp_path / "chat.db")
    yield store
    store.close()


def make_ctx(store, workspace: Path, home: Path, topic_id: str | None) -> ToolContext:
    return ToolContext(workspace=workspace, home=home, store=store, topic_id=topic_id)


@pytest.fixture
def ctx(store, workspace: Path, tea_home: Path) -> ToolContext:
    return make_ctx(store, workspace, tea_home, store.topics.create("Build it").id)


# ---- plan -----------------------------------------------------------------------------------


def test_plan_lifecycle_renders_a_checklist(ctx):
    assert toolkit_plan(ctx, "show") == "There is no plan for this topic."
    out = toolkit_plan(ctx, "create", goal="Ship v1", steps=["write code", "test", "release"])
    assert out.splitlines() == [
        "Plan: Ship v1  (0/3 done)",
        "[ ] 1. write code",
        "[ ] 2. test",
        "[ ] 3. release",
        "Next: step 1. write code",
    ]
    toolkit_plan(ctx, "update_step", step=1, status="done", note="in src/")
    toolkit_plan(ctx, "update_step", step=2, status="in_progress")
    out = toolkit_plan(ctx, "add_step", steps=["write docs"], step=2)
    assert out.splitlines() == [
        "Plan: Ship v1  (1/4 done)",
        "[x] 1. write code  — in src/",
        "[>] 2. test  (in progress)",
        "[ ] 3. write docs",
        "[ ] 4. release",
        "Next: step 2. test",
    ]
    out = toolkit_plan(ctx, "complete")
    assert out.startswith("Plan: Ship v1  (completed)")
    assert "[-] 4. release  — left open when the plan was completed" in out
    assert "3 open step(s) were marked skipped" in out
    assert toolkit_plan(ctx, "clear") == "The plan was cleared."
    assert toolkit_plan(ctx, "show") == "There is no plan for this topic."


def test_only_one_step_is_in_progress(ctx):
    toolkit_plan(ctx, "create", goal="g", steps=["a", "b"])
    toolkit_plan(ctx, "update_step", step=1, status="in_progress")
    out = toolkit_plan(ctx, "update_step", step=2, status="in_progress")
    assert "[ ] 1. a\n[>] 2. b  (in progress)" in out


def test_plan_survives_closing_and_reopening_the_store(tmp_path: Path, workspace, tea_home):
    path = tmp_path / "chat.db"
    with Store.open(path) as store:
        topic = store.topics.create("long task").id
        ctx = make_ctx(store, workspace, tea_home, topic)
        toolkit_plan(ctx, "create", goal="Migrate the DB", steps=["backup", "migrate", "verify"])
        toolkit_plan(ctx, "update_step", step=1, status="done")
    with Store.open(path) as store:
        ctx = make_ctx(store, workspace, tea_home, topic)
        out = toolkit_plan(ctx, "show")
        assert "Plan: Migrate the DB  (1/3 done)" in out
        assert "Next: step 2. migrate" in out
        resumed = toolkit_task_resume(ctx)
        assert resumed.startswith("Unfinished work in this conversation:")
        assert "[x] 1. backup" in resumed


def test_task_resume_finds_the_most_recent_topic_with_open_work(store, workspace, tea_home):
    older = make_ctx(store, workspace, tea_home, store.topics.create("older").id)
    toolkit_todo(older, "add", items=["old thing"])
    recent_id = store.topics.create("Refactor parser").id
    recent = make_ctx(store, workspace, tea_home, recent_id)
    store.messages.add(recent_id, Message("user", "please refactor the parser"))
    toolkit_plan(recent, "create", goal="Refactor", steps=["split module", "add tests"])
    toolkit_todo(recent, "add", items=["check imports"])
    finished = make_ctx(store, workspace, tea_home, store.topics.create("done").id)
    toolkit_plan(finished, "create", goal="Done already", steps=["x"])
    toolkit_plan(finished, "update_step", step=1, status="done")
    here = make_ctx(store, workspace, tea_home, store.topics.create("new chat").id)

    out = toolkit_task_resume(here)
    assert f"'Refactor parser' (id {recent_id}" in out
    assert "Its last request was: please refactor the parser" in out
    assert "Plan: Refactor  (0/2 done)" in out
    assert "[ ] 1. check imports" in out
    assert "old thing" not in out and "Done already" not in out


def test_task_resume_with_nothing_open(ctx):
    assert "no unfinished plan" in toolkit_task_resume(ctx)


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"action": "create", "steps": ["a"]}, "needs 'goal'"),
        ({"action": "create", "goal": "g"}, "give the steps"),
        ({"action": "update_step", "status": "done"}, "needs 'step'"),
        ({"action": "update_step", "step": 5, "status": "done"}, "no step 5"),
        ({"action": "update_step", "step": 1}, "needs 'status'"),
        ({"action": "update_step", "step": 1, "status": "blocked"}, "status must be one of"),
        ({"action": "add_step", "steps": ["x"], "step": 9}, "between 0 and 1"),
        ({"action": "explode"}, "unknown action"),
    ],
)
def test_plan_user_errors(ctx, kwargs, fragment):
    toolkit_plan(ctx, "create", goal="g", steps=["only"])
    with pytest.raises(ToolError, match=fragment):
        toolkit_plan(ctx, **kwargs)


def test_updating_without_a_plan_says_to_create_one(ctx):
    with pytest.raises(ToolError, match="create one first"):
        toolkit_plan(ctx, "update_step", step=1, status="done")


# ---- custom commands ------------------------------------------------------------------------


@pytest.fixture
def plain_ctx(workspace: Path, tea_home: Path) -> ToolContext:
    return ToolContext(workspace=workspace, home=tea_home)


def test_save_list_render_and_delete_a_command(plain_ctx, tea_home):
    out = toolkit_custom_commands(
        plain_ctx,
        "save",
        name="review",
        template="Review $1 for $2.\nContext: $ARGUMENTS",
        description="Review a file",
    )
    path = tea_home / "commands" / "review.md"
    assert out == f"Saved /review in {path}."
    text = path.read_text(encoding="utf-8")
    assert text.startswith("---\ndescription: Review a file\nargument-hint: <arg1> <arg2>\n---\n")
    listing = toolkit_custom_commands(plain_ctx, "list")
    assert "/review <arg1> <arg2> — Review a file [user]" in listing
    rendered = toolkit_custom_commands(
        plain_ctx, "render", name="/review", args="main.py 'thread safety'"
    )
    assert rendered.endswith("Review main.py for thread safety.\nContext: main.py 'thread safety'")
    assert toolkit_custom_commands(plain_ctx, "delete", name="review").startswith("Deleted")
    assert not path.exists()
    with pytest.raises(ToolError, match="no command named 'review'"):
        toolkit_custom_commands(plain_ctx, "get", name="review")


def test_project_commands_override_user_commands(plain_ctx, workspace, tea_home):
    toolkit_custom_commands(plain_ctx, "save", name="fix", template="user version $ARGUMENTS")
    toolkit_custom_commands(
        plain_ctx, "save", name="fix", template="project version $ARGUMENTS", scope="project"
    )
    assert (workspace / ".tea_agent" / "commands" / "fix.md").is_file()
    out = toolkit_custom_commands(plain_ctx, "render", name="fix", args=["bug 12"])
    assert out.endswith("project version bug 12")
    out = toolkit_custom_commands(plain_ctx, "delete", name="fix")
    assert out.endswith("The user version remains.")
    out = toolkit_custom_commands(plain_ctx, "render", name="fix", args="x")
    assert out.endswith("user version x")


def test_a_hand_written_command_file_is_used_as_is(plain_ctx, tea_home):
    folder = tea_home / "commands"
    folder.mkdir()
    (folder / "explain.md").write_text(
        "---\ndescription: Explain code\nargument-hint: [file]\n---\n\nExplain $1 simply.\n",
        encoding="utf-8",
    )
    (folder / "fix.md").write_text(
        "---\nargument-hint: [issue] [priority]\ndescription: Fix an issue\n---\nFix #$1 ($2)\n",
        encoding="utf-8",
    )
    (folder / "bare.md").write_text("Summarise the repository.\n", encoding="utf-8")
    listing = toolkit_custom_commands(plain_ctx, "list")
    assert "/explain [file] — Explain code" in listing
    assert "/fix [issue] [priority] — Fix an issue" in listing
    out = toolkit_custom_commands(plain_ctx, "render", name="fix", args="12 high")
    assert out.endswith("Fix #12 (high)")
    got = toolkit_custom_commands(plain_ctx, "get", name="explain")
    assert "description: Explain code" in got and got.endswith("Explain $1 simply.")
    out = toolkit_custom_commands(plain_ctx, "render", name="bare", args="briefly")
    assert out.endswith("Summarise the repository.\n\nARGUMENTS: briefly")


@pytest.mark.parametrize(
    ("template", "args", "expected", "missing"),
    [
        ("$1 and $2", "a b", "a and b", []),
        ("all: $@", ["x", "y z"], "all: x y z", []),
        ("rest: ${@:2}", "a b c", "rest: b c", []),
        ("slice: ${@:2:1}", "a b c", "slice: b", []),
        ("$1-$3", "a", "a-", ["$3"]),
        ("keep $1", ["$2 literally"], "keep $2 literally", []),
        ("quote: $1", "'unbalanced", "quote: 'unbalanced", []),
        ("no placeholders", "", "no placeholders", []),
    ],
)
def test_render_template(template, args, expected, missing):
    assert render_template(template, args) == (expected, missing)


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        ({"action": "save", "name": "../evil", "template": "x"}, "'name' must be"),
        ({"action": "save", "name": "ok"}, "needs 'template'"),
        ({"action": "save", "name": "ok", "template": "x", "scope": "global"}, "scope must be"),
        ({"action": "render", "name": "missing"}, "no command named"),
        ({"action": "launch", "name": "x"}, "unknown action"),
    ],
)
def test_custom_command_errors(plain_ctx, kwargs, fragment):
    with pytest.raises(ToolError, match=fragment):
        toolkit_custom_commands(plain_ctx, **kwargs)


# ---- fork -----------------------------------------------------------------------------------


def add_conversation(store, topic_id: str) -> list[Message]:
    call = ToolCall("call_1", "toolkit_gettime", "{}")
    messages = [
        Message("user", "what time is it?"),
        Message("assistant", None, tool_calls=(call,)),
        Message("tool", "12:00", tool_call_id="call_1", name="toolkit_gettime"),
        Message("assistant", "It is noon."),
        Message("user", "fork this please"),
        Message("assistant", None, tool_calls=(ToolCall("call_2", "toolkit_fork_session"),)),
    ]
    return [store.messages.add(topic_id, m) for m in messages]


def test_fork_copies_messages_prompt_and_state(ctx, store):
    stored = add_conversation(store, ctx.topic_id)
    store.topics.set_system_prompt(ctx.topic_id, "Answer tersely.")
    toolkit_plan(ctx, "create", goal="g", steps=["s"])
    out = toolkit_fork_session(ctx, title="Alternative")
    fork = store.topics.recent(limit=1)[0]
    assert fork.id != ctx.topic_id and fork.title == "Alternative"
    assert f"(id {fork.id})" in out and "Forked 5 message(s)" in out
    copied = store.messages.of_topic(fork.id)
    # the trailing call to the fork itself has no result yet and is left out
    assert [(m.role, m.content, m.tool_call_id) for m in copied] == [
        (m.role, m.content, m.tool_call_id) for m in stored[:5]
    ]
    assert copied[1].tool_calls == stored[1].tool_calls
    assert fork.system_prompt == "Answer tersely."
    assert store.state.get(topic_scope(fork.id), "plan")["goal"] == "g"
    assert store.messages.count(ctx.topic_id) == 6


def test_fork_up_to_a_message(ctx, store):
    stored = add_conversation(store, ctx.topic_id)
    toolkit_fork_session(ctx, up_to_message_id=stored[3].id)
    fork = store.topics.recent(limit=1)[0]
    assert fork.title == "Fork of Build it"
    assert [m.content for m in store.messages.of_topic(fork.id)][-1] == "It is noon."
    with pytest.raises(ToolError, match="not part of this conversation"):
        toolkit_fork_session(ctx, up_to_message_id=10_000)


def test_complete_exchanges_cuts_before_an_unanswered_call():
    call = ToolCall("c", "t")
    messages = [Message("user", "hi"), Message("assistant", None, tool_calls=(call,))]
    assert complete_exchanges(messages) == messages[:1]
