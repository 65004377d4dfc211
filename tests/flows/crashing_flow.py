"""A flow with a router loop that can crash in its publish step: by raising, or by the process
dying (``os._exit``) as a killed or crashed program would. Each step writes its name to the
calls log named in the state, so a test sees which steps ran, across processes.

    python -m tests.flows.crashing_flow CHECKPOINT_DIR CALLS_LOG    # dies in publish
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from tea_agent_mini.flows import Flow, listen, router, start
from tests.flows.flow_helpers import ScriptedRunner

HARD_EXIT = 3


@dataclass
class Doc:
    rounds: int = 0
    draft: str = ""
    verdict: str = ""
    log: str = ""


class Publish(Flow[Doc]):
    def __init__(self, *, crash: str = "", hard: bool = False, **kwargs) -> None:
        super().__init__(**kwargs)
        self.crash, self.hard = crash, hard

    def note(self, name: str) -> None:
        if self.state.log:
            with open(self.state.log, "a", encoding="utf-8") as log:
                log.write(name + "\n")
        if name == self.crash:
            if self.hard:
                os._exit(HARD_EXIT)
            raise RuntimeError("disk full")

    @start("redo")
    async def write(self):
        self.note("write")
        self.state.rounds += 1
        reply = await self.agent("coder").run(f"draft {self.state.rounds}")
        self.state.draft = reply.text
        return reply.text

    @router(write)
    def judge(self, draft):
        self.note("judge")
        return "ok" if self.state.rounds >= 2 else "redo"

    @listen("ok")
    def publish(self):
        self.note("publish")
        self.state.verdict = "published"
        return f"published {self.state.draft}"

    @listen(publish)
    def announce(self, text):
        self.note("announce")
        return f"announced: {text}"


def runner() -> ScriptedRunner:
    return ScriptedRunner(answers={"coder": "text of {task}"})


if __name__ == "__main__":
    folder, log = sys.argv[1], sys.argv[2]
    flow = Publish(agents=runner(), checkpoint_dir=folder, crash="publish", hard=True)
    flow.kickoff(inputs={"log": log})
