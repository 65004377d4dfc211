"""Checkpoints: a flow with a router that crashes in a step resumes from its last finished step,
without running the finished ones again; a missing or broken checkpoint is named."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tea_agent_mini.flows import (
    Flow,
    FlowError,
    RunNotFound,
    StepFailed,
    list_runs,
    listen,
    load_run,
    start,
)
from tests.flows.crashing_flow import HARD_EXIT, Publish, runner

ROOT = Path(__file__).resolve().parents[2]
BEFORE_PUBLISH = ["write", "judge", "write", "judge"]


def calls(log: Path) -> list[str]:
    return log.read_text(encoding="utf-8").split()


def test_a_step_that_raises_fails_the_run_and_resume_goes_on_from_it(tmp_path):
    log, agents = tmp_path / "calls.log", runner()
    flow = Publish(agents=agents, checkpoint_dir=tmp_path, crash="publish")
    with pytest.raises(
        StepFailed, match="step 'publish' failed: RuntimeError: disk full"
    ) as caught:
        flow.kickoff(inputs={"log": str(log)})
    failed = caught.value.run
    assert caught.value.step == "publish" and failed.status == "failed"

    saved = json.loads((tmp_path / "Publish" / f"{failed.run_id}.json").read_text())
    assert saved["status"] == "failed" and saved["failed_step"] == "publish"
    assert saved["error"] == "RuntimeError: disk full"
    assert [step["name"] for step in saved["steps"]] == BEFORE_PUBLISH
    assert [(p["step"], p["trigger"]) for p in saved["pending"]] == [("publish", "ok")]
    assert saved["state"] == {
        "rounds": 2,
        "draft": "text of draft 2",
        "verdict": "",
        "log": str(log),
    }

    resumed = Publish(agents=agents, checkpoint_dir=tmp_path).kickoff(resume=failed.run_id)
    assert resumed.run_id == failed.run_id and resumed.status == "completed"
    assert calls(log) == [*BEFORE_PUBLISH, "publish", "publish", "announce"]
    assert [task for _, task, _ in agents.calls] == ["draft 1", "draft 2"]  # not asked again
    assert resumed.step_names == [*BEFORE_PUBLISH, "publish", "announce"]
    assert resumed.output == "announced: published text of draft 2"
    assert resumed.state.verdict == "published" and resumed.error is None
    publish_spans = [s for s in resumed.trace.spans if s.name == "publish"]
    assert [(s.ok, s.error) for s in publish_spans] == [
        (False, "RuntimeError: disk full"),
        (True, None),
    ]


def test_a_crashed_process_resumes_from_its_last_finished_step(tmp_path):
    log = tmp_path / "calls.log"
    died = subprocess.run(
        [sys.executable, "-m", "tests.flows.crashing_flow", str(tmp_path), str(log)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert died.returncode == HARD_EXIT, died.stderr
    (saved,) = list_runs(tmp_path)
    assert saved.status == "running"  # nobody lived to mark it failed
    assert saved.step_names == BEFORE_PUBLISH
    assert [pending.step for pending in saved.pending] == ["publish"]

    agents = runner()
    run = Publish(agents=agents, checkpoint_dir=tmp_path).kickoff(resume="last")
    assert run.run_id == saved.run_id and run.status == "completed"
    assert calls(log) == [*BEFORE_PUBLISH, "publish", "publish", "announce"]
    assert agents.calls == []
    assert run.state.rounds == 2 and run.output == "announced: published text of draft 2"


class Observed(Flow):
    """Reads its own checkpoint from inside its steps."""

    @start()
    def first(self):
        at_start = load_run(self.state["folder"], self.run_id)
        self.state["at_start"] = [at_start.status, [p.step for p in at_start.pending]]
        return "one"

    @listen(first)
    def second(self, value):
        self.state["seen"] = load_run(self.state["folder"], self.run_id).to_json()


def test_every_finished_step_is_saved_before_the_next_runs(tmp_path):
    run = Observed(checkpoint_dir=tmp_path).kickoff(inputs={"folder": str(tmp_path)})
    assert run.state["at_start"] == ["running", ["first"]]  # a crash now would resume here
    seen = run.state["seen"]
    assert seen["status"] == "running"
    assert [(step["name"], step["output"]) for step in seen["steps"]] == [("first", "one")]
    assert [pending["step"] for pending in seen["pending"]] == ["second"]
    path = tmp_path / "Observed" / f"{run.run_id}.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left


def test_a_missing_run_names_the_file_it_looked_for(tmp_path):
    with pytest.raises(RunNotFound, match=r"no checkpoint .*Publish/20990101-000000-abc\.json"):
        Publish(checkpoint_dir=tmp_path).kickoff(resume="20990101-000000-abc")
    with pytest.raises(RunNotFound, match="no run of Publish to resume"):
        Publish(checkpoint_dir=tmp_path).kickoff(resume="last")
    with pytest.raises(FlowError, match="cannot name a checkpoint file"):
        Publish(checkpoint_dir=tmp_path).kickoff(resume="../../etc/passwd")


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{not json", "cannot read the checkpoint"),
        ("[1, 2]", "not a JSON object"),
        ('{"run_id": "x"}', "not a flow run record"),
    ],
)
def test_a_broken_checkpoint_is_named(tmp_path, content, problem):
    path = tmp_path / "Publish" / "broken.json"
    path.parent.mkdir()
    path.write_text(content, encoding="utf-8")
    with pytest.raises(FlowError, match=problem) as caught:
        Publish(checkpoint_dir=tmp_path).kickoff(resume="broken")
    assert str(path) in str(caught.value)
    assert list_runs(tmp_path) == []  # listing leaves it out


def test_a_saved_state_that_no_longer_fits_is_named(tmp_path):
    run = Publish(agents=runner(), checkpoint_dir=tmp_path).kickoff()
    path = tmp_path / "Publish" / f"{run.run_id}.json"
    data = json.loads(path.read_text())
    data["state"]["color"] = "red"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(FlowError, match=rf"cannot resume from {path}: Doc has no field 'color'"):
        Publish(checkpoint_dir=tmp_path).kickoff(resume=run.run_id)


def test_runs_are_listed_newest_first(tmp_path):
    first = Observed(checkpoint_dir=tmp_path).kickoff(inputs={"folder": str(tmp_path)})
    second = Publish(agents=runner(), checkpoint_dir=tmp_path).kickoff()
    listed = list_runs(tmp_path)
    assert [run.run_id for run in listed] == [second.run_id, first.run_id]
    assert listed[0].summary()["steps"] == 6 and listed[0].flow == "Publish"
    assert load_run(tmp_path, first.run_id).flow == "Observed"
    with pytest.raises(RunNotFound):
        load_run(tmp_path, "nope")
