"""GET /v1/flows/runs and /v1/flows/runs/{run_id}: saved runs of flows, read through the real
server."""

from __future__ import annotations

import pytest

from tea_agent_mini.flows import StepFailed, Workflow
from tests.flows.crashing_flow import Publish, runner


def make_runs(folder):
    done = Publish(agents=runner(), checkpoint_dir=folder).kickoff()
    with pytest.raises(StepFailed) as caught:
        Publish(agents=runner(), checkpoint_dir=folder, crash="judge").kickoff()
    wf = Workflow("tiny")
    wf.task("only", lambda ctx: 42)
    wf.end("stop")
    wf.edge("only", "stop")
    tiny = wf.kickoff(checkpoint_dir=folder)
    return done, caught.value.run, tiny


def test_runs_are_listed_newest_first_and_read_with_their_trace(http, live):
    done, failed, tiny = make_runs(live.runtime.config.home / "flows")

    page = http.get("/v1/flows/runs").json()
    assert page["object"] == "list" and page["has_more"] is False
    assert [run["run_id"] for run in page["data"]] == [tiny.run_id, failed.run_id, done.run_id]
    newest = page["data"][0]
    assert newest["flow"] == "tiny" and newest["kind"] == "workflow"
    assert newest["status"] == "completed" and newest["steps"] == 2
    assert newest["started"] <= newest["finished"]
    assert page["data"][1]["status"] == "failed" and page["data"][1]["steps"] == 1
    assert "RuntimeError: disk full" in page["data"][1]["error"]

    second = http.get("/v1/flows/runs", params={"limit": 1, "offset": 1}).json()
    assert [run["run_id"] for run in second["data"]] == [failed.run_id]
    assert second["has_more"] is True

    detail = http.get(f"/v1/flows/runs/{done.run_id}").json()
    assert detail["status"] == "completed" and detail["flow"] == "Publish"
    assert [step["name"] for step in detail["steps"]] == done.step_names
    assert detail["state"]["verdict"] == "published"
    agents = [span for span in detail["trace"] if span["kind"] == "agent"]
    assert [(span["name"], span["step"]) for span in agents] == [("coder", "write")] * 2
    assert agents[0]["detail"]["prompt_tokens"] == 10

    failed_detail = http.get(f"/v1/flows/runs/{failed.run_id}").json()
    assert failed_detail["failed_step"] == "judge"
    assert [pending["step"] for pending in failed_detail["pending"]] == ["judge"]


@pytest.mark.parametrize("run_id", ["20990101-000000-nothere", "bad*glob", "a%20b"])
def test_an_unknown_run_is_a_404_naming_it(http, run_id):
    answer = http.get(f"/v1/flows/runs/{run_id}")
    assert answer.status_code == 404
    assert answer.json()["error"]["message"].startswith("no flow run ")


def test_no_runs_yet_is_an_empty_page_and_bad_paging_a_400(http):
    assert http.get("/v1/flows/runs").json() == {"object": "list", "data": [], "has_more": False}
    answer = http.get("/v1/flows/runs", params={"limit": 500})
    assert answer.status_code == 400 and "'limit': expected 1-200" in answer.text


def test_the_routes_need_the_key_and_are_documented(model_config, live_factory):
    live = live_factory(api_key="flows-test-key-0123456789")
    with live.client() as client:
        assert client.get("/v1/flows/runs").status_code == 401
        headers = {"Authorization": "Bearer flows-test-key-0123456789"}
        assert client.get("/v1/flows/runs", headers=headers).status_code == 200
        document = client.get("/openapi.json", headers=headers).json()
    assert {"/v1/flows/runs", "/v1/flows/runs/{run_id}"} <= set(document["paths"])
    assert document["paths"]["/v1/flows/runs"]["get"]["tags"] == ["flows"]
