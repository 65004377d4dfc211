"""How an instance's turn events reach ``turn_events`` (issue 17): in batches, not one by one.

An event waits up to ``FLUSH_DELAY`` for the ones after it, from any of the instance's
sessions, and they go in one multi-row write, so an instance's write rate is bounded rather than
proportional to its running turns. The write that stores a turn's last event also clears its
lease's turn (``TurnLogRepository.append``): whoever reads ``done`` reads the session as idle.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import StoreError

if TYPE_CHECKING:
    from ..store import TurnLogRepository

log = logging.getLogger(__name__)

FLUSH_DELAY = 0.1  # seconds a logged event waits to be stored with the ones after it (any session)

Row = tuple[str, int, str, str]  # session, event id, turn, event JSON


class EventWriter:
    """Collects the events an instance logs and stores them together."""

    def __init__(
        self,
        repo: Callable[[], TurnLogRepository],
        stored: Callable[[str], None],
        spawn: Callable[[Any], None],
    ) -> None:
        self._repo = repo
        self._stored = stored  # a session's events are in the database: wake its streams here
        self._spawn = spawn  # runs a coroutine the manager waits for at shutdown
        self._pending: list[Row] = []
        self._ending: list[str] = []  # turns whose last event is among the pending rows
        self._handle: asyncio.TimerHandle | None = None
        self._lock = asyncio.Lock()
        self.events = 0
        self.rows_written = 0
        self.writes = 0

    def add(self, row: Row, last: bool) -> None:
        """Store ``row`` soon; ``last``: it is its turn's final event."""
        self.events += 1
        self._pending.append(row)
        if last:
            self._ending.append(row[2])
        if self._handle is None:
            self._handle = asyncio.get_running_loop().call_later(FLUSH_DELAY, self._due)

    def _due(self) -> None:
        self._handle = None
        self._spawn(self.flush())

    async def flush(self) -> None:
        """Store what waits now."""
        async with self._lock:
            rows, self._pending = self._pending, []
            ending, self._ending = self._ending, []
            if not rows:
                return
            try:
                await asyncio.to_thread(self._repo().append, rows, ending)
                self.writes += 1
            except StoreError as exc:
                # one session at a time: a deleted session's events are dropped, not the rest
                log.warning("could not store %d turn events at once: %s", len(rows), exc)
                rows = await self._append_each(rows, set(ending))
            self.rows_written += len(rows)
            for topic in {row[0] for row in rows}:
                self._stored(topic)

    async def _append_each(self, rows: list[Row], ending: set[str]) -> list[Row]:
        stored = []
        for topic in dict.fromkeys(row[0] for row in rows):
            mine = [row for row in rows if row[0] == topic]
            ended = sorted({row[2] for row in mine} & ending)
            try:
                await asyncio.to_thread(self._repo().append, mine, ended)
                self.writes += 1
                stored += mine
            except StoreError as exc:
                log.warning("dropped %d events of session %s: %s", len(mine), topic, exc)
        return stored
