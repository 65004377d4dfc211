"""The terminal chat: a REPL over Session.run_turn with /new, /topics, /switch, /history, /team,
/inbox, /exit.

One event loop lives for the whole chat (the HTTP client pool is bound to it); input is read
between turns. Ctrl-C during a turn cancels that turn only; at the prompt it clears the line.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from ..config import Config
from ..errors import ConfigError
from .prompts import terminal_approval, terminal_notice, terminal_question
from .render import TerminalPrinter
from .team import inboxes, print_inbox, print_team, unread_line
from .topics import find_topic, pick_topic, print_history, topic_line

if TYPE_CHECKING:
    from ..agent.session import Session

HELP = """commands:
  /new              start a new topic
  /topics           list recent topics
  /switch TOPIC     continue another topic (its id, an id prefix or its title)
  /history [N]      the last N messages of this topic (default 20)
  /team             the teammates: status, unread messages, role
  /inbox [SECONDS]  read the team's messages to you (waiting up to SECONDS for one)
  /good [COMMENT]   the last answer was good; /bad [COMMENT]: it was not (a lesson is kept)
  /help             this help
  /exit             quit (also Ctrl-D)"""
RESUME_MESSAGES = 6  # shown when a chat continues an earlier topic


class ChatRepl:
    def __init__(self, config: Config, *, show_reasoning: bool = False) -> None:
        from ..runtime import Runtime

        self.runtime = Runtime(config)
        self.printer = TerminalPrinter.for_terminal(show_reasoning=show_reasoning)
        self.aloop = asyncio.new_event_loop()
        self._session: Session | None = None

    @property
    def session(self) -> Session:
        if self._session is None:
            raise RuntimeError("no topic is open")
        return self._session

    def run(self, topic: str | None = None, *, resume: bool = False) -> int:
        from ..shell.orphans import reap_orphans

        reap_orphans(self.runtime.config.home)
        try:
            self._open(pick_topic(self.runtime.store, topic, resume))
            print("tea-agent-mini chat — /help for commands, Ctrl-D to quit", file=sys.stderr)
            self._loop()
        finally:
            self.aloop.run_until_complete(self.runtime.aclose())
            self.aloop.close()
        return 0

    def _loop(self) -> None:
        while True:
            line = self._read()
            if line is None:
                return
            line = line.strip()
            if line.startswith("/"):
                if not self._command(line):
                    return
            elif line:
                self._run_turn(line)

    def _open(self, topic_id: str | None) -> None:
        status = self.printer.status
        self._session = self.runtime.session(
            topic_id,
            approve=terminal_approval(status),
            ask_user=terminal_question(status),
            on_notice=terminal_notice(status),
        )
        print(f"topic {self.session.topic_id}", file=sys.stderr)
        if topic_id is not None:
            print_history(self.runtime.store, topic_id, RESUME_MESSAGES, sys.stderr)

    def _command(self, line: str) -> bool:
        """Handle a /command; returns False when the chat should end."""
        name, _, arg = line.partition(" ")
        arg = arg.strip()
        if name in ("/exit", "/quit"):
            return False
        if name == "/new":
            self._open(None)
        elif name == "/topics":
            for topic in self.runtime.store.topics.recent(limit=20):
                print(topic_line(topic))
        elif name == "/switch":
            try:
                self._open(find_topic(self.runtime.store, arg).id)
            except ConfigError as exc:
                print(f"error: {exc}", file=sys.stderr)
        elif name == "/history":
            limit = int(arg) if arg.isdigit() else 20
            print_history(self.runtime.store, self.session.topic_id, limit, sys.stdout)
        elif name == "/team":
            print_team(self.runtime.team, sys.stdout)
        elif name == "/inbox":
            self._inbox(int(arg) if arg.isdigit() else 0)
        elif name in ("/good", "/bad"):
            from .feedback import rate_last_turn

            rating = rate_last_turn(self.runtime, self.session.topic_id, name[1:], arg)
            print(self.aloop.run_until_complete(rating), file=sys.stderr)
        elif name == "/help":
            print(HELP)
        else:
            print(f"unknown command {name}\n{HELP}", file=sys.stderr)
        return True

    async def _turn(self, text: str) -> None:
        async for _event in self.printer.follow(self.session.run_turn(text)):
            pass

    def _inbox(self, seconds: int) -> None:
        # teammates work while the chat's loop runs: during turns, and while this waits
        addresses = inboxes(self.session.topic_id)
        if seconds > 0:
            self._run(self.runtime.team.wait_for(addresses, float(seconds)))
        print_inbox(self.runtime.store, addresses, sys.stdout)

    def _run_turn(self, text: str) -> None:
        self._run(self._turn(text))
        unread = unread_line(self.runtime.store, inboxes(self.session.topic_id))
        if unread:
            print(unread, file=sys.stderr)

    def _run(self, work: Coroutine[Any, Any, Any]) -> None:
        """Run ``work`` on the chat's loop; Ctrl-C cancels it."""
        task = self.aloop.create_task(work)
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
