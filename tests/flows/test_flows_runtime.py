"""A flow whose steps call the runtime's real subagents (a scripted model answers them)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from tea_agent_mini.config import load_config
from tea_agent_mini.flows import Flow, listen, router, start
from tea_agent_mini.runtime import Runtime
from tests.fakes.script import Reply


@dataclass
class ReviewState:
    draft: str = ""
    verdict: str = ""


class Review(Flow[ReviewState]):
    @start()
    async def analyse(self) -> str:
        reply = await self.agent("analyst").run("list the requirements of a greeting")
        self.state.draft = reply.text
        return reply.text

    @router(analyse)
    def judge(self) -> str:
        return "ok" if "hello" in self.state.draft else "redo"

    @listen("ok")
    async def review(self) -> str:
        reply = await self.agent("reviewer").run("review it", context=self.state.draft)
        self.state.verdict = reply.text
        return reply.text


def role(name: str):
    return lambda request: f"You are the {name}" in str(request["messages"][0]["content"])


def test_a_flows_agents_are_the_runtimes_subagents(model_config, scripted_server, tmp_path):
    scripted_server.on(role("analyst"), Reply(text="1. say hello", prompt_tokens=40))
    scripted_server.on(role("reviewer"), Reply(text="looks right", prompt_tokens=30))

    async def go():
        runtime = Runtime(load_config())
        try:
            run = await Review(runtime=runtime, checkpoint_dir=tmp_path).kickoff_async()
            topics = runtime.store.topics.recent(sources=("subagent",))
            return run, topics
        finally:
            await runtime.aclose()

    run, topics = asyncio.run(go())
    assert run.status == "completed"
    assert run.state.verdict == "looks right"
    assert sorted(topic.agent for topic in topics) == ["analyst", "reviewer"]
    spans = [span for span in run.trace.spans if span.kind == "agent"]
    assert [span.name for span in spans] == ["analyst", "reviewer"]
    assert all(span.ok for span in spans)
    assert all(span.detail.get("topic_id") for span in spans)
