"""The flow runs panel (issue 15) in real headless Chromium: runs of a tiny Flow saved in the
server's home (``<home>/flows``), listed newest first, one run's steps and trace shown."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pytest

from tea_agent_mini.flows import Flow, StepFailed, listen, start
from tests.flows.flow_helpers import ScriptedRunner
from tests.ui.ui_helpers import missing_browser, open_app

REASON = missing_browser()
if REASON:
    pytest.skip(REASON, allow_module_level=True)


@dataclass
class Notes:
    text: str = ""
    broken: bool = False


class Tidy(Flow[Notes]):
    @start()
    def gather(self):
        self.state.text = "two notes"
        return self.state.text

    @listen(gather)
    async def summarise(self, text):
        if self.state.broken:
            raise RuntimeError("the notes are gone")
        reply = await self.agent("writer").run(f"summarise {text}")
        return reply.text


def run_flows(folder):
    """A finished run, then a failed one (in a thread: Playwright's loop runs in this one)."""
    agents = ScriptedRunner(answers={"writer": "summary of {task}"})
    done = Tidy(agents=agents, checkpoint_dir=folder).kickoff()
    with pytest.raises(StepFailed):
        Tidy(agents=agents, checkpoint_dir=folder).kickoff(inputs={"broken": True})
    return done


def test_the_flow_runs_panel_lists_runs_and_shows_steps_and_trace(page, live):
    with ThreadPoolExecutor(1) as pool:
        done = pool.submit(run_flows, live.runtime.config.home / "flows").result()

    open_app(page, live.url)
    page.click("#open-flows")
    panel = page.locator("dialog[open]", has_text="Flow runs")
    runs = panel.locator(".flow-run")
    runs.first.wait_for()
    assert runs.count() == 2
    failed, completed = runs.nth(0), runs.nth(1)  # newest first
    assert "failed" in failed.locator(".status").inner_text()
    assert "RuntimeError: the notes are gone" in failed.inner_text()
    assert completed.get_attribute("data-run") == done.run_id
    assert "Tidy" in completed.locator("strong").inner_text()
    assert "2 steps" in completed.inner_text()

    completed.locator("button", has_text="Details").click()
    detail = completed.locator(".flow-detail")
    detail.wait_for()
    steps = detail.locator(".flow-steps li")
    assert [steps.nth(i).locator("b").inner_text() for i in range(steps.count())] == [
        "gather",
        "summarise",
    ]
    spans = detail.locator(".trace .span")
    kinds = [spans.nth(i).locator(".tag").inner_text() for i in range(spans.count())]
    assert kinds.count("step") == 2 and kinds.count("agent") == 1
    agent = detail.locator(".trace .span.agent")
    assert agent.locator("b").inner_text() == "writer"
    assert "in summarise" in agent.inner_text()
    assert agent.locator(".span-bar").evaluate("el => el.getBoundingClientRect().width") > 0
    completed.locator("button", has_text="Hide").click()
    assert completed.locator(".flow-detail").count() == 0

    failed.locator("button", has_text="Details").click()
    failed.locator(".flow-detail .form-error", has_text="Failed in summarise").wait_for()
    assert failed.locator(".trace .span.failed").count() >= 1
