"""A one-line status on a terminal while the model or a tool works: ``⠹ thinking 3.2s``.

It is drawn on stderr, at the start of an empty line only, and erased before anything else is
written. Turn events arrive on the event loop while approvals and questions are asked from
worker threads, so drawing is under a lock and a prompt holds the line (:meth:`held`).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import TextIO

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
TICK_SECONDS = 0.1
ERASE = "\r\x1b[K"


class StatusLine:
    def __init__(self, stream: TextIO, clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream
        self.clock = clock
        self._label: str | None = None
        self._since = 0.0
        self._frame = 0
        self._drawn = False
        self._holds = 0
        self._lock = threading.Lock()

    def show(self, label: str) -> None:
        """Show ``label`` with the time since now, until :meth:`clear`."""
        with self._lock:
            self._label, self._since = label, self.clock()
            self._draw()

    def clear(self) -> None:
        with self._lock:
            self._label = None
            self._erase()

    def erase(self) -> None:
        """Take the line off the screen before other output; the next tick draws it again."""
        with self._lock:
            self._erase()

    def tick(self) -> None:
        with self._lock:
            self._frame = (self._frame + 1) % len(FRAMES)
            self._draw()

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """No status while the user is asked something."""
        with self._lock:
            self._holds += 1
            self._erase()
        try:
            yield
        finally:
            with self._lock:
                self._holds -= 1

    async def run(self) -> None:
        """Redraw every tick until cancelled (the spinner and the seconds move)."""
        while True:
            await asyncio.sleep(TICK_SECONDS)
            self.tick()

    def _draw(self) -> None:
        if self._label is None or self._holds:
            return
        seconds = self.clock() - self._since
        self.stream.write(f"{ERASE}{FRAMES[self._frame]} {self._label} {seconds:.1f}s")
        self.stream.flush()
        self._drawn = True

    def _erase(self) -> None:
        if self._drawn:
            self.stream.write(ERASE)
            self.stream.flush()
            self._drawn = False
