"""Aborts and answers for turns that run on another instance of a shared store, and the
listener that wakes an instance for them and for new turn events.

A request reaching an instance that does not run the session's turn is first checked against
the database (does a turn run? was that question asked, is it still open?), so a 404 or a 409
costs no round trip. Otherwise the command is left in ``turn_commands`` for the lease holder and
announced on ``turn_log.COMMANDS``; the holder takes it, applies it as it would its own request
(``abort``, ``interactions.answer``) and replies on the same channel. The sender waits for the
reply up to :data:`REPLY_WAIT`; a holder that missed the notification still finds the command at
its next lease sweep, so without a reply the sender answers as the database said.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import StoreError
from .event_codec import decode_event, kind_prefix
from .interactions import AnswerOutcome, Question, QuestionClosed

if TYPE_CHECKING:
    from ..store import TurnLogRepository
    from .turns import TurnManager

log = logging.getLogger(__name__)

REPLY_WAIT = 5.0  # seconds the sender waits for the holder's reply
KEEP_COMMANDS = 120.0  # seconds a command nobody took is kept (its instance is gone)
OUTCOMES: tuple[AnswerOutcome, ...] = ("answered", "unknown", "closed")


class RemoteTurns:
    """Sends commands to the instances that run the turns, and applies the ones sent to us to
    ``turns``, this instance's turn manager."""

    def __init__(
        self, repo: Callable[[], TurnLogRepository], owner: str, turns: TurnManager
    ) -> None:
        self._repo = repo
        self.owner = owner
        self._turns = turns
        self._waiting: dict[str, asyncio.Future[Any]] = {}
        self._taking = asyncio.Lock()
        self._tasks: set[asyncio.Task[Any]] = set()

    # -- sending ------------------------------------------------------------------------------

    async def abort(self, topic_id: str) -> bool:
        """Stop the turn another instance runs; whether one was running."""
        holder = await asyncio.to_thread(self._repo().holder, topic_id)
        if holder is None or holder.turn is None or holder.owner == self.owner:
            return False
        reply = await self._send(holder.owner, topic_id, {"kind": "abort", "turn": holder.turn})
        return True if reply is None else bool(reply)

    async def answer(self, topic_id: str, question_id: str, text: str) -> AnswerOutcome:
        """Answer a question a turn on another instance asked (it is in the shared log)."""
        stored = await asyncio.to_thread(self._repo().with_prefix, topic_id, kind_prefix(Question))
        asked: tuple[str, Question] | None = None
        closed = False
        for row in stored:
            event = decode_event(row.event)
            if isinstance(event, Question) and event.id == question_id:
                asked = (row.turn, event)
            elif isinstance(event, QuestionClosed) and event.id == question_id:
                closed = True
        if asked is None:
            return "unknown"
        turn, question = asked
        if closed or question.deadline < time.time():
            return "closed"
        holder = await asyncio.to_thread(self._repo().holder, topic_id)
        if holder is None or holder.turn != turn or holder.owner == self.owner:
            return "closed"  # its turn is over (here, it would have been answered locally)
        command = {"kind": "answer", "question": question_id, "answer": text}
        reply = await self._send(holder.owner, topic_id, command)
        return reply if reply in OUTCOMES else "answered"

    async def _send(self, owner: str, topic_id: str, command: dict[str, Any]) -> Any:
        """The holder's reply, or None when none came in time."""
        command_id = uuid.uuid4().hex
        waiter: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[command_id] = waiter
        body = json.dumps({**command, "from": self.owner})
        try:
            await asyncio.to_thread(self._repo().send_command, command_id, topic_id, owner, body)
            return await asyncio.wait_for(waiter, REPLY_WAIT)
        except asyncio.TimeoutError:
            log.warning("session %s: %s did not confirm a %s", topic_id, owner, command["kind"])
            return None
        finally:
            self._waiting.pop(command_id, None)

    # -- receiving ----------------------------------------------------------------------------

    def notified(self, payload: str | None) -> None:
        """A message on the commands channel (on the event loop): a reply or a new command;
        None when messages may have been missed (the commands are looked for then)."""
        if payload is None:
            self._spawn_take()
            return
        try:
            message = json.loads(payload)
        except ValueError:
            return
        if not isinstance(message, dict) or message.get("to") != self.owner:
            return
        if "reply" not in message:
            self._spawn_take()
            return
        waiter = self._waiting.get(str(message["reply"]))
        if waiter is not None and not waiter.done():
            waiter.set_result(message.get("result"))

    def _spawn_take(self) -> None:
        task = asyncio.get_running_loop().create_task(self.take())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def take(self) -> None:
        """Apply the commands left for us and reply to their senders."""
        async with self._taking:
            try:
                commands = await asyncio.to_thread(self._repo().take_commands, self.owner)
                for command_id, topic_id, raw in commands:
                    command = json.loads(raw)
                    result = self._apply(topic_id, command)
                    reply = {"to": command.get("from"), "reply": command_id, "result": result}
                    await asyncio.to_thread(self._repo().signal, reply)
            except StoreError as exc:
                log.warning("could not apply the turn commands sent to this instance: %s", exc)

    def _apply(self, topic_id: str, command: dict[str, Any]) -> Any:
        """The result (JSON) of a command another instance sent for a turn that runs here."""
        turns = self._turns
        if command.get("kind") == "abort":
            running = turns.running(topic_id)
            # only the turn it was meant for: a late command never stops the next one
            return (
                running is not None and running.id == command.get("turn") and turns.abort(topic_id)
            )
        if command.get("kind") == "answer":
            question, text = str(command.get("question")), str(command.get("answer"))
            return turns.interactions.answer(topic_id, question, text)
        return None

    async def sweep(self) -> None:
        """With the lease sweep: the commands whose notification was missed, and the old ones
        nobody will take."""
        await self.take()
        await asyncio.to_thread(self._repo().drop_commands, time.time() - KEEP_COMMANDS)
