"""`BackgroundLoop`: one event loop in one thread, for code that is called from other threads.

MCP connections live on an event loop (subprocess pipes, HTTP streams, reader tasks) that must
outlive the callers' loops. Every connection stays on this one loop; callers hand it coroutines
and block on the result (``run``, from threads) or await it (``wait``, from another loop).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from tea_agent_mini.mcp.errors import McpError, McpTimeout

logger = logging.getLogger(__name__)
T = TypeVar("T")


class BackgroundLoop:
    """Starts its thread on first use; ``stop`` ends it. Not restartable after ``stop``."""

    def __init__(self, name: str = "mcp-loop") -> None:
        self.name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._stopped = False

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def run(self, coroutine: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run ``coroutine`` on the loop and wait for its result (its exception is re-raised)."""
        if self.in_loop_thread():
            coroutine.close()
            raise RuntimeError(f"{self.name}: run() called from the loop's own thread")
        future = self.submit(coroutine)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise McpTimeout(f"no result within {timeout:g}s") from None

    async def wait(self, coroutine: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """:meth:`run` for a caller on another event loop: awaits the result without blocking
        that loop. Cancelling the caller cancels the coroutine on this loop."""
        future = self.submit(coroutine)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), timeout)
        except asyncio.TimeoutError:
            raise McpTimeout(f"no result within {timeout:g}s") from None

    def submit(self, coroutine: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coroutine`` without waiting for it."""
        try:
            loop = self._ensure_started()
        except McpError:
            coroutine.close()
            raise
        return asyncio.run_coroutine_threadsafe(coroutine, loop)

    def in_loop_thread(self) -> bool:
        return self._thread is not None and threading.current_thread() is self._thread

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the loop and join its thread; tasks still running are cancelled."""
        with self._lock:
            self._stopped = True
            loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        if thread.is_alive():
            loop.call_soon_threadsafe(loop.stop)
            thread.join(timeout)
        if not thread.is_alive() and not loop.is_closed():
            loop.close()

    def _ensure_started(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._stopped:
                raise McpError("the MCP manager is closed")
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                self._thread = threading.Thread(target=self._main, name=self.name, daemon=True)
                self._thread.start()
            return self._loop

    def _main(self) -> None:
        loop = self._loop
        assert loop is not None
        asyncio.set_event_loop(loop)
        try:
            loop.run_forever()
        finally:
            _cancel_remaining(loop)


def _cancel_remaining(loop: asyncio.AbstractEventLoop) -> None:
    tasks = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in tasks:
        task.cancel()
    if tasks:
        loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
    loop.run_until_complete(loop.shutdown_asyncgens())
