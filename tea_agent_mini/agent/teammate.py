"""A teammate's worker: it sleeps until its inbox has mail, runs one turn for the batch and
answers the senders (``agent/team.py`` starts and stops it).

The turn runs through the subagents' machinery (``Subagents.drive``: the same limits, the same
loop) in the teammate's own topic, so its history carries over from turn to turn. The answer is
marked as a reply (``in_reply_to``); a reply is never answered back to its sender, or two
teammates would answer each other for ever: a turn woken only by replies answers the lead.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import TeaAgentError
from .subagents import ChildRequest

if TYPE_CHECKING:
    from ..store import Store
    from ..store.agents import AgentMessage
    from .identities import Identity
    from .subagents import Subagents

log = logging.getLogger(__name__)

LEAD = "lead"  # the user's side of the team: their sessions read this inbox
POLL_SECONDS = 5.0  # how late a message written by another process is found, at most
UNANSWERED = ("shutdown_request", "shutdown_response")


class Mailroom(Protocol):
    """What a worker needs of its team (``team.Team``)."""

    store: Store
    subagents: Subagents

    async def send(
        self,
        sender: str,
        to: str,
        text: str,
        kind: str = "message",
        data: dict[str, Any] | None = None,
    ) -> AgentMessage: ...


@dataclass
class Worker:
    """One teammate's worker: an asyncio task on the loop that spawned it."""

    name: str
    topic_id: str
    identity: Identity
    loop: asyncio.AbstractEventLoop
    wake: asyncio.Event  # set by Team.poke when mail arrives
    task: asyncio.Task[None] | None = None

    def alive(self) -> bool:
        return self.task is not None and not self.task.done() and not self.loop.is_closed()

    def start(self, team: Mailroom) -> None:
        self.task = self.loop.create_task(self.work(team), name=f"teammate {self.name}")
        self.task.add_done_callback(_log_end)

    async def work(self, team: Mailroom) -> None:
        """Until asked to stop: wait for mail, answer it. Its status is left ``shutdown`` after
        a shutdown request, ``offline`` when it was cancelled."""
        ended = "offline"
        try:
            while True:
                self.wake.clear()  # before reading: a message sent meanwhile wakes it again
                batch = await asyncio.to_thread(team.store.inbox.read, self.name)
                if not batch:
                    await sleep_until(self.wake, POLL_SECONDS)
                elif await self.handle(team, batch):
                    ended = "shutdown"
                    return
        finally:
            team.store.teammates.set_status(self.name, ended)

    async def handle(self, team: Mailroom, batch: list[AgentMessage]) -> bool:
        """One turn for the batch's messages; True when it was asked to stop."""
        stops = [m for m in batch if m.kind == "shutdown_request"]
        work = [m for m in batch if m.kind not in UNANSWERED]
        if work:
            await self.turn(team, work)
        if stops:
            await asyncio.to_thread(team.store.teammates.set_status, self.name, "shutdown")
        for request in stops:
            await team.send(
                self.name,
                request.sender,
                f"{self.name} has stopped.",
                "shutdown_response",
                {"in_reply_to": [request.id]},
            )
        return bool(stops)

    async def turn(self, team: Mailroom, work: list[AgentMessage]) -> None:
        store, subagents = team.store, team.subagents
        await asyncio.to_thread(store.teammates.set_status, self.name, "working")
        text = turn_text(work)
        request = ChildRequest(self.identity, text, None, self.topic_id)
        try:
            session = await asyncio.to_thread(subagents.sessions.child_session, request)
            result = await subagents.drive(session, self.identity, text, None)
            ok, answer = result.ok, result.text if result.ok else f"failed: {result.error}"
        except TeaAgentError as exc:  # its model cannot be used, the store failed ...
            ok, answer = False, f"could not work: {exc}"
        data = {"in_reply_to": [m.id for m in work], "ok": ok, "topic_id": self.topic_id}
        answer = answer.strip() or "(no answer)"
        # idle first: whoever reads the answer finds the teammate ready for the next message
        await asyncio.to_thread(store.teammates.set_status, self.name, "idle")
        for recipient in reply_targets(work):
            await team.send(self.name, recipient, answer, "message", data)


def turn_text(messages: list[AgentMessage]) -> str:
    """The user message of a teammate's turn: the batch, each message with who sent it."""
    return "\n\n".join(f"[{_heading(m)}]\n{m.text}" for m in messages)


def _heading(message: AgentMessage) -> str:
    if message.kind == "broadcast":
        return f"broadcast from {message.sender} to the team"
    if message.kind == "plan_approval" and "approved" in message.data:
        verdict = "approved" if message.data["approved"] else "rejected"
        return f"{message.sender} {verdict} your plan"
    if message.data.get("in_reply_to"):
        return f"answer from {message.sender}"
    return f"{message.kind} from {message.sender}"


def reply_targets(messages: list[AgentMessage]) -> list[str]:
    """Who gets the answer: the senders of the messages that are not replies, else the lead."""
    senders = [m.sender for m in messages if not m.data.get("in_reply_to")]
    return list(dict.fromkeys(senders)) or [LEAD]


async def sleep_until(event: asyncio.Event, seconds: float) -> None:
    """Wait for ``event`` at most ``seconds``."""
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(event.wait(), seconds)


def _log_end(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("%s stopped: %s", task.get_name(), task.exception(), exc_info=task.exception())
