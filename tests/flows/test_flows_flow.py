"""Flow: sync and async steps, values passed on, or_/and_, routers and their loops, typed state
and inputs, agents and the trace."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tea_agent_mini.flows import (
    Flow,
    FlowError,
    StepFailed,
    and_,
    listen,
    load_run,
    or_,
    router,
    start,
)
from tests.flows.flow_helpers import ScriptedRunner


class Pipeline(Flow):
    @start()
    def load(self):
        self.state["threads"] = [threading.get_ident()]
        return 2

    @listen(load)
    async def double(self, value):
        self.state["threads"].append(threading.get_ident())
        await asyncio.sleep(0)
        return value * 2

    @listen(double)
    def describe(self, value):
        self.state["result"] = value
        return f"got {value}"


def test_sync_and_async_steps_pass_their_values_on(tmp_path):
    run = Pipeline(checkpoint_dir=tmp_path).kickoff()
    assert run.status == "completed"
    assert run.step_names == ["load", "double", "describe"]
    assert [step.output for step in run.steps] == [2, 4, "got 4"]
    assert run.output == "got 4" and run.state["result"] == 4
    load_thread, double_thread = run.state["threads"]
    assert load_thread != double_thread  # a sync step runs off the loop, beside the others


def test_kickoff_async_runs_inside_a_running_loop(tmp_path):
    async def main():
        return await Pipeline(checkpoint_dir=tmp_path).kickoff_async()

    run = asyncio.run(main())
    assert run.output == "got 4" and run.finished is not None and run.finished >= run.started

    async def wrong():
        return Pipeline(checkpoint_dir=tmp_path).kickoff()

    with pytest.raises(FlowError, match="await kickoff_async"):
        asyncio.run(wrong())


class Gather(Flow):
    @start()
    async def fast(self):
        return "f"

    @start()
    async def slow(self):
        await asyncio.sleep(0.05)
        return "s"

    @listen(or_(fast, slow))
    def first(self, value):
        self.state.setdefault("first", []).append(value)

    @listen(and_(fast, slow))
    def both(self, value):
        self.state["both"] = value
        return "joined"


def test_or_runs_once_for_the_first_and_and_waits_for_all(tmp_path):
    run = Gather(checkpoint_dir=tmp_path).kickoff()
    names = run.step_names
    assert names.count("first") == 1 and run.state["first"] == ["f"]
    assert names.count("both") == 1 and names.index("both") > names.index("slow")
    assert run.state["both"] == "s"  # the value of the step that completed the join
    assert run.joins == {}


class Meeting(Flow):
    """Two starts that can only finish together: run one after the other, they would hang."""

    @start()
    async def left(self):
        self.state["left"] = True
        await asyncio.wait_for(self._right_arrived.wait(), 1.0)

    @start()
    async def right(self):
        self._right_arrived.set()

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._right_arrived = asyncio.Event()


def test_start_steps_run_concurrently(tmp_path):
    run = Meeting(checkpoint_dir=tmp_path).kickoff()
    assert run.status == "completed" and sorted(run.step_names) == ["left", "right"]


@dataclass
class Ticket:
    text: str = ""
    route: str = ""
    tags: list[str] = field(default_factory=list)


class Triage(Flow[Ticket]):
    @start()
    def read(self):
        return self.state.text

    @router(read)
    def classify(self, text):
        return "bug" if "crash" in text else "question"

    @listen("bug")
    def fix(self):
        self.state.route = "fix"

    @listen("question")
    def answer(self):
        self.state.route = "answer"


@pytest.mark.parametrize(
    ("text", "route", "steps"),
    [
        ("the app crashes on start", "fix", ["read", "classify", "fix"]),
        ("how do I log in?", "answer", ["read", "classify", "answer"]),
    ],
)
def test_a_router_label_picks_the_branch(tmp_path, text, route, steps):
    run = Triage(checkpoint_dir=tmp_path).kickoff(inputs={"text": text})
    assert isinstance(run.state, Ticket)
    assert run.state.route == route and run.step_names == steps
    assert run.steps[1].output == ("bug" if route == "fix" else "question")


def test_inputs_must_name_fields_of_the_state(tmp_path):
    with pytest.raises(FlowError, match=r"Ticket has no field 'body' \(its fields: text, route"):
        Triage(checkpoint_dir=tmp_path).kickoff(inputs={"body": "x"})


S = TypeVar("S")


class Echo(Flow[S]):
    @start()
    def begin(self):
        return type(self.state).__name__


class TicketEcho(Echo[Ticket]):
    pass


class MappingEcho(Flow[dict[str, Any]]):
    @start()
    def begin(self):
        return type(self.state).__name__


def test_the_state_type_comes_from_the_flow_or_a_generic_base(tmp_path):
    assert TicketEcho(checkpoint_dir=tmp_path).kickoff().output == "Ticket"
    assert MappingEcho(checkpoint_dir=tmp_path).kickoff().output == "dict"
    assert Echo(checkpoint_dir=tmp_path).kickoff().output == "dict"
    with pytest.raises(FlowError, match="a flow's state is a dataclass or dict, not <class 'int'>"):

        class Counted(Flow[int]):
            pass


def test_each_kickoff_starts_from_a_fresh_state(tmp_path):
    flow = Triage(checkpoint_dir=tmp_path)
    flow.kickoff(inputs={"text": "crash", "tags": ["a"]})
    second = flow.kickoff()
    assert second.state.text == "" and second.state.tags == [] and second.state.route == "answer"


@dataclass
class Draft:
    rounds: int = 0


class Redraft(Flow[Draft]):
    @start("again")
    def write(self):
        self.state.rounds += 1

    @router(write)
    def judge(self):
        return "again" if self.state.rounds < 3 else "done"

    @listen("done")
    def publish(self):
        return f"after {self.state.rounds} rounds"


def test_a_router_can_loop_back_to_an_earlier_step(tmp_path):
    run = Redraft(checkpoint_dir=tmp_path).kickoff()
    assert run.step_names == ["write", "judge"] * 3 + ["publish"]
    assert run.output == "after 3 rounds"


class Forever(Flow):
    @start("again")
    def work(self):
        pass

    @router(work)
    def judge(self):
        return "again"


def test_a_loop_that_never_ends_stops_at_max_steps(tmp_path):
    with pytest.raises(StepFailed, match="ran 7 steps and wants more") as caught:
        Forever(checkpoint_dir=tmp_path, max_steps=7).kickoff()
    run = caught.value.run
    assert run.status == "failed" and len(run.steps) == 7 and run.failed_step == "judge"
    saved = load_run(tmp_path, run.run_id)
    assert saved.status == "failed" and "ran 7 steps" in (saved.error or "")


class BadRouter(Flow):
    @start()
    def begin(self):
        pass

    @router(begin, labels=["x"])
    def pick(self):
        return 3

    @listen("x")
    def never(self):
        pass


def test_a_router_must_return_a_label(tmp_path):
    with pytest.raises(StepFailed, match=r"step 'pick' failed: router 'pick' returned 3"):
        BadRouter(checkpoint_dir=tmp_path).kickoff()


def test_malformed_flows_are_refused_with_the_reason(tmp_path):
    class NoStart(Flow):
        @listen("x")
        def step(self):
            pass

    class Deaf(Flow):
        @start()
        def begin(self):
            pass

        @listen("nobody")
        def step(self):
            pass

    class Greedy(Flow):
        @start()
        def begin(self, a, b):
            pass

    with pytest.raises(FlowError, match="NoStart has no @start"):
        NoStart(checkpoint_dir=tmp_path).kickoff()
    with pytest.raises(FlowError, match="Deaf.step listens to 'nobody', which is no step"):
        Deaf.mermaid()
    with pytest.raises(FlowError, match="takes more than one value"):
        Greedy(checkpoint_dir=tmp_path).kickoff()
    with pytest.raises(FlowError, match="two step decorators"):
        start()(listen("x")(lambda self: None))


@dataclass
class Review:
    code: str = ""
    verdict: str = ""


class CodeReview(Flow[Review]):
    @start()
    async def write(self):
        reply = await self.agent("coder").run("write add(a, b)")
        self.state.code = reply.text

    @listen(write)
    def review(self):
        reply = self.agent("reviewer").run_sync("review this", context=self.state.code)
        self.state.verdict = reply.text if reply.ok else f"failed: {reply.error}"


def test_steps_call_agents_and_each_call_is_a_span(tmp_path):
    runner = ScriptedRunner(answers={"coder": "def add(a, b): return a + b"})
    run = CodeReview(agents=runner, checkpoint_dir=tmp_path).kickoff()
    assert runner.calls == [
        ("coder", "write add(a, b)", ""),
        ("reviewer", "review this", "def add(a, b): return a + b"),
    ]
    agents = [span for span in run.trace.spans if span.kind == "agent"]
    assert [(s.name, s.step, s.ok) for s in agents] == [
        ("coder", "write", True),
        ("reviewer", "review", True),
    ]
    first = agents[0]
    assert first.detail == {
        "task": "write add(a, b)",
        "topic_id": "topic-1",
        "prompt_tokens": 10,
        "completion_tokens": 5,
    }
    assert first.duration is not None and first.finished == pytest.approx(
        first.started + first.duration
    )
    steps = [(s.name, s.kind, s.step) for s in run.trace.spans if s.kind == "step"]
    assert steps == [("write", "step", None), ("review", "step", None)]


def test_a_failed_agent_is_a_failed_span_not_an_exception(tmp_path):
    runner = ScriptedRunner(failing={"reviewer"})
    run = CodeReview(agents=runner, checkpoint_dir=tmp_path).kickoff()
    assert run.state.verdict == "failed: reviewer gave up"
    reviewer = next(span for span in run.trace.spans if span.name == "reviewer")
    assert reviewer.ok is False and reviewer.error == "reviewer gave up"


def test_without_agents_a_step_that_needs_one_fails_saying_what_to_pass(tmp_path):
    with pytest.raises(StepFailed, match="pass agents="):
        CodeReview(checkpoint_dir=tmp_path).kickoff()


def test_a_runtime_lends_its_subagents(tmp_path):
    class Runtime:
        subagents = ScriptedRunner(answers={"coder": "code", "reviewer": "fine"})

    run = CodeReview(runtime=Runtime(), checkpoint_dir=tmp_path).kickoff()
    assert run.state.verdict == "fine" and len(Runtime.subagents.calls) == 2
    with pytest.raises(FlowError, match="runtime= has no subagents"):
        CodeReview(runtime=object())


def test_checkpoints_go_under_the_home_by_default(tea_home: Path):
    run = Pipeline().kickoff()
    assert (tea_home / "flows" / "Pipeline" / f"{run.run_id}.json").is_file()


def test_importing_the_package_does_not_import_flows():
    code = "import sys, tea_agent_mini; print('tea_agent_mini.flows' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
