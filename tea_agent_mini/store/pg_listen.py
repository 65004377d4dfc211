"""Notifications from PostgreSQL (``LISTEN``) for the whole process: one thread on one
connection of its own, started by the first subscription, hands each payload to the callbacks
subscribed to its channel. After a lost connection it reconnects and calls every callback with
``None``: what was notified meanwhile is lost, so the subscribers look again.

The store's triggers notify :data:`CHANGES` with the name of the table a statement changed
(migration 16); server/shared_turns.py wakes its streams on ``turn_log.CHANNEL``.
"""

from __future__ import annotations

import logging
import select
import threading
from collections.abc import Callable
from typing import Any

__all__ = ["CHANGES", "Listener"]

log = logging.getLogger(__name__)

CHANGES = "tea_changes"
RETRY_SECONDS = 1.0

Callback = Callable[[str | None], None]


class Listener:
    """``subscribe(channel, callback)`` → a function that unsubscribes. Callbacks run on the
    listener's thread: keep them short (hand the work to a loop or set an event)."""

    def __init__(self, open_connection: Callable[[], Any], location: str) -> None:
        self._open = open_connection
        self._location = location
        self._lock = threading.Lock()
        self._callbacks: dict[str, list[Callback]] = {}
        self._listening: set[str] = set()  # channels LISTENed on the current connection
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.connected = threading.Event()

    def subscribe(self, channel: str, callback: Callback) -> Callable[[], None]:
        with self._lock:
            self._callbacks.setdefault(channel, []).append(callback)
            if self._thread is None and not self._stop.is_set():
                self._thread = threading.Thread(target=self._run, name="pg-listen", daemon=True)
                self._thread.start()

        def unsubscribe() -> None:
            with self._lock:
                callbacks = self._callbacks.get(channel, [])
                if callback in callbacks:
                    callbacks.remove(callback)

        return unsubscribe

    def close(self) -> None:
        self._stop.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            conn = None
            try:
                conn = self._open()
                self._listening = set()
                self._listen_new(conn)
                self.connected.set()
                self._serve(conn)
            except Exception as exc:  # StoreError or the driver's: reconnect shortly
                if not self._stop.is_set():
                    log.warning("lost the notifications of %s: %s", self._location, exc)
            finally:
                self.connected.clear()
                if conn is not None:
                    try:
                        conn.close()
                    except Exception:
                        pass
            self._stop.wait(RETRY_SECONDS)

    def _serve(self, conn: Any) -> None:
        sock = getattr(conn, "_usock", None)  # pg8000's socket: wait on it instead of polling
        while not self._stop.is_set():
            self._listen_new(conn)
            if sock is not None:
                ready, _, _ = select.select([sock], [], [], 1.0)
            else:
                ready = []
                self._stop.wait(0.5)
            if ready or sock is None:
                conn.run("SELECT 1")  # reads the notifications that came
            while conn.notifications:
                _pid, channel, payload = conn.notifications.popleft()
                self._deliver(channel, payload)

    def _listen_new(self, conn: Any) -> None:
        with self._lock:
            new = [name for name in self._callbacks if name not in self._listening]
        for name in new:
            conn.run(f'LISTEN "{name}"')
            self._listening.add(name)
            self._deliver(name, None)  # what was notified before is unknown: look again

    def _deliver(self, channel: str, payload: str | None) -> None:
        with self._lock:
            callbacks = list(self._callbacks.get(channel, ()))
        for callback in callbacks:
            try:
                callback(payload)
            except Exception:
                log.exception("a notification callback on %s failed", channel)
