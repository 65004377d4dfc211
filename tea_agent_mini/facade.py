"""A synchronous facade for embedding the agent in plain Python code.

    agent = Agent(workspace="/srv/project")
    print(agent.run("Count the Python files here"))

``asyncio.run`` is used only here, at the edge; the core stays async.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from .config import Config, load_config
from .errors import LLMError
from .types import Done, Error, Event


class Agent:
    """Runs turns on one topic (created on first use) and returns the final text."""

    def __init__(
        self,
        config: Config | None = None,
        *,
        profile: str | None = None,
        workspace: str | None = None,
        topic_id: str | None = None,
    ) -> None:
        config = config or load_config(profile)
        if workspace is not None:
            config.agent = replace(config.agent, workspace=str(workspace))
        self.config = config
        self.topic_id = topic_id

    def run(self, prompt: str) -> str:
        """Run one turn; returns the final answer or raises LLMError when the turn failed."""
        done = self.run_events(prompt)[-1]
        if isinstance(done, Error):
            raise LLMError(done.message)
        assert isinstance(done, Done)
        return done.text

    def run_events(self, prompt: str) -> list[Event]:
        """Run one turn and return all its events (the last one is Done or Error)."""
        return asyncio.run(self._run(prompt))

    async def _run(self, prompt: str) -> list[Event]:
        from .runtime import Runtime

        runtime = Runtime(self.config)
        try:
            session = runtime.session(self.topic_id)
            self.topic_id = session.topic_id
            events: list[Any] = [event async for event in session.run_turn(prompt)]
            return events
        finally:
            await runtime.aclose()
