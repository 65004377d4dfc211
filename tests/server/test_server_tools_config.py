"""Tools, runtime config, profiles and profile switching over real HTTP."""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path

import openai
import pytest
import yaml

from tea_agent_mini.config import load_config
from tea_agent_mini.runtime import Runtime
from tea_agent_mini.server.runtimes import RuntimePool
from tests.fakes.background import turn_requests
from tests.fakes.scripted_server import Reply, ToolCallSpec
from tests.server.server_helpers import read_events


def run_tool(http, name: str, arguments: dict, **extra):
    return http.post(f"/v1/tools/{name}/run", json={"arguments": arguments, **extra})


def test_tool_list_has_schemas_and_flags(http):
    tools = {t["name"]: t for t in http.get("/v1/tools").json()["data"]}
    assert tools["toolkit_file"]["parameters"]["type"] == "object"
    assert tools["toolkit_file"]["mutates"] is True
    assert tools["toolkit_gettime"]["mutates"] is False


def test_run_tool_directly(http, workspace: Path):
    (workspace / "a.txt").write_text("alpha\n")
    read = run_tool(http, "toolkit_file", {"action": "read", "filename": "a.txt"})
    assert read.status_code == 200 and read.json()["ok"] is True
    assert "alpha" in read.json()["output"]
    written = run_tool(
        http, "toolkit_file", {"action": "write", "filename": "b.txt", "content": "beta"}
    )
    assert written.json()["ok"] is True and (workspace / "b.txt").read_text() == "beta"
    failed = run_tool(http, "toolkit_file", {"action": "read", "filename": "missing.txt"})
    assert failed.status_code == 200 and failed.json()["ok"] is False and failed.json()["error"]
    assert run_tool(http, "no_such_tool", {}).status_code == 404
    bad = run_tool(http, "toolkit_file", {"action": "read", "nonsense": 1})
    assert bad.status_code == 400 and "nonsense" in bad.json()["error"]["message"]
    wrong = http.post("/v1/tools/toolkit_file/run", json={"arguments": "read a.txt"})
    assert wrong.status_code == 400


def test_approval_policy_applies_to_direct_runs(http, workspace: Path):
    write = {"action": "write", "filename": "c.txt", "content": "gamma"}
    assert http.patch("/v1/config", json={"agent": {"approval": "ask"}}).status_code == 200
    refused = run_tool(http, "toolkit_file", write)
    assert refused.status_code == 403
    assert refused.json()["error"]["code"] == "confirmation_required"
    assert not (workspace / "c.txt").exists()
    confirmed = run_tool(http, "toolkit_file", write, confirm=True)
    assert confirmed.json()["ok"] is True and (workspace / "c.txt").exists()

    http.patch("/v1/config", json={"agent": {"approval": "never"}})
    assert run_tool(http, "toolkit_file", write, confirm=True).status_code == 403
    read = run_tool(http, "toolkit_file", {"action": "read", "filename": "c.txt"})
    assert read.json()["ok"] is True


def test_config_is_masked(live_factory, write_config, scripted_server, workspace):
    write_config(
        {
            "main_model": {
                "api_key": "sk-very-secret-model-key",
                "api_url": scripted_server.base_url,
                "model_name": "scripted-model",
                "extra_headers": {"Authorization": "Bearer hidden-header-token"},
            },
            "server": {"api_key": "server-key-abcdefgh"},
            "agent": {"workspace": str(workspace)},
        }
    )
    live = live_factory()
    with live.client() as http:
        response = http.get("/v1/config", headers={"X-API-Key": "server-key-abcdefgh"})
    text = response.text
    assert response.status_code == 200
    for secret in ("sk-very-secret-model-key", "server-key-abcdefgh", "hidden-header-token"):
        assert secret not in text
    data = response.json()
    assert data["config"]["server"]["api_key"] == "****"
    assert data["config"]["main_model"]["extra_headers"] == {"Authorization": "****"}
    assert data["model_configured"] is True and data["auth_required"] is True


def test_patch_config_changes_the_next_turn(http, scripted_server):
    response = http.patch(
        "/v1/config",
        json={"agent": {"max_iterations": 7}, "main_model": {"temperature": 0.25}},
    )
    assert response.status_code == 200
    config = response.json()["config"]
    assert config["agent"]["max_iterations"] == 7 and config["main_model"]["temperature"] == 0.25
    session = http.post("/v1/sessions", json={}).json()
    read_events(http, "POST", f"/v1/sessions/{session['id']}/messages", json={"content": "hi"})
    assert turn_requests(scripted_server)[-1]["temperature"] == 0.25


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"agent": {"max_iterations": 0}},
        {"agent": {"max_iterations": "5"}},
        {"agent": {"approval": "sometimes"}},
        {"agent": {"workspace": "/"}},
        {"agent": {"allow_outside_workspace": True}},
        {"server": {"api_key": "x"}},
        {"main_model": {"api_url": "http://elsewhere"}},
        {"main_model": {"temperature": 9}},
        {"agent": "fast"},
    ],
)
def test_patch_config_rejects_bad_changes(http, body):
    before = http.get("/v1/config").json()
    response = http.patch("/v1/config", json=body)
    assert response.status_code == 400, response.text
    assert http.get("/v1/config").json() == before


def test_profiles_create_list_and_validate(http, tea_home: Path, scripted_server):
    profile = {"main_model": {"model_name": "work-model", "api_url": scripted_server.base_url}}
    created = http.post("/v1/profiles", json={"name": "work", "config": profile})
    assert created.status_code == 201 and created.json()["model_name"] == "work-model"
    path = tea_home / "work.yaml"
    assert yaml.safe_load(path.read_text()) == profile
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = http.post("/v1/profiles", json={"name": "work", "config": profile})
    assert again.status_code == 409
    overwrite = http.post("/v1/profiles", json={"name": "work", "config": {}, "overwrite": True})
    assert overwrite.status_code == 201

    listed = http.get("/v1/profiles").json()
    assert listed["active"] == "default"
    assert {p["name"] for p in listed["data"]} == {"default", "work"}

    bad = http.post("/v1/profiles", json={"name": "bad", "config": {"main_model": {"x": 1}}})
    assert bad.status_code == 400 and "main_model.x" in bad.json()["error"]["message"]
    assert not (tea_home / "bad.yaml").exists()
    for name in ("../evil", "a/b", "evil.yaml", ""):
        response = http.post("/v1/profiles", json={"name": name, "config": {}})
        assert response.status_code == 400, name
    assert not list(tea_home.parent.glob("evil*"))


def test_profile_from_uploaded_yaml(http, tea_home: Path):
    text = "main_model:\n  model_name: uploaded\n  api_url: http://127.0.0.1:9/v1\n"
    files = {"file": ("lab.yaml", text.encode(), "application/x-yaml")}
    created = http.post("/v1/profiles", files=files)
    assert created.status_code == 201 and created.json()["name"] == "lab"
    assert (tea_home / "lab.yaml").exists()
    broken = {"file": ("x.yaml", b"main_model: [unclosed", "application/x-yaml")}
    assert http.post("/v1/profiles", files=broken).status_code == 400
    wrong_type = {"file": ("y.yaml", b"agent:\n  max_iterations: many\n", "text/yaml")}
    assert http.post("/v1/profiles", files=wrong_type).status_code == 400
    as_yaml = http.post("/v1/profiles", content=b"x", headers={"Content-Type": "text/yaml"})
    assert as_yaml.status_code == 415


def test_switch_profile_and_per_request_profile(live, http, write_config, scripted_server):
    write_config(
        {"main_model": {"model_name": "work-model", "api_url": scripted_server.base_url}}, "work"
    )
    with openai.OpenAI(base_url=live.url + "/v1", api_key="x", max_retries=0) as client:
        message = [{"role": "user", "content": "hi"}]
        client.chat.completions.create(model="profile:work", messages=message)
        assert turn_requests(scripted_server)[-1]["model"] == "work-model"
        client.chat.completions.create(model="whatever", messages=message)
        assert turn_requests(scripted_server)[-1]["model"] == "scripted-model"

        switched = http.post("/v1/config/switch", json={"profile": "work"})
        assert switched.status_code == 200 and switched.json()["profile"] == "work"
        answer = client.chat.completions.create(model="whatever", messages=message)
        assert answer.model == "work-model"
        assert turn_requests(scripted_server)[-1]["model"] == "work-model"

    assert http.post("/v1/config/switch", json={"profile": "ghost"}).status_code == 404
    assert http.post("/v1/config/switch", json={"profile": "../x"}).status_code == 400
    assert http.post("/v1/config/switch", json={}).status_code == 400


def test_switch_is_refused_while_a_turn_runs(http, write_config, scripted_server):
    write_config({"main_model": {"model_name": "w", "api_url": scripted_server.base_url}}, "work")
    scripted_server.push(Reply(text="x" * 40, delay=0.05, chunk_chars=4))
    session = http.post("/v1/sessions", json={}).json()
    url = f"/v1/sessions/{session['id']}/messages"
    read_events(http, "POST", url, json={"content": "hi"}, until=lambda e: e.event == "start")
    assert http.post("/v1/config/switch", json={"profile": "work"}).status_code == 409
    read_events(http, "GET", f"/v1/sessions/{session['id']}/events")
    assert http.post("/v1/config/switch", json={"profile": "work"}).status_code == 200


def test_a_profile_switch_never_widens_what_tools_reach(
    live, http, scripted_server, workspace: Path, tmp_path: Path
):
    outside = tmp_path / "outside.txt"
    outside.write_text("not yours")
    wide = {
        "main_model": {"model_name": "wide-model", "api_url": scripted_server.base_url},
        "agent": {"workspace": "/", "allow_outside_workspace": True, "allow_private_fetch": True},
        "mcp_servers": {"sh": {"command": "sh", "args": ["-c", "true"]}},
    }
    assert http.post("/v1/profiles", json={"name": "wide", "config": wide}).status_code == 201
    read_outside = {"action": "read", "filename": str(outside)}

    # a chat that names the profile runs with it, inside the workspace the server started with
    read_call = [ToolCallSpec("toolkit_file", read_outside)]
    scripted_server.push(Reply(tool_calls=read_call), Reply(text="done"))
    message = [{"role": "user", "content": "read it"}]
    with openai.OpenAI(base_url=live.url + "/v1", api_key="x", max_retries=0) as client:
        client.chat.completions.create(model="profile:wide", messages=message)
    tool_result = turn_requests(scripted_server)[-1]["messages"][-1]
    assert tool_result["role"] == "tool" and "outside the workspace" in tool_result["content"]
    assert "not yours" not in tool_result["content"]

    switched = http.post("/v1/config/switch", json={"profile": "wide"}).json()
    assert switched["profile"] == "wide" and switched["workspace"] == str(workspace.resolve())
    agent = live.runtime.config.agent
    assert not agent.allow_outside_workspace and not agent.allow_private_fetch
    assert live.runtime.config.mcp_servers == {}
    refused = run_tool(http, "toolkit_file", read_outside).json()
    assert refused["ok"] is False and "outside the workspace" in refused["error"]
    (workspace / "in.txt").write_text("yours")
    inside = run_tool(http, "toolkit_file", {"action": "read", "filename": "in.txt"}).json()
    assert inside["ok"] is True and "yours" in inside["output"]


def test_a_profile_never_brings_its_own_tool_endpoints(write_config):
    """Profiles can be written over the API; a profile's tools: section must not point the
    search or weather tools somewhere else while the server runs."""
    write_config({"tools": {"search_url": "http://started-with/html/"}})
    write_config({"tools": {"search_url": "http://169.254.169.254/latest/"}}, name="other")
    runtime = Runtime(load_config())
    try:
        config = RuntimePool(runtime).load("other")
    finally:
        asyncio.run(runtime.aclose())
    assert config.tools.search_url == "http://started-with/html/"
