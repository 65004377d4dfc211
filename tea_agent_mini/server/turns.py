"""The turn manager: a background task per running turn, a FIFO queue and an event log per session.

A turn runs as its own asyncio task, so it keeps going when the client that started it goes
away. Everything it emits is appended to the session's log under a monotonically increasing id;
any number of clients follow the log from any id (that is how ``Last-Event-ID`` resumes work), each
at its own pace, so a slow reader never holds up the turn or the other readers. A message sent
while the session is busy waits in the queue and runs when the turns before it have finished.
"""

from __future__ import annotations

import asyncio
import bisect
import functools
import logging
import time
import uuid
from collections import OrderedDict, deque
from collections.abc import AsyncIterator
from typing import Any

from ..errors import ConfigError, TeaAgentError
from ..types import CallOptions, Done, Error, Usage
from .interactions import AnswerOutcome, Interactions, TurnHooks
from .turn_records import (
    Discard,
    Entry,
    OpenSession,
    Queued,
    QueueItem,
    SessionState,
    ShuttingDown,
    Submission,
    TurnStarted,
    is_final,
)

log = logging.getLogger(__name__)
SHUTDOWN = "the server shut down while this tool was running"


class _Channel:
    """The per-session state: log, queue and the running turn."""

    def __init__(self, topic_id: str) -> None:
        self.topic_id = topic_id
        self.entries: list[Entry] = []
        self.queue: deque[QueueItem] = deque()
        self.current: QueueItem | None = None
        self.task: asyncio.Task[None] | None = None
        self.finished: deque[str] = deque()
        self.changed = asyncio.Event()

    @property
    def busy(self) -> bool:
        return self.current is not None or bool(self.queue)

    @property
    def last_id(self) -> int:
        return self.entries[-1].id if self.entries else 0

    def after(self, since: int) -> list[Entry]:
        start = bisect.bisect_right(self.entries, since, key=lambda e: e.id)
        return self.entries[start:]

    def notify(self) -> None:
        waiter, self.changed = self.changed, asyncio.Event()
        waiter.set()


class TurnManager:
    """Runs turns in the background and keeps what they emit for the clients that follow."""

    def __init__(
        self,
        open_session: OpenSession,
        *,
        discard: Discard | None = None,
        keep_turns: int = 3,
        max_entries: int = 50_000,
        max_idle_sessions: int = 200,
        heartbeat: float = 15.0,
    ) -> None:
        self._open_session = open_session
        self._discard = discard
        self.interactions = Interactions()  # the questions the running turns ask
        self._channels: OrderedDict[str, _Channel] = OrderedDict()
        self._keep_turns = keep_turns
        self._max_entries = max_entries
        self._max_idle = max_idle_sessions
        self.heartbeat = heartbeat
        self._closing = False
        # Ids start at the wall clock in ms, so ids from a restarted server are above the ids a
        # client remembers from the previous run and a stale Last-Event-ID replays everything.
        self._last_id = int(time.time() * 1000)

    # -- queries ------------------------------------------------------------------------------

    def busy(self, topic_id: str) -> bool:
        channel = self._channels.get(topic_id)
        return channel is not None and channel.busy

    def running(self, topic_id: str) -> QueueItem | None:
        channel = self._channels.get(topic_id)
        return channel.current if channel else None

    def queued(self, topic_id: str) -> list[QueueItem]:
        channel = self._channels.get(topic_id)
        return list(channel.queue) if channel else []

    def running_count(self) -> int:
        return sum(1 for c in self._channels.values() if c.current is not None)

    def any_busy(self) -> bool:
        # this instance's turns only, on a shared store too: they are what a config or profile
        # change here would pull the runtime from under
        return any(c.busy for c in self._channels.values())

    async def session_states(self, topic_ids: list[str]) -> dict[str, SessionState]:
        """Whether each session runs or waits, and what (wherever its turns run)."""
        states = {}
        for topic_id in topic_ids:
            running = self.running(topic_id)
            states[topic_id] = SessionState(
                self.busy(topic_id), running.id if running else None, len(self.queued(topic_id))
            )
        return states

    def turn_start_id(self, topic_id: str) -> int:
        """The id just before the running (else the last) turn's first event; 0 if none."""
        channel = self._channels.get(topic_id)
        if channel is None or not channel.entries:
            return 0
        turn = channel.current.id if channel.current else channel.entries[-1].turn
        first = next((e.id for e in channel.entries if e.turn == turn), channel.last_id + 1)
        return first - 1

    # -- commands -----------------------------------------------------------------------------

    async def start(self) -> None:
        """Called once the server runs (the shared manager starts its background work)."""

    async def start_id(self, topic_id: str) -> int:
        """:meth:`turn_start_id`, from wherever the log is."""
        return self.turn_start_id(topic_id)

    async def queue_state(self, topic_id: str) -> tuple[QueueItem | None, list[QueueItem]]:
        """The running turn's item and the waiting ones, wherever they are kept."""
        return self.running(topic_id), self.queued(topic_id)

    async def acancel_queued(self, topic_id: str, item_id: str) -> bool:
        return self.cancel_queued(topic_id, item_id)

    async def aclear_queue(self, topic_id: str) -> int:
        return self.clear_queue(topic_id)

    async def asubmit(
        self,
        topic_id: str,
        content: str | list[dict[str, Any]],
        profile: str | None = None,
        interactive: bool = True,
        *,
        options: CallOptions = CallOptions(),
        keep: bool = True,
    ) -> Submission:
        """:meth:`submit` for the routes: a shared store queues in the database."""
        return self.submit(topic_id, content, profile, interactive, options=options, keep=keep)

    def submit(
        self,
        topic_id: str,
        content: str | list[dict[str, Any]],
        profile: str | None = None,
        interactive: bool = True,
        *,
        options: CallOptions = CallOptions(),
        keep: bool = True,
    ) -> Submission:
        """Queue a message; it starts at once when the session is idle. A turn that is not
        ``interactive`` asks nobody: approvals are refused and questions get their default.
        ``options`` go to every model call of the turn; a turn that does not ``keep`` its
        session deletes it when it ends (a discard is needed for that)."""
        if self._closing:
            raise ShuttingDown("the server is shutting down")
        if not keep and self._discard is None:
            raise ValueError("this turn manager cannot discard sessions")
        channel = self._channel(topic_id)
        since = channel.last_id
        item = QueueItem(
            uuid.uuid4().hex[:16], content, profile, interactive, options=options, keep=keep
        )
        channel.queue.append(item)
        if channel.current is None:
            self._advance(channel)
            return Submission(item, 0, since)
        position = len(channel.queue)
        self._log(channel, item.id, Queued(item.id, position, item.text[:200]))
        return Submission(item, position, since)

    def cancel_queued(self, topic_id: str, item_id: str) -> bool:
        channel = self._channels.get(topic_id)
        item = next((i for i in channel.queue if i.id == item_id), None) if channel else None
        if channel is None or item is None:
            return False
        channel.queue.remove(item)
        self._log(channel, item.id, Error("removed from the queue", kind="cancelled"))
        return True

    def clear_queue(self, topic_id: str) -> int:
        items = self.queued(topic_id)
        return sum(self.cancel_queued(topic_id, item.id) for item in items)

    def abort(self, topic_id: str) -> bool:
        """Stop the running turn (the queue goes on with the next message)."""
        channel = self._channels.get(topic_id)
        if channel is None or channel.task is None or channel.task.done():
            return False
        channel.task.cancel()
        return True

    async def aabort(self, topic_id: str) -> bool:
        """:meth:`abort`, wherever the turn runs."""
        return self.abort(topic_id)

    async def aanswer(self, topic_id: str, question_id: str, text: str) -> AnswerOutcome:
        """Answer a running turn's question, wherever the turn runs (see
        :meth:`Interactions.answer`)."""
        return self.interactions.answer(topic_id, question_id, text)

    async def forget(self, topic_id: str) -> None:
        """Stop everything of a session (before it is deleted) and drop its log."""
        self.clear_queue(topic_id)
        channel = self._channels.get(topic_id)
        if channel is None:
            return
        task = channel.task
        if task is not None and not task.done():
            task.cancel()
            await asyncio.wait({task}, timeout=10)
        self._channels.pop(topic_id, None)
        channel.notify()

    async def shutdown(self, timeout: float = 5.0) -> None:
        """Cancel the queues and the running turns, wake every follower, wait for the turns."""
        if self._closing:
            return
        self._closing = True
        tasks = []
        for topic_id, channel in list(self._channels.items()):
            self.clear_queue(topic_id)
            if channel.task is not None and not channel.task.done():
                channel.task.cancel(SHUTDOWN)
                tasks.append(channel.task)
            channel.notify()
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)
        for channel in list(self._channels.values()):
            channel.notify()  # the followers of turns that have now ended

    # -- following ----------------------------------------------------------------------------

    async def follow(
        self, topic_id: str, since: int = 0, *, turn: str | None = None
    ) -> AsyncIterator[Entry | None]:
        """:meth:`follow_batches`, one entry at a time."""
        async for batch in self.follow_batches(topic_id, since, turn=turn):
            if batch is None:
                yield None
                continue
            for entry in batch:
                yield entry

    async def follow_batches(
        self, topic_id: str, since: int = 0, *, turn: str | None = None
    ) -> AsyncIterator[list[Entry] | None]:
        """Yield the logged entries with ids above ``since`` as they come, in batches of what
        was there at each wake-up (so a busy stream is written with fewer sends); ``None``
        after ``heartbeat`` seconds of quiet.

        With ``turn``, only that turn's entries, ending after its Done or Error; without it,
        every entry until the session is idle.
        """
        channel = self._channels.get(topic_id)
        position = since
        while channel is not None:
            waiter = channel.changed
            batch, finished = [], False
            for entry in channel.after(position):
                position = entry.id
                if turn is None or entry.turn == turn:
                    batch.append(entry)
                    if turn is not None and is_final(entry):
                        finished = True
                        break
            if batch:
                yield batch
            # at shutdown a running turn still logs how it ended (cancelled) before streams close
            closed = self._closing and not channel.busy
            if finished or closed or self._channels.get(topic_id) is not channel:
                return
            if turn is None and not channel.busy:
                return
            try:
                await asyncio.wait_for(waiter.wait(), self.heartbeat)
            except asyncio.TimeoutError:
                yield None

    # -- internals ----------------------------------------------------------------------------

    def _channel(self, topic_id: str) -> _Channel:
        channel = self._channels.get(topic_id)
        if channel is None:
            channel = self._channels[topic_id] = _Channel(topic_id)
            self._evict_idle()
        self._channels.move_to_end(topic_id)
        return channel

    def _evict_idle(self) -> None:
        idle = [t for t, c in self._channels.items() if not c.busy]
        for topic_id in idle[: max(0, len(idle) - self._max_idle)]:
            self._channels.pop(topic_id).notify()

    def _log(self, channel: _Channel, turn: str, event: Any) -> None:
        self._last_id += 1
        channel.entries.append(Entry(self._last_id, turn, event))
        if len(channel.entries) > self._max_entries:
            del channel.entries[: len(channel.entries) - self._max_entries]
        channel.notify()

    def _advance(self, channel: _Channel) -> None:
        if self._closing or not channel.queue:
            return
        item = channel.queue.popleft()
        channel.current = item
        self._log(channel, item.id, TurnStarted(item.id, item.text[:200], item.attachments))
        channel.task = asyncio.get_running_loop().create_task(
            self._run(channel, item), name=f"turn-{channel.topic_id[:8]}-{item.id}"
        )

    async def _run(self, channel: _Channel, item: QueueItem) -> None:
        final = False
        try:
            hooks = self._hooks(channel, item)
            open_session = functools.partial(
                self._open_session,
                channel.topic_id,
                item.profile,
                approve=hooks.approve if item.interactive else None,
                ask_user=hooks.ask_user if item.interactive else None,
                on_notice=hooks.on_notice,
                follow_up=item.keep,
            )
            session = await asyncio.to_thread(open_session)
            async for event in session.run_turn(item.content, item.options):
                if isinstance(event, Usage):
                    continue  # the totals arrive with Done
                final = isinstance(event, (Done, Error))
                if isinstance(event, Error):
                    log.warning(
                        "turn %s of session %s failed (%s): %s",
                        item.id,
                        channel.topic_id,
                        event.kind,
                        event.message,
                    )
                self._log(channel, item.id, event)
        except asyncio.CancelledError:
            final = True
            self._log(channel, item.id, Error("the turn was stopped", kind="cancelled"))
        except TeaAgentError as exc:
            final = True
            kind = "config" if isinstance(exc, ConfigError) else "error"
            self._log(channel, item.id, Error(str(exc), kind=kind))
        except Exception:
            # A detached task: nobody else would ever see this, and the followers must end.
            log.exception("turn %s of session %s failed", item.id, channel.topic_id)
            final = True
            self._log(channel, item.id, Error("internal error while running the turn", "internal"))
        finally:
            self.interactions.end_turn(item.id)
            if not final:
                self._log(channel, item.id, Error("the turn ended without an answer", "internal"))
            channel.current, channel.task = None, None
            self._retire(channel, item.id)
            self._advance(channel)
            channel.notify()
            if not item.keep:
                await self._discard_session(channel.topic_id)

    async def _discard_session(self, topic_id: str) -> None:
        assert self._discard is not None
        try:
            # shielded: a turn stopped by a shutdown still leaves no session behind
            await asyncio.shield(asyncio.to_thread(self._discard, topic_id))
        except TeaAgentError as exc:
            log.error("could not delete the unkept session %s: %s", topic_id, exc)

    def _hooks(self, channel: _Channel, item: QueueItem) -> TurnHooks:
        """The turn's ways to reach the user: its questions and notices go onto its log."""

        def publish(event: Any) -> None:
            if channel.current is item:  # a tool thread outliving its turn logs nothing
                self._log(channel, item.id, event)

        return self.interactions.hooks(channel.topic_id, item.id, publish)

    def _retire(self, channel: _Channel, turn: str) -> None:
        """Keep the log of the last few finished turns only."""
        channel.finished.append(turn)
        while len(channel.finished) > self._keep_turns:
            old = channel.finished.popleft()
            channel.entries = [e for e in channel.entries if e.turn != old]
