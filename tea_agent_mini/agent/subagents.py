"""Subagents: child sessions that do one task for a parent turn and report back.

    result = await runtime.subagents.run("explorer", "Where is the config loaded?")

Each child runs on the one turn loop (``Session.run_turn``) in a topic of its own (source
``subagent``, naming its parent and identity), so its steps can be read and resumed like any
conversation. Only its final answer returns to the parent. Its events are relayed into the
parent's stream while it runs, and its tokens count toward the parent's turn.

Limits (``agent.subagents``): at most ``max_parallel`` children run at once in the process; a
child stops at its identity's ``timeout`` (or the config's); all children of one turn share a
token and a time budget. A child cannot start children (depth 1): its tools never include the
subagent tools, and its context says ``depth=1``. Cancelling the parent's turn cancels the
children it is waiting for; a child started with ``start`` (async mode) runs on until it ends or
is cancelled, and its result arrives in the parent topic's inbox.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from ..errors import TeaAgentError
from ..types import ChildEvent, Done, Error, EventSink, ToolCallStart, Usage
from .identities import Identity, IdentitySet

if TYPE_CHECKING:
    from ..config import SubagentsConfig
    from ..store import Store
    from ..toolkit.context import ToolContext, TurnLedger
    from .session import Session

log = logging.getLogger(__name__)

INBOX_PREFIX = "topic:"
TASK_PREVIEW = 60


class SubagentError(TeaAgentError):
    """A subagent cannot be started: unknown identity, depth or budget exceeded."""


@dataclass(frozen=True)
class SubagentResult:
    """What a child's turn came to. ``text`` is its final answer; ``error`` says why it failed."""

    agent: str
    task: str
    text: str
    ok: bool
    topic_id: str | None
    error: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    tool_calls: int = 0
    iterations: int = 0
    duration: float = 0.0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def summary_line(self) -> str:
        """``[explorer · topic 1a2b3c4d · 3 tool calls · 1,234 tokens · 12.3 s]``."""
        topic = f"topic {self.topic_id[:8]}" if self.topic_id else "no topic"
        return (
            f"[{self.agent} · {topic} · {self.tool_calls} tool calls · {self.tokens:,} tokens · "
            f"{self.duration:.1f} s]"
        )


@dataclass(frozen=True)
class ChildRequest:
    """What the runtime needs to build a child session. ``topic_id`` continues that topic (a
    teammate's, which lives across its turns) instead of creating one."""

    identity: Identity
    task: str
    parent: ToolContext | None
    topic_id: str | None = None


class ChildSessions(Protocol):
    """Builds child sessions (``runtime.Runtime``)."""

    def child_session(self, request: ChildRequest) -> Session: ...


@dataclass
class _Tally:
    usage: Usage
    tool_calls: int = 0


class Subagents:
    """Runs subagents for the sessions of one runtime."""

    def __init__(
        self,
        sessions: ChildSessions,
        identities: Callable[[], IdentitySet],
        settings: SubagentsConfig,
        store: Store,
    ) -> None:
        self.sessions = sessions
        self.load_identities = identities
        self.settings = settings
        self.store = store
        # asyncio primitives belong to one loop, and the CLI runs each command on its own
        self._slots: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore]
        self._slots = weakref.WeakKeyDictionary()
        self._background: dict[str, asyncio.Task[SubagentResult]] = {}

    # ---- identities ----

    def identity(self, name: str) -> Identity:
        """The identity called ``name``. Raises SubagentError listing the known ones."""
        found = self.load_identities()
        identity = found.get(name or "worker")
        if identity is None:
            known = ", ".join(sorted(found.identities)) or "none"
            raise SubagentError(f"no subagent identity {name!r}; available: {known}")
        return identity

    # ---- running ----

    async def run(
        self,
        agent: str,
        task: str,
        *,
        context: str = "",
        parent: ToolContext | None = None,
        call_id: str = "",
    ) -> SubagentResult:
        """Run a child to its end and return its result (a failed child is a result too).

        Raises:
            SubagentError: unknown identity, a child asking for a child, or the turn's budget
                for subagents is spent.
        """
        session, identity = await self.prepare(agent, task, parent)
        return await self.drive(session, identity, _message(task, context), parent, call_id)

    async def prepare(
        self, agent: str, task: str, parent: ToolContext | None
    ) -> tuple[Session, Identity]:
        """Check the limits and create the child's session (and topic)."""
        identity = self.identity(agent)
        if parent is not None and parent.depth >= 1:
            raise SubagentError("a subagent cannot start subagents; do the task yourself")
        if not task.strip():
            raise SubagentError("the task is empty: say what the subagent should do")
        if parent is not None:
            self._check_budget(parent.turn)
            parent.turn.children += 1
        request = ChildRequest(identity, task, parent)
        session = await asyncio.to_thread(self.sessions.child_session, request)
        return session, identity

    async def drive(
        self,
        session: Session,
        identity: Identity,
        message: str,
        parent: ToolContext | None,
        call_id: str = "",
    ) -> SubagentResult:
        """Run the child's turn within its time limit, relaying its events to the parent."""
        started = time.monotonic()
        tally = _Tally(Usage())
        emit = parent.emit if parent is not None else None
        ledger = parent.turn if parent is not None else None
        timeout = self._time_limit(identity, ledger)
        async with self._semaphore():
            try:
                final = await asyncio.wait_for(
                    self._consume(session, identity.name, message, tally, emit, ledger, call_id),
                    timeout,
                )
            except asyncio.TimeoutError:
                final = Error(f"the {identity.name} subagent ran out of time ({timeout:g} s)")
            except _BudgetSpent as exc:
                final = Error(str(exc))
        return _result(identity, message, session.topic_id, final, tally, started)

    async def _consume(
        self,
        session: Session,
        agent: str,
        message: str,
        tally: _Tally,
        emit: EventSink | None,
        ledger: TurnLedger | None,
        call_id: str,
    ) -> Done | Error:
        final: Done | Error = Error("the subagent ended without an answer")
        events = session.run_turn(message)
        try:
            async for event in events:
                if isinstance(event, Usage):
                    tally.usage = tally.usage + event
                    if ledger is not None:
                        ledger.tokens += event.total_tokens or (
                            event.prompt_tokens + event.completion_tokens
                        )
                elif isinstance(event, ToolCallStart):
                    tally.tool_calls += 1
                elif isinstance(event, (Done, Error)):
                    final = event
                if emit is not None:
                    emit(ChildEvent(call_id, agent, session.topic_id, event))
                if ledger is not None and isinstance(event, Usage):
                    self._check_tokens(ledger)
        finally:
            await events.aclose()  # a child stopped early records how far it got
        return final

    def _semaphore(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        slots = self._slots.get(loop)
        if slots is None:
            slots = self._slots[loop] = asyncio.Semaphore(max(1, self.settings.max_parallel))
        return slots

    # ---- async mode ----

    async def start(self, agent: str, task: str, *, context: str = "", parent: ToolContext) -> str:
        """Start a child in the background and return its topic id at once. Its result is
        sent to the parent topic's inbox (and shown as a notice) when it ends."""
        session, identity = await self.prepare(agent, task, parent)
        detached = _detached(parent)
        message = _message(task, context)

        async def work() -> SubagentResult:
            result = await self.drive(session, identity, message, detached)
            await asyncio.to_thread(self._deliver, parent, result)
            return result

        task_handle = asyncio.ensure_future(work())
        self._background[session.topic_id] = task_handle
        task_handle.add_done_callback(lambda _: self._background.pop(session.topic_id, None))
        return session.topic_id

    def running(self) -> list[str]:
        """Topic ids of the children running in the background."""
        return [topic for topic, task in self._background.items() if not task.done()]

    def cancel(self, topic_id: str) -> bool:
        task = self._background.get(topic_id)
        if task is None or task.done():
            return False
        task.cancel()
        return True

    async def aclose(self) -> None:
        """Cancel the background children (at shutdown) and wait for them to record it."""
        tasks = [task for task in self._background.values() if not task.done()]
        for task in tasks:
            task.cancel("the agent is shutting down")
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    def _deliver(self, parent: ToolContext, result: SubagentResult) -> None:
        if parent.topic_id is None:
            return
        body = result.text if result.ok else f"failed: {result.error}"
        self.store.inbox.send(
            f"subagent:{result.agent}",
            INBOX_PREFIX + parent.topic_id,
            f"{result.summary_line()}\n{body}",
            kind="result",
            data={"topic_id": result.topic_id, "ok": result.ok, "task": result.task},
        )
        if parent.on_notice is not None:
            status = "finished" if result.ok else "failed"
            try:
                parent.on_notice(f"Subagent {result.agent} {status}", body[:300], "normal")
            except Exception:  # a front end's notice failing must not lose the result
                log.warning("notice for subagent %s failed", result.agent, exc_info=True)

    # ---- budgets ----

    def _time_limit(self, identity: Identity, ledger: TurnLedger | None) -> float:
        limit = identity.timeout or self.settings.timeout
        if ledger is not None and self.settings.turn_seconds > 0:
            left = self.settings.turn_seconds - (time.monotonic() - ledger.started)
            limit = min(limit, max(left, 1.0))
        return limit

    def _check_budget(self, ledger: TurnLedger) -> None:
        self._check_tokens(ledger)
        seconds = self.settings.turn_seconds
        if seconds > 0 and time.monotonic() - ledger.started >= seconds:
            raise SubagentError(
                f"this turn's subagents have used their time ({seconds:g} s, "
                "agent.subagents.turn_seconds); finish the task without more subagents"
            )

    def _check_tokens(self, ledger: TurnLedger) -> None:
        limit = self.settings.turn_tokens
        if limit > 0 and ledger.tokens >= limit:
            raise _BudgetSpent(
                f"this turn's subagents have used {ledger.tokens:,} tokens, the limit is "
                f"{limit:,} (agent.subagents.turn_tokens); finish the task without more subagents"
            )


class _BudgetSpent(SubagentError):
    pass


def _message(task: str, context: str) -> str:
    if not context.strip():
        return task.strip()
    return f"{task.strip()}\n\nContext from the agent that sent you:\n{context.strip()}"


def _detached(parent: ToolContext) -> ToolContext:
    """A copy of the parent's context for a child that outlives the call: its approvals and
    notices still reach the user, its events and budget no longer belong to a running turn."""
    import dataclasses

    from ..toolkit.context import TurnLedger

    copy = dataclasses.replace(parent)
    copy.emit = None
    copy.turn = TurnLedger()
    return copy


def _result(
    identity: Identity,
    message: str,
    topic_id: str,
    final: Done | Error,
    tally: _Tally,
    started: float,
) -> SubagentResult:
    done = final if isinstance(final, Done) else None
    return SubagentResult(
        agent=identity.name,
        task=message,
        text=done.text if done is not None else "",
        ok=done is not None,
        topic_id=topic_id,
        error=final.message if isinstance(final, Error) else None,
        prompt_tokens=tally.usage.prompt_tokens,
        completion_tokens=tally.usage.completion_tokens,
        tool_calls=tally.tool_calls,
        iterations=done.iterations if done is not None else 0,
        duration=time.monotonic() - started,
    )
