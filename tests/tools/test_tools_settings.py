from __future__ import annotations

import asyncio
import inspect
import json
import os
import sys
from pathlib import Path

import pytest

from tea_agent_mini._version import __version__
from tea_agent_mini.config import load_config
from tea_agent_mini.context.modes import mode_prompt_section
from tea_agent_mini.errors import ToolError
from tea_agent_mini.runtime import Runtime
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.executor import ToolExecutor
from tea_agent_mini.toolkit.registry import Toolkit
from tea_agent_mini.tools.introspect import has_fts5, toolkit_harness_schema, toolkit_self_report
from tea_agent_mini.tools.modes import toolkit_mode
from tea_agent_mini.tools.settings import (
    public_url,
    toolkit_config,
    toolkit_get_config_path,
    toolkit_get_models,
    toolkit_list_provider_models,
    toolkit_toggle_reasoning,
)
from tea_agent_mini.types import Message, ToolCall

API_KEY = "sk-test-key-0000"


@pytest.fixture
def runtime(model_config):
    runtime = Runtime(load_config())
    yield runtime
    asyncio.run(runtime.aclose())


@pytest.fixture
def ctx(runtime) -> ToolContext:
    return runtime.tool_context(runtime.store.topics.create("t").id)


def run_tool(ctx: ToolContext, module: str, name: str, **arguments):
    """Run a tool the way a session does: through the executor, in a worker thread."""
    executor = ToolExecutor(Toolkit.load([module]), ctx)
    call = ToolCall(id="c1", name=name, arguments=json.dumps(arguments))
    return asyncio.run(executor.run(call))


def assert_no_secret(value) -> None:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    assert "sk-test" not in text and "****" not in text


# ---- config ---------------------------------------------------------------------------------


def test_config_set_changes_the_running_agent(runtime, ctx):
    out = toolkit_config(ctx, "set", key="agent.max_iterations", value="20")
    assert out.startswith("agent.max_iterations: 50 → 20.")
    assert runtime.config.agent.max_iterations == 20
    toolkit_config(ctx, "set", key="main_model.temperature", value=0.3)
    # the live model client shares the config, so the next request carries it
    assert runtime.main_llm.build_body([])["temperature"] == 0.3
    toolkit_config(ctx, "set", key="main_model.temperature", value=None)
    assert "temperature" not in runtime.main_llm.build_body([])
    toolkit_config(ctx, "set", key="agent.approval", value="never")
    assert runtime.config.agent.approval == "never" and ctx.approval == "never"
    history = runtime.store.state.get("runtime", "config_history")
    assert [(h["key"], h["old"], h["new"]) for h in history] == [
        ("agent.max_iterations", 50, 20),
        ("main_model.temperature", None, 0.3),
        ("main_model.temperature", 0.3, None),
        ("agent.approval", "auto", "never"),
    ]
    shown = toolkit_config(ctx, "history")
    assert shown.splitlines()[0] == "4 change(s), newest first:"
    assert "agent.approval: 'auto' → 'never'" in shown.splitlines()[1]


def test_config_set_goes_through_approval(ctx):
    ctx.approval = "never"
    result = run_tool(
        ctx, "settings", "toolkit_config", action="set", key="agent.approval", value="auto"
    )
    assert not result.ok and "read-only mode" in result.error
    listed = run_tool(ctx, "settings", "toolkit_config", action="list")
    assert listed.ok and "agent.approval = 'auto'" in listed.output


def test_config_never_shows_secrets(runtime, ctx):
    outputs = [
        toolkit_config(ctx, "list"),
        toolkit_config(ctx, "get", key="main_model.max_tokens"),
        toolkit_get_models(ctx),
        toolkit_get_config_path(ctx),
        toolkit_harness_schema(ctx),
    ]
    for output in outputs:
        assert_no_secret(output)
    for key in ("main_model.api_key", "server.api_key", "main_model.api_url"):
        with pytest.raises(ToolError, match="is not a runtime setting") as info:
            toolkit_config(ctx, "get", key=key)
        assert_no_secret(str(info.value))


@pytest.mark.parametrize(
    ("key", "value", "fragment"),
    [
        ("agent.max_iterations", 0, "from 1 to 1000"),
        ("agent.max_iterations", 2.5, "an integer"),
        ("agent.max_iterations", None, "needs a value"),
        ("agent.approval", "sometimes", "one of auto, ask, never"),
        ("main_model.temperature", "hot", "a number from 0 to 2"),
        ("agent.exec_timeout", True, "a number"),
    ],
)
def test_config_rejects_bad_values(runtime, ctx, key, value, fragment):
    before = toolkit_config(ctx, "list")
    with pytest.raises(ToolError, match=fragment):
        toolkit_config(ctx, "set", key=key, value=value)
    assert toolkit_config(ctx, "list") == before


def test_config_path_and_models(runtime, ctx, tea_home, model_config, scripted_server):
    paths = toolkit_get_config_path(ctx)
    assert paths["home"] == str(tea_home)
    assert paths["config_file"] == str(model_config) and paths["config_file_exists"]
    assert paths["profile"] == "default" and paths["profiles"] == ["default"]
    if os.environ.get("TEA_AGENT_STORE_URL"):  # --store postgres: the URL without credentials
        assert paths["database"] == load_config().store_target.replace("postgres@", "")
    else:
        assert paths["database"] == str(tea_home / "chat.db") and paths["database_bytes"] > 0
    assert paths["folders"]["kb"] == str(tea_home / "kb")
    models = toolkit_get_models(ctx)
    assert models["main"]["model_name"] == "scripted-model"
    assert models["main"]["api_url"] == scripted_server.base_url
    assert models["main"]["api_key_set"] is True
    assert models["cheap"] == "same as main"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (
            "https://user:secret@api.example.com:8443/v1?key=abc#x",
            "https://api.example.com:8443/v1",
        ),
        ("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1"),
    ],
)
def test_public_url_drops_credentials(url, shown):
    assert public_url(url) == shown


def test_list_provider_models_through_the_executor(ctx, scripted_server):
    result = run_tool(ctx, "settings", "toolkit_list_provider_models")
    assert result.ok, result.error
    data = json.loads(result.output)
    assert data["models"] == ["scripted-model"]
    assert data["configured_offered"] is True


def test_list_provider_models_is_awaited_on_the_callers_loop(ctx):
    assert inspect.iscoroutinefunction(toolkit_list_provider_models)
    assert asyncio.run(toolkit_list_provider_models(ctx))["models"] == ["scripted-model"]


def test_list_provider_models_reports_a_dead_endpoint(ctx, scripted_server):
    scripted_server.stop()
    with pytest.raises(ToolError, match="failed"):
        asyncio.run(toolkit_list_provider_models(ctx))


def test_runtime_tools_need_the_runtime(workspace, tea_home):
    bare = ToolContext(workspace=workspace, home=tea_home)
    with pytest.raises(ToolError, match="needs the agent runtime"):
        toolkit_get_models(bare)


def test_toggle_reasoning(runtime, ctx):
    assert toolkit_toggle_reasoning(ctx) == "Reasoning display is now on (was off)."
    assert runtime.store.state.get("runtime", "show_reasoning") is True
    assert toolkit_toggle_reasoning(ctx, show=True) == "Reasoning display is now on (was on)."
    assert toolkit_toggle_reasoning(ctx) == "Reasoning display is now off (was on)."
    assert runtime.store.state.get("runtime", "show_reasoning") is False


# ---- modes ----------------------------------------------------------------------------------


def test_mode_changes_the_prompt_section(runtime, ctx):
    store, topic = runtime.store, ctx.topic_id
    assert mode_prompt_section(store, topic) == ""
    assert toolkit_mode(ctx).startswith("Current mode: default. Modes:")
    out = toolkit_mode(ctx, "review")
    assert out.startswith("Mode set to review from the next turn on.")
    # only tools the session really has are named
    named = out.rsplit("Lean on these tools: ", 1)[1].rstrip(".").split(", ")
    assert named and set(named) <= set(runtime.toolkit.names())
    section = mode_prompt_section(store, topic)
    assert section.startswith("Working mode: review — review code and changes without editing.")
    assert "toolkit_code_review" in section
    assert "toolkit_code_review" not in mode_prompt_section(store, topic, ["toolkit_file"])
    other = store.topics.create("other").id
    assert mode_prompt_section(store, other) == ""
    assert toolkit_mode(ctx, "default").startswith("Back to the default mode")
    assert mode_prompt_section(store, topic) == ""
    with pytest.raises(ToolError, match="unknown mode 'party'"):
        toolkit_mode(ctx, "party")


# ---- introspection --------------------------------------------------------------------------


def test_harness_schema(runtime, ctx):
    schema = toolkit_harness_schema(ctx)
    assert schema["version"] == __version__
    tools = {entry["name"]: entry for entry in schema["tools"]}
    assert schema["tool_count"] == len(runtime.toolkit.tools) == len(tools)
    assert tools["toolkit_file"]["mutates"] is True
    assert tools["toolkit_gettime"]["safe"] is True and tools["toolkit_gettime"]["mutates"] is False
    assert "path" in tools["toolkit_file"]["parameters"]
    assert schema["models"]["main"]["model_name"] == "scripted-model"
    assert schema["features"]["fts5"] is has_fts5()
    assert schema["features"]["approval"] == "auto"
    assert schema["features"]["sandbox"].startswith("agent.sandbox: auto")  # from the config
    json.dumps(schema)  # plain JSON data


def test_self_report(runtime, ctx):
    runtime.store.messages.add(ctx.topic_id, Message("user", "hello"))
    runtime.store.messages.add(ctx.topic_id, Message("assistant", "hi"))
    report = toolkit_self_report(ctx)
    assert report["version"] == __version__ and report["pid"] == os.getpid()
    assert report["topics"] == 1 and report["messages"] == 2
    if runtime.store.path is None:  # --store postgres: the URL without credentials
        assert report["database"] == runtime.store.location and "database_bytes" not in report
    else:
        assert report["database"] == str(runtime.config.db_path) and report["database_bytes"] > 0
    assert report["tools"] == len(runtime.toolkit.tools)
    if sys.platform.startswith("linux"):
        assert report["rss_mib"] > 0 and report["uptime_seconds"] > 0  # pytest took that long
    assert report["peak_rss_mib"] > 0


def test_introspection_without_a_runtime(workspace: Path, tea_home: Path):
    bare = ToolContext(workspace=workspace, home=tea_home)
    schema = toolkit_harness_schema(bare)
    assert schema["models"] == {} and schema["tool_count"] > 0
    report = toolkit_self_report(bare)
    assert "topics" not in report and report["tools"] == schema["tool_count"]
