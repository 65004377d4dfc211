"""Workflow: each node kind, the context a node gets, validation, failures and resume."""

from __future__ import annotations

import asyncio

import pytest

from tea_agent_mini.flows import FlowError, StepFailed, Workflow, list_runs
from tests.flows.flow_helpers import ScriptedRunner


async def draft(ctx):
    reply = await ctx.agent("coder").run(f"release notes for {ctx.state['version']}")
    return reply.text


def patch(ctx):
    ctx.state["patches"] = ctx.state.get("patches", 0) + 1
    return f"patch {ctx.state['patches']}"


def build_release() -> Workflow:
    wf = Workflow("release")
    wf.task("notes", draft)
    wf.condition(
        "ready", lambda ctx: "yes" if ctx.state["tests"] else "no", {"yes": "ship", "no": "fix"}
    )
    wf.loop("fix", "patch", until=lambda ctx: ctx.state["patches"] >= 2, max_times=5)
    wf.task("patch", patch)
    wf.parallel("ship", ["tag", "announce"])
    wf.task("tag", lambda ctx: f"v{ctx.state['version']}")
    wf.task("announce", lambda ctx: ctx.agent("writer").run(ctx.outputs["notes"]))
    wf.wait("settle", 0.01)
    wf.wait("approved", lambda ctx: ctx.state.setdefault("polls", 0) >= 0, every=0.01)
    wf.end("done")
    wf.edge("notes", "ready")
    wf.edge("fix", "ship")
    wf.edge("ship", "settle")
    wf.edge("settle", "approved")
    wf.edge("approved", "done")
    return wf


@pytest.mark.parametrize(
    ("tests", "steps", "patches"),
    [
        (True, ["notes", "ready", "ship", "settle", "approved", "done"], None),
        (False, ["notes", "ready", "fix", "ship", "settle", "approved", "done"], 2),
    ],
)
def test_every_node_kind_runs_in_order(tmp_path, tests, steps, patches):
    runner = ScriptedRunner(answers={"coder": "notes: {task}", "writer": "posted"})
    run = build_release().kickoff(
        inputs={"version": "1.2", "tests": tests}, agents=runner, checkpoint_dir=tmp_path
    )
    assert run.status == "completed" and run.kind == "workflow"
    assert run.step_names == steps
    assert run.state.get("patches") == patches
    by_name = {step.name: step.output for step in run.steps}
    assert by_name["ready"] == ("yes" if tests else "no")
    assert by_name["ship"]["tag"] == "v1.2" and by_name["ship"]["announce"].text == "posted"
    assert runner.calls[0] == ("coder", "release notes for 1.2", "")
    assert runner.calls[1] == ("writer", "notes: release notes for 1.2", "")
    assert run.output == by_name["ship"]  # waits and the end pass the last output on
    if patches:
        assert by_name["fix"] == "patch 2"
        inner = [(s.name, s.step, s.detail) for s in run.trace.spans if s.name == "patch"]
        assert inner == [
            ("patch", "fix", {"loop": "fix", "iteration": 1}),
            ("patch", "fix", {"loop": "fix", "iteration": 2}),
        ]
    waits = [(s.name, s.step) for s in run.trace.spans if s.kind == "wait"]
    assert waits == [("settle", "settle"), ("approved", "approved")]


def test_a_loop_stops_after_max_times(tmp_path):
    wf = Workflow("retry")
    wf.loop("again", "try", until=lambda ctx: False, max_times=3)
    wf.task("try", patch)
    wf.end("stop")
    wf.edge("again", "stop")
    run = wf.kickoff(checkpoint_dir=tmp_path)
    assert run.state["patches"] == 3 and run.output == "patch 3"


def test_parallel_nodes_run_at_the_same_time(tmp_path):
    both = asyncio.Event()

    async def left(ctx):
        await asyncio.wait_for(both.wait(), 1.0)
        return "left"

    async def right(ctx):
        both.set()
        return "right"

    wf = Workflow("pair")
    wf.parallel("both", ["left", "right"])
    wf.task("left", left)
    wf.task("right", right)
    wf.end("stop")
    wf.edge("both", "stop")
    assert wf.kickoff(checkpoint_dir=tmp_path).output == {"left": "left", "right": "right"}


def test_a_wait_for_a_predicate_gives_up_after_its_timeout(tmp_path):
    wf = Workflow("stuck")
    wf.wait("forever", lambda ctx: False, timeout=0.05, every=0.01)
    wf.end("stop")
    wf.edge("forever", "stop")
    with pytest.raises(StepFailed, match="wait 'forever' gave up after 0.05 s"):
        wf.kickoff(checkpoint_dir=tmp_path)


def test_a_condition_must_return_one_of_its_labels(tmp_path):
    wf = Workflow("choose")
    wf.condition("pick", lambda ctx: "maybe", {"yes": "stop", "no": "stop"})
    wf.end("stop")
    with pytest.raises(StepFailed, match="returned 'maybe', not one of 'yes', 'no'"):
        wf.kickoff(checkpoint_dir=tmp_path)


def test_a_failed_workflow_resumes_at_the_node_that_failed(tmp_path):
    ran: list[str] = []

    def step(name, fail_once=False):
        def run(ctx):
            ran.append(name)
            if fail_once and ran.count(name) == 1:
                raise ValueError(f"{name} broke")
            return name

        return run

    wf = Workflow("pipeline")
    wf.task("fetch", step("fetch"))
    wf.task("parse", step("parse", fail_once=True))
    wf.end("stop")
    wf.edge("fetch", "parse")
    wf.edge("parse", "stop")
    with pytest.raises(StepFailed, match="step 'parse' failed: ValueError: parse broke"):
        wf.kickoff(inputs={"url": "x"}, checkpoint_dir=tmp_path)
    (failed,) = list_runs(tmp_path)
    assert failed.status == "failed" and failed.step_names == ["fetch"]
    run = wf.kickoff(checkpoint_dir=tmp_path, resume=failed.run_id)
    assert ran == ["fetch", "parse", "parse"]
    assert run.step_names == ["fetch", "parse", "stop"] and run.output == "parse"
    assert run.state == {"url": "x"}


def chain(*names: str) -> Workflow:
    wf = Workflow("w")
    for name in names:
        wf.task(name, lambda ctx: None)
    return wf


def empty() -> Workflow:
    return Workflow("w")


def unknown_target() -> Workflow:
    wf = chain("a")
    wf.edge("a", "zz")
    return wf


def two_starts() -> Workflow:
    wf = chain("a", "b")
    wf.end("e")
    wf.edge("a", "e")
    wf.edge("b", "e")
    return wf


def all_entered() -> Workflow:
    wf = chain("a", "b")
    wf.edge("a", "b")
    wf.edge("b", "a")
    return wf


def dead_end() -> Workflow:
    wf = chain("a", "b")
    wf.edge("a", "b")
    return wf


def unreachable_end() -> Workflow:
    wf = chain("a")
    wf.end("e1")
    wf.end("e2")
    wf.edge("a", "e1")
    wf.start = "a"
    return wf


def cycle() -> Workflow:
    wf = chain("a", "b", "c")
    wf.end("e")
    wf.condition("d", lambda ctx: "x", {"x": "b", "y": "e"})
    wf.edge("a", "b")
    wf.edge("b", "c")
    wf.edge("c", "d")
    return wf


def bad_branch() -> Workflow:
    wf = Workflow("w")
    wf.condition("d", lambda ctx: "x", {"x": "nowhere"})
    return wf


def loop_over_a_condition() -> Workflow:
    wf = Workflow("w")
    wf.loop("l", "d", until=lambda ctx: True)
    wf.condition("d", lambda ctx: "x", {"x": "e"})
    wf.end("e")
    wf.edge("l", "e")
    return wf


def edge_into_a_body() -> Workflow:
    wf = chain("a", "body")
    wf.loop("l", "body", until=lambda ctx: True)
    wf.end("e")
    wf.edge("a", "body")
    return wf


@pytest.mark.parametrize(
    ("build", "problem"),
    [
        (empty, "workflow 'w' has no nodes"),
        (unknown_target, "edge 'a' -> 'zz': no node 'zz'"),
        (two_starts, r"several nodes could be the start \(a, b\)"),
        (all_entered, "no start: every node has an edge into it"),
        (dead_end, "task 'b' leads nowhere"),
        (unreachable_end, "unreachable from the start 'a': e2"),
        (cycle, "cycle b -> c -> d -> b: repeat with a loop node"),
        (bad_branch, "condition 'd' branch 'x': no node 'nowhere'"),
        (loop_over_a_condition, "loop 'l' cannot run the condition 'd'"),
        (edge_into_a_body, "'body' runs inside 'l': it cannot have edges"),
    ],
)
def test_validation_names_the_problem(build, problem):
    with pytest.raises(FlowError, match=problem):
        build().validate()


def test_builder_mistakes_are_refused_at_once():
    wf = chain("a")
    with pytest.raises(FlowError, match="there is a node 'a' already"):
        wf.task("a", lambda ctx: None)
    wf.edge("a", "b")
    with pytest.raises(FlowError, match="'a' leads to 'b' already"):
        wf.edge("a", "c")
    with pytest.raises(FlowError, match="cannot name a checkpoint file"):
        Workflow("../up")
    with pytest.raises(FlowError, match="max_times of at least 1"):
        wf.loop("l", "a", until=lambda ctx: True, max_times=0)
