"""Turns shared by several server instances on one PostgreSQL store.

The instance that runs a session's turns holds the session's lease (``store/turn_log.py``),
renews it while it lives, and works through the session's queue, which is in the database: a
message sent to any instance is queued there and the lease holder (or whoever takes the lease
next) runs it. What a turn emits goes to the in-memory log as on SQLite and, in small batches,
to ``turn_events``, under the same ids; every follower reads the stored events, so a client
re-attaching to any instance with ``Last-Event-ID`` gets the rest of the stream. A dedicated
connection LISTENs for the writers' notifications and wakes the waiting streams; a slow poll
is the safety net. An abort or an answer sent to an instance that does not run the turn reaches
the one that does through ``turn_commands.py``; a session's ``busy`` is the database's.

An instance that dies leaves its lease to expire (``server.turn_lease``); the next instance to
look (each sweeps every third of the lease) takes it, logs the dead turn as ``interrupted`` and
runs the queue.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
import uuid
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from ..errors import StoreError
from ..store.turn_log import CHANNEL, COMMANDS, SessionRow
from ..types import CallOptions, Done, Error
from .event_codec import decode_event, decode_item, encode_event, encode_item
from .interactions import AnswerOutcome
from .turn_commands import RemoteTurns
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
from .turn_writer import EventWriter
from .turns import TurnManager, _Channel

if TYPE_CHECKING:
    from ..store import Store, TurnLogRepository

log = logging.getLogger(__name__)

POLL = 2.0  # a waiting stream reads again after this long even without a notification
READ_LIMIT = 1000
DISCARD_WAIT = 30.0  # seconds an unkept session waits for its streams before it is deleted
INTERRUPTED = "the server running this turn stopped before it ended"


class SharedTurnManager(TurnManager):
    """:class:`TurnManager` whose queue, lease and event log are in the database."""

    def __init__(
        self,
        open_session: OpenSession,
        store: Callable[[], Store],
        *,
        discard: Discard | None = None,
        lease: float = 20.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(open_session, discard=discard, **kwargs)
        self._store = store  # opened by the time start() is called
        self.lease = lease
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self.writer = EventWriter(lambda: self._repo, self._wake, self._spawn)
        self._waiters: dict[str, asyncio.Event] = {}
        self._starting: set[str] = set()
        self._again: set[str] = set()
        self._notes: dict[str, Entry] = {}  # a queued turn's "queued" event, for its stream
        self._tasks: set[asyncio.Task[Any]] = set()
        self._keeper: asyncio.Task[None] | None = None
        self._unlisten: list[Callable[[], None]] = []
        self._remote = RemoteTurns(lambda: self._repo, self.owner, self)
        self.notifications = 0  # received from the database (any instance's writes)
        self._following: dict[str, int] = {}  # session -> streams reading it here
        self._started: dict[str, float] = {}  # turn -> when this instance started it
        self._lost: set[str] = set()  # turns whose lease another instance took

    # -- lifecycle ----------------------------------------------------------------------------

    @property
    def _repo(self) -> TurnLogRepository:
        return self._store().turn_log

    async def start(self) -> None:
        from ..store.postgres import PostgresDatabase

        db = (await asyncio.to_thread(self._store)).db
        assert isinstance(db, PostgresDatabase), "a shared turn manager needs PostgreSQL"
        loop = asyncio.get_running_loop()
        handlers = {CHANNEL: self._notified, COMMANDS: self._remote.notified}
        for channel, handler in handlers.items():
            self._unlisten.append(db.listen(channel, _on_loop(loop, handler)))
        self._keeper = loop.create_task(self._keep(), name="turn-leases")

    async def shutdown(self, timeout: float = 5.0) -> None:
        if self._closing:
            return
        await super().shutdown(timeout)
        await self.writer.flush()
        if self._keeper is not None:
            self._keeper.cancel()
        for unlisten in self._unlisten:
            unlisten()
        for topic in list(self._channels):
            try:
                # the queue stays in the database for the other instances
                await asyncio.to_thread(self._repo.release, topic, self.owner)
            except StoreError as exc:
                log.warning("could not release the lease of session %s: %s", topic, exc)
        for waiter in list(self._waiters.values()):
            waiter.set()

    # -- commands -----------------------------------------------------------------------------

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
        if self._closing:
            raise ShuttingDown("the server is shutting down")
        if not keep and self._discard is None:
            raise ValueError("this turn manager cannot discard sessions")
        item = QueueItem(
            uuid.uuid4().hex[:16], content, profile, interactive, options=options, keep=keep
        )
        since = await asyncio.to_thread(self._repo.last_id, topic_id)
        local = self._channels.get(topic_id)
        if local is not None:
            since = max(since, local.last_id)
        position = await asyncio.to_thread(self._repo.enqueue, topic_id, item.id, encode_item(item))
        if position:
            self._notes[item.id] = Entry(since, item.id, Queued(item.id, position, item.text[:200]))
        self._schedule_next(topic_id)
        return Submission(item, position, since)

    def submit(self, *args: Any, **kwargs: Any) -> Submission:
        raise RuntimeError("on a shared store, turns are submitted with asubmit")

    async def queue_state(self, topic_id: str) -> tuple[QueueItem | None, list[QueueItem]]:
        rows = await asyncio.to_thread(self._repo.queued, topic_id)
        local = self._channels.get(topic_id)
        running = local.current if local is not None else None
        if running is None:
            turn = await asyncio.to_thread(self._repo.running, topic_id)
            running = QueueItem(turn, "") if turn else None  # on another instance
        return running, [decode_item(str(row[1])) for row in rows]

    async def acancel_queued(self, topic_id: str, item_id: str) -> bool:
        done = await asyncio.to_thread(self._repo.cancel, topic_id, item_id)
        if not done:
            return False
        removed = Error("removed from the queue", kind="cancelled")
        channel = self._channels.get(topic_id)
        if channel is not None and channel.current is not None:
            self._log(channel, item_id, removed)  # ours: under the ids this instance hands out
            await self.writer.flush()
            return True
        # run elsewhere: above the stored ids (a clash with the holder's next write drops
        # this note, never its events); the notification ends the message's stream either way
        last = await asyncio.to_thread(self._repo.last_id, topic_id)
        row = (topic_id, max(last, self._last_id) + 1, item_id, encode_event(removed))
        await asyncio.to_thread(self._repo.append, [row])
        return True

    async def aclear_queue(self, topic_id: str) -> int:
        _, items = await self.queue_state(topic_id)
        return sum([await self.acancel_queued(topic_id, item.id) for item in items])

    async def start_id(self, topic_id: str) -> int:
        return await asyncio.to_thread(self._repo.turn_start_id, topic_id)

    async def forget(self, topic_id: str) -> None:
        """As :meth:`TurnManager.forget`; a turn another instance runs is aborted there first
        (deleting the session deletes its rows, the command's too, so it goes before)."""
        if self.running(topic_id) is None:
            await self._remote.abort(topic_id)
        await super().forget(topic_id)

    async def aabort(self, topic_id: str) -> bool:
        return self.abort(topic_id) or await self._remote.abort(topic_id)

    async def aanswer(self, topic_id: str, question_id: str, text: str) -> AnswerOutcome:
        outcome = self.interactions.answer(topic_id, question_id, text)
        if outcome != "unknown":
            return outcome
        return await self._remote.answer(topic_id, question_id, text)

    async def session_states(self, topic_ids: list[str]) -> dict[str, SessionState]:
        rows = await asyncio.to_thread(self._repo.states, topic_ids)
        states = {}
        for topic_id in topic_ids:
            row = rows.get(topic_id, SessionRow(False, None, 0))
            local = self.running(topic_id)
            busy = row.leased or row.queued > 0 or local is not None
            states[topic_id] = SessionState(busy, local.id if local else row.running, row.queued)
        return states

    # -- following ----------------------------------------------------------------------------

    async def follow_batches(
        self, topic_id: str, since: int = 0, *, turn: str | None = None
    ) -> AsyncIterator[list[Entry] | None]:
        """As :meth:`TurnManager.follow_batches`, from the stored events."""
        note = self._notes.pop(turn, None) if turn is not None else None
        if note is not None:
            yield [note]
        self._following[topic_id] = self._following.get(topic_id, 0) + 1
        try:
            async for batch in self._follow_stored(topic_id, since, turn):
                yield batch
        finally:
            left = self._following.pop(topic_id, 1) - 1
            if left:
                self._following[topic_id] = left

    async def _follow_stored(
        self, topic_id: str, since: int, turn: str | None
    ) -> AsyncIterator[list[Entry] | None]:
        position, quiet = since, 0.0
        while True:
            waiter = self._waiters.setdefault(topic_id, asyncio.Event())
            busy, rows = await asyncio.to_thread(self._read, topic_id, position, turn)
            batch, finished = [], False
            for row in rows:
                position = row.id
                if turn is None or row.turn == turn:
                    entry = Entry(row.id, row.turn, decode_event(row.event))
                    batch.append(entry)
                    if turn is not None and is_final(entry):
                        finished = True
                        break
            if batch:
                quiet = 0.0
                yield batch
            if finished or (turn is None and not busy and not rows) or self._closing:
                return
            if turn is not None and not busy and not rows:
                yield [Entry(position, turn, Error("removed from the queue", kind="cancelled"))]
                return
            if rows:
                continue
            try:
                await asyncio.wait_for(waiter.wait(), min(POLL, self.heartbeat))
            except asyncio.TimeoutError:
                quiet += min(POLL, self.heartbeat)
                if quiet >= self.heartbeat:
                    quiet = 0.0
                    yield None

    def _read(self, topic_id: str, since: int, turn: str | None) -> tuple[bool, list[Any]]:
        """Whether the session (or ``turn``) still has events to come, then the events.
        In that order: what was stored before it ended is all read after."""
        if turn is None:
            busy = self._repo.busy(topic_id)
        else:
            busy = self._repo.pending(topic_id, turn)
        return busy, self._repo.after(topic_id, since, READ_LIMIT)

    def _notified(self, topic_id: str | None) -> None:
        """A session's events were stored (None: some notifications may have been missed)."""
        self.notifications += 1
        for topic in list(self._waiters) if topic_id is None else [topic_id]:
            self._wake(topic)

    def _wake(self, topic_id: str) -> None:
        waiter = self._waiters.pop(topic_id, None)
        if waiter is not None:
            waiter.set()

    # -- the log ------------------------------------------------------------------------------

    def _log(self, channel: _Channel, turn: str, event: Any) -> None:
        super()._log(channel, turn, event)
        if turn not in self._lost:
            row = (channel.topic_id, self._last_id, turn, encode_event(event))
            self.writer.add(row, isinstance(event, (Done, Error)))

    async def _discard_session(self, topic_id: str) -> None:
        """The followers of an unkept session read its last events before it goes."""
        await self.writer.flush()
        deadline = time.monotonic() + DISCARD_WAIT
        while self._following.get(topic_id) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        await super()._discard_session(topic_id)

    # -- running the queue --------------------------------------------------------------------

    def _retire(self, channel: _Channel, turn: str) -> None:
        super()._retire(channel, turn)
        self._started.pop(turn, None)
        self._lost.discard(turn)

    def _advance(self, channel: _Channel) -> None:
        self._schedule_next(channel.topic_id)

    def _schedule_next(self, topic_id: str) -> None:
        if self._closing:
            return
        if topic_id in self._starting:
            self._again.add(topic_id)
            return
        channel = self._channels.get(topic_id)
        if channel is not None and channel.current is not None:
            return  # the running turn's end takes the next one
        self._starting.add(topic_id)
        self._spawn(self._next(topic_id))

    async def _next(self, topic_id: str) -> None:
        """Take the session's next queued message and run it, if the lease is ours to take."""
        try:
            # the last turn's events are stored before the lease moves on
            await self.writer.flush()
            while not self._closing:
                self._again.discard(topic_id)
                await asyncio.to_thread(self._repo.trim, topic_id, self._keep_turns)
                claim = await asyncio.to_thread(self._repo.claim, topic_id, self.owner, self.lease)
                if not claim.taken:
                    return
                self._last_id = max(self._last_id, claim.last_id)
                if claim.dead_turn:
                    log.warning("session %s: took over an expired lease", topic_id)
                    self._log(self._channel(topic_id), claim.dead_turn, _interrupted())
                    await self.writer.flush()
                raw = await asyncio.to_thread(
                    self._repo.next_item, topic_id, self.owner, self.lease
                )
                if raw is not None:
                    self._start(topic_id, decode_item(raw))
                    return
                if topic_id not in self._again:
                    self._wake(topic_id)  # idle now: the followers of the session end
                    await asyncio.to_thread(self._repo.notify, {topic_id})
                    return
        except StoreError as exc:
            log.warning("session %s: could not take its next turn: %s", topic_id, exc)
        finally:
            self._starting.discard(topic_id)

    def _start(self, topic_id: str, item: QueueItem) -> None:
        channel = self._channel(topic_id)
        self._started[item.id] = time.monotonic()
        channel.current = item
        self._log(channel, item.id, TurnStarted(item.id, item.text[:200], item.attachments))
        channel.task = asyncio.get_running_loop().create_task(
            self._run(channel, item), name=f"turn-{topic_id[:8]}-{item.id}"
        )

    async def _keep(self) -> None:
        """Renew our leases and take the sessions whose holders are gone."""
        while True:
            await asyncio.sleep(self.lease / 3)
            try:
                began = time.monotonic()
                mine = set(await asyncio.to_thread(self._repo.renew, self.owner, self.lease))
                self._drop_lost(mine, began)
                for topic in await asyncio.to_thread(self._repo.orphans):
                    self._schedule_next(topic)
                await self._remote.sweep()
            except StoreError as exc:
                log.warning("could not renew the turn leases: %s", exc)

    def _drop_lost(self, mine: set[str], began: float) -> None:
        """Stop the turns whose lease another instance took (this one stalled past it): they
        are the other's now, so nothing more of them is stored."""
        for topic, channel in self._channels.items():
            item, task = channel.current, channel.task
            if item is None or task is None or topic in mine:
                continue
            if self._started.get(item.id, began) < began:
                log.warning(
                    "session %s: its lease was taken over; stopping turn %s", topic, item.id
                )
                self._lost.add(item.id)
                task.cancel()

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def _on_loop(
    loop: asyncio.AbstractEventLoop, handler: Callable[[str | None], None]
) -> Callable[[str | None], None]:
    """``handler``, called on ``loop`` from the store's listening thread."""

    def heard(payload: str | None) -> None:
        try:
            loop.call_soon_threadsafe(handler, payload)
        except RuntimeError:  # the loop closed: nobody is waiting any more
            pass

    return heard


def _interrupted() -> Error:
    return Error(INTERRUPTED, kind="interrupted")
