"""Testing a model endpoint before saving it (``POST /v1/profiles/test``) and reading and
changing a profile (``GET``/``PATCH /v1/profiles/{name}``), over real HTTP."""

from __future__ import annotations

from pathlib import Path

import openai
import pytest
import yaml

from tests.fakes.background import turn_requests
from tests.fakes.scripted_server import ScriptedServer
from tests.server.server_helpers import read_events

RIGHT_KEY = "sk-right-key-4242"
WRONG_KEY = "sk-wrong-key-9999"


@pytest.fixture
def keyed_server():
    """A model server that wants RIGHT_KEY."""
    with ScriptedServer(api_key=RIGHT_KEY, model="keyed-model") as server:
        yield server


def probe(http, **body) -> dict:
    response = http.post("/v1/profiles/test", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def test_a_reachable_endpoint_lists_its_models(http, scripted_server):
    result = probe(http, api_url=scripted_server.base_url)
    assert result == {
        "ok": True,
        "api_url": scripted_server.base_url,
        "models": ["scripted-model"],
        "reason": None,
        "error": None,
        "status": None,
    }
    # a URL given up to /chat/completions works too
    assert probe(http, api_url=scripted_server.base_url + "/chat/completions/")["ok"]


def test_nothing_listening_is_unreachable(http):
    result = probe(http, api_url="http://127.0.0.1:1/v1")
    assert (result["ok"], result["reason"]) == (False, "unreachable")
    assert "cannot reach" in result["error"] and "127.0.0.1:1" in result["error"]


def test_a_wrong_key_is_named_and_never_echoed(http, keyed_server):
    result = probe(http, api_url=keyed_server.base_url, api_key=WRONG_KEY)
    assert (result["ok"], result["reason"], result["status"]) == (False, "wrong_key", 401)
    assert result["error"].startswith("wrong API key")
    assert WRONG_KEY not in str(result)
    missing = probe(http, api_url=keyed_server.base_url)
    assert missing["reason"] == "wrong_key"
    right = probe(http, api_url=keyed_server.base_url, api_key=RIGHT_KEY)
    assert (right["ok"], right["models"]) == (True, ["keyed-model"])
    assert RIGHT_KEY not in str(right)


def test_a_server_without_a_model_list_is_not_openai_compatible(http, scripted_server):
    elsewhere = scripted_server.base_url.removesuffix("/v1") + "/not-an-api"
    result = probe(http, api_url=elsewhere)
    assert (result["reason"], result["status"]) == ("not_openai", 404)
    assert "/v1" in result["error"]


def test_this_server_and_other_tea_agent_servers_are_named(live, http, live_factory):
    for url in (f"{live.url}/v1", f"http://localhost:{live.port}/v1"):
        result = probe(http, api_url=url)
        assert (result["ok"], result["reason"]) == (False, "this_server"), url
        assert "this tea-agent-mini server" in result["error"]
    other = live_factory()
    result = probe(http, api_url=f"{other.url}/v1")
    assert (result["reason"], result["ok"]) == ("tea_agent", False)
    assert "tea-agent-mini server" in result["error"]


@pytest.mark.parametrize(
    ("body", "status", "reason"),
    [
        ({"api_url": "ftp://example.org/v1"}, 200, "invalid_url"),
        ({"api_url": "no scheme at all"}, 200, "invalid_url"),
        ({}, 400, None),
        ({"api_url": 3}, 400, None),
        ({"api_url": "http://127.0.0.1:1/v1", "api_key": ["x"]}, 400, None),
    ],
)
def test_bad_requests(http, body, status, reason):
    response = http.post("/v1/profiles/test", json=body)
    assert response.status_code == status, response.text
    if reason:
        assert response.json()["reason"] == reason


def test_a_profiles_stored_key_is_used_only_for_its_own_address(http, write_config, keyed_server):
    write_config(
        {"main_model": {"api_url": keyed_server.base_url, "api_key": RIGHT_KEY, "model_name": "k"}},
        "keyed",
    )
    same = probe(http, api_url=keyed_server.base_url + "/", profile="keyed")
    assert same["ok"] and same["models"] == ["keyed-model"]
    # another address, the same profile: the stored key is not sent there
    with ScriptedServer(api_key=RIGHT_KEY) as other:
        moved = probe(http, api_url=other.base_url, profile="keyed")
    assert moved["reason"] == "wrong_key"
    # a key in the request wins over the stored one
    typed = probe(http, api_url=keyed_server.base_url, profile="keyed", api_key=WRONG_KEY)
    assert typed["reason"] == "wrong_key"
    assert probe(http, api_url=keyed_server.base_url, profile="ghost")["reason"] == "wrong_key"


def test_the_route_is_documented(http):
    paths = http.get("/openapi.json").json()["paths"]
    assert "post" in paths["/v1/profiles/test"]
    assert {"get", "patch"} <= set(paths["/v1/profiles/{name}"])


# -- reading and changing a profile -----------------------------------------------------------


def create(http, name: str, main_model: dict) -> None:
    created = http.post("/v1/profiles", json={"name": name, "config": {"main_model": main_model}})
    assert created.status_code == 201, created.text


def test_patch_changes_only_what_is_sent_and_keeps_the_key(http, tea_home: Path, scripted_server):
    url = scripted_server.base_url
    create(http, "work", {"api_url": url, "api_key": RIGHT_KEY, "model_name": "a"})
    (tea_home / "work.yaml").write_text(
        (tea_home / "work.yaml").read_text() + "agent:\n  max_iterations: 7\n"
    )
    patch = {"main_model": {"model_name": "b", "max_context_tokens": 8192}}
    changed = http.patch("/v1/profiles/work", json={"config": patch})
    assert changed.status_code == 200, changed.text
    detail = changed.json()
    assert (detail["name"], detail["model_name"], detail["active"]) == ("work", "b", False)
    assert detail["config"]["main_model"]["api_key"] == "****4242"
    assert RIGHT_KEY not in changed.text
    stored = yaml.safe_load((tea_home / "work.yaml").read_text())
    assert stored == {
        "main_model": {
            "api_url": url,
            "api_key": RIGHT_KEY,
            "model_name": "b",
            "max_context_tokens": 8192,
        },
        "agent": {"max_iterations": 7},
    }
    removed = http.patch(
        "/v1/profiles/work", json={"config": {"main_model": {"max_context_tokens": None}}}
    )
    assert removed.status_code == 200
    assert (
        "max_context_tokens"
        not in yaml.safe_load((tea_home / "work.yaml").read_text())["main_model"]
    )
    assert http.get("/v1/profiles/work").json()["config"]["main_model"]["model_name"] == "b"


@pytest.mark.parametrize(
    ("name", "body", "status"),
    [
        ("work", {"config": {"main_model": {"max_context_tokens": "lots"}}}, 400),
        ("work", {"config": {"main_model": {"nope": 1}}}, 400),
        ("work", {"config": {}}, 400),
        ("work", {}, 400),
        ("work", {"config": []}, 400),
        ("ghost", {"config": {"main_model": {"model_name": "x"}}}, 404),
        ("evil.yaml", {"config": {"main_model": {"model_name": "x"}}}, 400),
    ],
)
def test_patch_refuses_bad_changes_and_leaves_the_file(
    http, tea_home: Path, scripted_server, name, body, status
):
    create(http, "work", {"api_url": scripted_server.base_url, "model_name": "a"})
    before = (tea_home / "work.yaml").read_text()
    response = http.patch(f"/v1/profiles/{name}", json=body)
    assert response.status_code == status, response.text
    assert (tea_home / "work.yaml").read_text() == before
    assert http.get("/v1/profiles/ghost").status_code == 404


def test_changing_the_active_profile_applies_at_once(live, http, scripted_server):
    changed = http.patch(
        "/v1/profiles/default", json={"config": {"main_model": {"model_name": "renamed"}}}
    )
    assert changed.status_code == 200 and changed.json()["active"] is True
    assert http.get("/v1/config").json()["config"]["main_model"]["model_name"] == "renamed"
    with openai.OpenAI(base_url=live.url + "/v1", api_key="x", max_retries=0) as client:
        client.chat.completions.create(model="x", messages=[{"role": "user", "content": "hi"}])
    assert turn_requests(scripted_server)[-1]["model"] == "renamed"


def test_changing_another_profile_drops_its_runtime(live, http, scripted_server):
    create(http, "work", {"api_url": scripted_server.base_url, "model_name": "before"})
    message = [{"role": "user", "content": "hi"}]
    with openai.OpenAI(base_url=live.url + "/v1", api_key="x", max_retries=0) as client:
        client.chat.completions.create(model="profile:work", messages=message)
        assert turn_requests(scripted_server)[-1]["model"] == "before"
        patch = {"config": {"main_model": {"model_name": "after"}}}
        assert http.patch("/v1/profiles/work", json=patch).status_code == 200
        client.chat.completions.create(model="profile:work", messages=message)
    assert turn_requests(scripted_server)[-1]["model"] == "after"


def test_patch_is_refused_while_a_turn_runs(http, scripted_server):
    from tests.fakes.scripted_server import Reply

    create(http, "work", {"api_url": scripted_server.base_url, "model_name": "a"})
    scripted_server.push(Reply(text="x" * 40, delay=0.05, chunk_chars=4))
    session = http.post("/v1/sessions", json={}).json()
    url = f"/v1/sessions/{session['id']}/messages"
    read_events(http, "POST", url, json={"content": "hi"}, until=lambda e: e.event == "start")
    patch = {"config": {"main_model": {"model_name": "b"}}}
    assert http.patch("/v1/profiles/work", json=patch).status_code == 409
    read_events(http, "GET", f"/v1/sessions/{session['id']}/events")
    assert http.patch("/v1/profiles/work", json=patch).status_code == 200
