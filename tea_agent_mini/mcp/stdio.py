"""The stdio transport: the server is a subprocess speaking newline-delimited JSON-RPC.

Messages go to the server's stdin and come back on its stdout, one JSON document per line. The
server's stderr is free-form logging: it is drained continuously (a full pipe would block the
server), appended to a log file and kept as a short tail for error messages.

The child runs in its own session (POSIX) so that closing stops the whole process tree it started
(``npx`` servers spawn node), and a Ctrl-C in the terminal does not reach it. On Linux the kernel
kills it when the agent dies (``shell/orphans.py``); what it started sees its stdin close.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import os
import shutil
import signal
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from tea_agent_mini.mcp.errors import McpError, McpTransportError
from tea_agent_mini.mcp.jsonrpc import Message, dumps, loads
from tea_agent_mini.private import private_dirs
from tea_agent_mini.shell.orphans import die_with_parent

logger = logging.getLogger(__name__)

# Like the official SDKs, a server gets only these variables from our environment (plus its own
# ``env``): API keys in the agent's environment are not handed to every third-party server.
INHERITED_ENV = (
    ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "LC_CTYPE", "TMPDIR")
    + ("TZ", "APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATHEXT", "PROGRAMDATA")
    + ("PROGRAMFILES", "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "TMP", "USERNAME", "USERPROFILE")
    + ("COMSPEC", "WINDIR")
)
LINE_LIMIT = 32 * 1024 * 1024  # one message per line; images arrive base64-encoded
STDERR_TAIL = 20
CLOSE_GRACE = 2.0
EXIT_WAIT = 2.0  # after a failed write: how long an exit may take to show before we give up

OnMessage = Callable[[Message], None]
OnClose = Callable[[McpError], None]


class StdioTransport:
    """Runs ``command args...`` and exchanges messages with it over its stdin and stdout."""

    def __init__(
        self,
        command: str,
        args: Sequence[str] = (),
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stderr_path: Path | None = None,
        close_grace: float = CLOSE_GRACE,
    ) -> None:
        self.command = command
        self.args = list(args)
        self.env = dict(env or {})
        self.cwd = cwd
        self.stderr_path = stderr_path
        self.close_grace = close_grace
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL)
        self._process: asyncio.subprocess.Process | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._stderr: asyncio.Task[None] | None = None
        self._write_lock = asyncio.Lock()
        self._closing = False

    @property
    def description(self) -> str:
        return " ".join([self.command, *self.args])

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    async def start(self, on_message: OnMessage, on_close: OnClose) -> None:
        """Start the process. Raises McpTransportError when it cannot be started."""
        environment = child_environment(self.env)
        executable = shutil.which(self.command, path=environment.get("PATH")) or self.command
        try:
            self._process = await asyncio.create_subprocess_exec(
                executable,
                *self.args,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=environment,
                cwd=self.cwd or None,
                limit=LINE_LIMIT,
                start_new_session=sys.platform != "win32",
                preexec_fn=die_with_parent(),  # a killed agent leaves no server behind
            )
        except OSError as exc:
            raise McpTransportError(f"cannot start {self.description!r}: {exc}") from exc
        self._stderr = asyncio.create_task(self._drain_stderr())
        stdout = asyncio.create_task(self._read_stdout(on_message, on_close))
        self._tasks = [self._stderr, stdout]

    async def ready(self, protocol_version: str) -> None:
        """Nothing to do: stdio has no per-request headers."""

    async def send(self, message: Message) -> None:
        process = self._process
        if process is None or process.returncode is not None or process.stdin is None:
            if process is not None and process.returncode is not None and not self._closing:
                raise await self._exit_error(process.returncode)
            raise McpTransportError(f"{self.description!r} is not running{self._tail_note()}")
        data = (dumps(message) + "\n").encode("utf-8")
        async with self._write_lock:
            try:
                process.stdin.write(data)
                await process.stdin.drain()
            except (BrokenPipeError, ConnectionResetError) as exc:
                raise await self._write_error(process) from exc

    async def _write_error(self, process: asyncio.subprocess.Process) -> McpTransportError:
        """A write failed: usually the server has exited, which says more than the pipe does."""
        try:
            code = await asyncio.wait_for(process.wait(), EXIT_WAIT)
        except asyncio.TimeoutError:
            return McpTransportError(
                f"{self.description!r} stopped reading its input{self._tail_note()}"
            )
        return await self._exit_error(code)

    async def _exit_error(self, code: int) -> McpTransportError:
        if self._stderr is not None:  # the server's last words are often the reason
            await asyncio.wait([self._stderr], timeout=1.0)
        return McpTransportError(f"the server exited with code {code}{self._tail_note()}")

    async def close(self) -> None:
        """Close stdin, give the server a moment to exit, then terminate, then kill."""
        self._closing = True
        process = self._process
        if process is not None and process.returncode is None:
            await self._stop(process)
        if process is not None:
            self._stop_group(process.pid, signal.SIGKILL if hasattr(signal, "SIGKILL") else None)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []

    async def _stop(self, process: asyncio.subprocess.Process) -> None:
        if process.stdin is not None:
            process.stdin.close()
        for sig in (None, signal.SIGTERM, getattr(signal, "SIGKILL", None)):
            if sig is not None:
                self._signal(process, sig)
            try:
                await asyncio.wait_for(process.wait(), self.close_grace)
                return
            except asyncio.TimeoutError:
                continue

    def _signal(self, process: asyncio.subprocess.Process, sig: signal.Signals) -> None:
        if not self._stop_group(process.pid, sig):
            try:
                process.send_signal(sig)
            except ProcessLookupError:
                pass

    def _stop_group(self, pgid: int, sig: signal.Signals | None) -> bool:
        """Signal the server's process group (POSIX); False when there is none to signal."""
        if sig is None or sys.platform == "win32":
            return False
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    async def _read_stdout(self, on_message: OnMessage, on_close: OnClose) -> None:
        process = self._process
        assert process is not None and process.stdout is not None
        while True:
            try:
                line = await process.stdout.readline()
            except ValueError:  # a line over LINE_LIMIT; readline has discarded it
                logger.warning("%s: dropped an over-long line of output", self.description)
                continue
            if not line:
                break
            self._deliver(line, on_message)
        code = await process.wait()
        error = await self._exit_error(code)
        if not self._closing:
            logger.warning("MCP server %r exited with code %s", self.description, code)
            on_close(error)

    def _deliver(self, line: bytes, on_message: OnMessage) -> None:
        text = line.decode("utf-8", errors="replace").strip()
        if not text:
            return
        try:
            messages = loads(text)
        except McpError as exc:
            # servers that print banners to stdout exist; skipping the line keeps them usable
            logger.warning("%s: ignored non-JSON-RPC output (%s)", self.description, exc)
            return
        for message in messages:
            on_message(message)

    async def _drain_stderr(self) -> None:
        process = self._process
        assert process is not None and process.stderr is not None
        log = _open_log(self.stderr_path)
        try:
            while True:
                try:
                    line = await process.stderr.readline()
                except ValueError:
                    continue
                if not line:
                    return
                text = line.decode("utf-8", errors="replace").rstrip()
                self.stderr_tail.append(text)
                logger.debug("[%s] %s", self.command, text)
                if log is not None:
                    log.write(text + "\n")
                    log.flush()
        finally:
            if log is not None:
                log.close()

    def _tail_note(self) -> str:
        lines = [line.strip() for line in self.stderr_tail if line.strip()][-3:]
        return "; its last output: " + " | ".join(lines) if lines else ""


def child_environment(extra: Mapping[str, str]) -> dict[str, str]:
    """The whitelisted part of our environment, overlaid with the server's own variables."""
    environment = {key: os.environ[key] for key in INHERITED_ENV if key in os.environ}
    environment.update({str(key): str(value) for key, value in extra.items()})
    return environment


def _open_log(path: Path | None):
    if path is None:
        return None
    try:
        private_dirs(path.parent)
        return path.open("a", encoding="utf-8")
    except OSError as exc:
        logger.warning("cannot write the MCP server log %s: %s", path, exc)
        return None
