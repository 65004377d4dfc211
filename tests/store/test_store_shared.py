"""Files several instances on one PostgreSQL share: profiles and self-made tools (issue 17)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import yaml

from tea_agent_mini.config import load_config
from tea_agent_mini.home_sync import share_files
from tea_agent_mini.runtime import Runtime
from tea_agent_mini.store import Store
from tea_agent_mini.toolkit.executor import ToolExecutor
from tea_agent_mini.types import ToolCall, ToolResult
from tests.fakes.scripted_server import Reply, ToolCallSpec

GREET = "def greet(ctx, who):\n    return 'hello ' + who\n"
SCHEMA = {"type": "object", "properties": {"who": {"type": "string"}}, "required": ["who"]}


def test_publish_and_catch_up_between_two_homes(postgres_url, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    (a / "tools").mkdir(parents=True)
    b.mkdir()
    (a / "work.yaml").write_text("agent:\n  max_iterations: 7\n", encoding="utf-8")
    (a / "tools" / "greet.py").write_text(GREET, encoding="utf-8")
    with Store.open(postgres_url) as one, Store.open(postgres_url) as two:
        assert two.shared.catch_up(b) == []
        assert one.shared.publish(a, ["work.yaml"], "config") == 1
        assert one.shared.publish(a, ["tools/greet.py", "tools/greet.json"], "user_tools") == 2
        changed = two.shared.catch_up(b)
        assert [f.path for f in changed] == ["work.yaml", "tools/greet.py"]  # .json: absent
        assert (b / "tools" / "greet.py").read_text(encoding="utf-8") == GREET
        assert (b / "work.yaml").stat().st_mode & 0o077 == 0
        assert two.shared.catch_up(b) == []  # nothing new: one query
        (a / "tools" / "greet.py").unlink()
        one.shared.publish(a, ["tools/greet.py"], "user_tools")  # deleted on A
        assert [f.content for f in two.shared.catch_up(b)] == [None]
        assert not (b / "tools" / "greet.py").exists()
        with pytest.raises(ValueError, match="cannot be shared"):
            one.shared.publish(a, ["../etc/passwd"], "config")


def test_sqlite_shares_nothing(tmp_path):
    with Store.open(tmp_path / "chat.db") as store:
        (tmp_path / "config.yaml").write_text("{}", encoding="utf-8")
        assert not store.shared.enabled
        assert store.shared.publish(tmp_path, ["config.yaml"], "config") == 0
        assert store.shared.catch_up(tmp_path) == []
        assert store.db.query_one("SELECT count(*) FROM shared_files")[0] == 0


def make_home(path: Path, scripted_server, url: str, workspace: Path) -> Path:
    path.mkdir()
    config = {
        "main_model": {
            "api_key": "sk-test-key-0000",
            "api_url": scripted_server.base_url,
            "model_name": "scripted-model",
        },
        "agent": {"workspace": str(workspace), "max_iterations": 10},
        "store": {"url": url},
    }
    (path / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def run(runtime: Runtime, text: str, topic_id: str | None = None) -> list:
    async def go():
        session = runtime.session(topic_id)
        return [event async for event in session.run_turn(text)]

    return asyncio.run(go())


def test_a_tool_saved_on_one_instance_is_callable_on_the_others_next_turn(
    scripted_server, postgres_url, tmp_path, workspace
):
    a = Runtime(
        load_config(home=make_home(tmp_path / "a", scripted_server, postgres_url, workspace))
    )
    b = Runtime(
        load_config(home=make_home(tmp_path / "b", scripted_server, postgres_url, workspace))
    )
    try:
        scripted_server.push(Reply(text="hi"))
        run(b, "hello")  # B is up, its toolkit built, before A makes the tool
        assert b.toolkit.get("greet") is None
        topic = a.store.topics.create("a")
        executor = ToolExecutor(a.toolkit, a.tool_context(topic.id))
        arguments = {"name": "greet", "description": "Greet someone.", "parameters": SCHEMA}
        call = ToolCall(
            id="c1", name="toolkit_save", arguments=json.dumps({**arguments, "code": GREET})
        )
        saved = asyncio.run(executor.run(call))
        assert saved.ok, saved.error

        scripted_server.push(
            Reply(tool_calls=[ToolCallSpec("greet", {"who": "bob"})]), Reply(text="done")
        )
        events = run(b, "greet bob")
        results = [e for e in events if isinstance(e, ToolResult)]
        assert [(r.name, r.ok, r.output) for r in results] == [("greet", True, "hello bob")]
        assert (b.config.home / "tools" / "greet.json").is_file()
    finally:
        asyncio.run(a.aclose())
        asyncio.run(b.aclose())


def test_a_profile_changed_on_one_instance_reaches_the_other(
    scripted_server, postgres_url, tmp_path, workspace
):
    a = Runtime(
        load_config(home=make_home(tmp_path / "a", scripted_server, postgres_url, workspace))
    )
    b = Runtime(
        load_config(home=make_home(tmp_path / "b", scripted_server, postgres_url, workspace))
    )
    try:
        scripted_server.push(Reply(text="hi"))
        run(b, "hello")
        old_llm = b.main_llm
        path = a.config.home / "config.yaml"
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        data["agent"]["max_iterations"] = 3
        data["main_model"]["temperature"] = 0.25
        path.write_text(yaml.safe_dump(data), encoding="utf-8")
        assert share_files(a, [a.profile_file()], "config") > 0

        scripted_server.push(Reply(text="again"))
        run(b, "hello again")
        assert b.config.agent.max_iterations == 3 and b.config.main_model.temperature == 0.25
        assert b.config.workspace == workspace.resolve()  # kept, as the store is
        assert b.main_llm is not old_llm  # rebuilt from the new settings
        saved = yaml.safe_load((b.config.home / "config.yaml").read_text(encoding="utf-8"))
        assert saved["agent"]["max_iterations"] == 3
    finally:
        asyncio.run(a.aclose())
        asyncio.run(b.aclose())
