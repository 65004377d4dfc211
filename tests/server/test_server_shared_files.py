"""Two servers with their own homes on one PostgreSQL: a profile changed over one server's API
and a tool one saved reach the other at its next turn (issue 17)."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.fakes.background import turn_requests
from tests.fakes.scripted_server import Reply, ToolCallSpec

GREET = "def greet(ctx, who):\n    return 'hello ' + who\n"
SCHEMA = {"type": "object", "properties": {"who": {"type": "string"}}, "required": ["who"]}


def write_home(home: Path, scripted_server, url: str, workspace: Path) -> None:
    home.mkdir(parents=True, exist_ok=True)
    config = {
        "main_model": {"api_url": scripted_server.base_url, "model_name": "scripted-model"},
        "agent": {"workspace": str(workspace), "max_iterations": 10},
        "store": {"url": url},
    }
    (home / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")


def turn(client, text: str) -> dict:
    body = {"model": "m", "messages": [{"role": "user", "content": text}]}
    response = client.post("/v1/chat/completions", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def test_a_profile_and_a_tool_reach_the_other_server(
    scripted_server, postgres_url, tmp_path, workspace, monkeypatch, live_factory
):
    homes = [tmp_path / "a", tmp_path / "b"]
    servers = []
    for home in homes:
        write_home(home, scripted_server, postgres_url, workspace)
        monkeypatch.setenv("TEA_AGENT_HOME", str(home))
        servers.append(live_factory())
    a, b = servers
    with a.client() as http_a, b.client() as http_b:
        scripted_server.push(Reply(text="hi"))
        turn(http_b, "hello")
        assert http_b.get("/v1/config").json()["config"]["agent"]["max_iterations"] == 10

        patch = {"config": {"agent": {"max_iterations": 4}}}
        assert http_a.patch("/v1/profiles/default", json=patch).status_code == 200
        save = ToolCallSpec(
            "toolkit_save",
            {"name": "greet", "description": "Greet.", "parameters": SCHEMA, "code": GREET},
        )
        scripted_server.push(Reply(tool_calls=[save]), Reply(text="saved"))
        turn(http_a, "make a greet tool")
        assert a.runtime.toolkit.get("greet") is not None

        scripted_server.push(
            Reply(tool_calls=[ToolCallSpec("greet", {"who": "ann"})]), Reply(text="greeted")
        )
        assert turn(http_b, "greet ann")["choices"][0]["message"]["content"] == "greeted"
        result = turn_requests(scripted_server)[-1]["messages"][-1]
        assert result["role"] == "tool" and "hello ann" in result["content"]
        assert http_b.get("/v1/config").json()["config"]["agent"]["max_iterations"] == 4
        stored = yaml.safe_load((homes[1] / "config.yaml").read_text(encoding="utf-8"))
        assert stored["agent"]["max_iterations"] == 4
