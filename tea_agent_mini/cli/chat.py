"""The terminal chat: a REPL over Session.run_turn with /new, /topics, /switch, /exit.

One event loop lives for the whole chat (the HTTP client pool is bound to it); input is read
between turns. Ctrl-C during a turn cancels that turn only; at the prompt it clears the line.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from datetime import datetime

from ..config import Config
from ..errors import ConfigError
from .prompts import terminal_approval, terminal_notice, terminal_question
from .render import TerminalPrinter

HELP = """commands:
  /new          start a new topic
  /topics       list recent topics
  /switch ID    continue another topic
  /help         this help
  /exit         quit (also Ctrl-D)"""


class ChatRepl:
    def __init__(self, config: Config, *, show_reasoning: bool = False) -> None:
        from ..runtime import Runtime

        self.runtime = Runtime(config)
        self.printer = TerminalPrinter(show_reasoning=show_reasoning)
        self.aloop = asyncio.new_event_loop()
        self.session = None

    def run(self, topic_id: str | None = None) -> int:
        from ..shell.orphans import reap_orphans

        reap_orphans(self.runtime.config.home)
        self._open(topic_id)
        print("tea-agent-mini chat — /help for commands, Ctrl-D to quit", file=sys.stderr)
        try:
            while True:
                line = self._read()
                if line is None:
                    break
                line = line.strip()
                if line.startswith("/"):
                    if not self._command(line):
                        break
                elif line:
                    self._run_turn(line)
        finally:
            self.aloop.run_until_complete(self.runtime.aclose())
            self.aloop.close()
        return 0

    def _open(self, topic_id: str | None) -> None:
        self.session = self.runtime.session(
            topic_id,
            approve=terminal_approval(),
            ask_user=terminal_question(),
            on_notice=terminal_notice(),
        )
        print(f"topic {self.session.topic_id}", file=sys.stderr)

    def _command(self, line: str) -> bool:
        """Handle a /command; returns False when the chat should end."""
        name, _, arg = line.partition(" ")
        if name in ("/exit", "/quit"):
            return False
        if name == "/new":
            self._open(None)
        elif name == "/topics":
            for topic in self.runtime.store.topics.list(limit=20):
                when = datetime.fromtimestamp(topic.updated_at).strftime("%Y-%m-%d %H:%M")
                print(f"{topic.id}  {when}  {topic.title or '(untitled)'}")
        elif name == "/switch":
            try:
                self._open(arg.strip())
            except ConfigError as exc:
                print(f"error: {exc}", file=sys.stderr)
        else:
            print(HELP)
        return True

    async def _turn(self, text: str) -> None:
        async for event in self.session.run_turn(text):
            self.printer(event)

    def _run_turn(self, text: str) -> None:
        task = self.aloop.create_task(self._turn(text))
        try:
            self.aloop.add_signal_handler(signal.SIGINT, task.cancel)
        except (NotImplementedError, RuntimeError):  # Windows or not the main thread
            pass
        try:
            self.aloop.run_until_complete(task)
        except asyncio.CancelledError:
            print("\n[cancelled]", file=sys.stderr)
        finally:
            try:
                self.aloop.remove_signal_handler(signal.SIGINT)
            except (NotImplementedError, RuntimeError):
                pass

    def _read(self) -> str | None:
        try:
            return input("you> ")
        except EOFError:
            return None
        except KeyboardInterrupt:
            print()
            return ""
