"""A scripted AgentRunner for the flow tests: it answers each agent by rule and remembers the
calls, the way the runtime's subagent dispatcher would answer (without a model)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field


@dataclass
class Reply:
    text: str
    ok: bool = True
    error: str | None = None
    topic_id: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass
class ScriptedRunner:
    """``answers`` maps an agent name to its reply text (``"{task}"`` is filled in); an agent
    in ``failing`` answers ok=False."""

    answers: dict[str, str] = field(default_factory=dict)
    failing: set[str] = field(default_factory=set)
    delay: float = 0.0
    calls: list[tuple[str, str, str]] = field(default_factory=list)

    async def run(self, agent: str, task: str, *, context: str = "") -> Reply:
        self.calls.append((agent, task, context))
        if self.delay:
            await asyncio.sleep(self.delay)
        number = len(self.calls)
        if agent in self.failing:
            return Reply("", ok=False, error=f"{agent} gave up", topic_id=f"topic-{number}")
        text = self.answers.get(agent, "{task}").format(task=task)
        return Reply(text, topic_id=f"topic-{number}", prompt_tokens=10, completion_tokens=5)
