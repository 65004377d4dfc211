"""How the terminal reaches the user for a tool: approval before a mutating tool, questions
(``toolkit_question``, waiting no longer than the tool's timeout) and notices."""

from __future__ import annotations

import contextlib
import os
import select
import sys
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from ..types import ApprovalCallback, AskUserCallback, NoticeCallback

if TYPE_CHECKING:
    from .status import StatusLine


def read_line(timeout: float | None = None) -> str | None:
    """A line typed on stdin; None at end of input or when nothing came within ``timeout``
    seconds (where select() works on stdin, i.e. POSIX; elsewhere it waits for the line)."""
    if timeout is not None and os.name == "posix":
        ready, _, _ = select.select([sys.stdin], [], [], timeout)
        if not ready:
            return None
    line = sys.stdin.readline()
    return line.rstrip("\r\n") if line else None


def _quiet(status: StatusLine | None) -> AbstractContextManager[None]:
    """The status line kept off the screen while the user reads and types."""
    return status.held() if status is not None else contextlib.nullcontext()


def terminal_approval(status: StatusLine | None = None) -> ApprovalCallback | None:
    """Ask on the terminal before a mutating tool runs. None without a terminal: then the
    executor refuses the call, saying that nobody can be asked."""
    if not sys.stdin.isatty():
        return None

    def approve(name: str, arguments: str) -> bool:
        with _quiet(status):
            sys.stderr.write(f"Allow {name}({arguments})? [y/N] ")  # all of it: what will run
            sys.stderr.flush()
            return (read_line() or "").strip().lower() in {"y", "yes"}

    return approve


def terminal_question(status: StatusLine | None = None) -> AskUserCallback | None:
    """Ask on the terminal; the answer is None (the tool then uses its default) when nothing is
    typed within the tool's timeout. None without a terminal: the tool says nobody can be asked."""
    if not sys.stdin.isatty():
        return None

    def ask(
        question: str, choices: list[str] | None, timeout: float, default: str | None
    ) -> str | None:
        lines = [f"\n? {question}"]
        lines += [f"  {number}) {choice}" for number, choice in enumerate(choices or [], 1)]
        hint = "a number or your own answer" if choices else "your answer"
        then = f"then {default!r}" if default else "then no answer"
        lines.append(f"  ({hint}; {timeout:g} s, {then})\n> ")
        with _quiet(status):
            sys.stderr.write("\n".join(lines))
            sys.stderr.flush()
            answer = read_line(timeout)
            if answer is None:
                sys.stderr.write("\n(no answer in time)\n")
        return answer

    return ask


def terminal_notice(status: StatusLine | None = None) -> NoticeCallback:
    """Show a tool's notice (toolkit_notify without a desktop) on stderr."""

    def notice(title: str, message: str, urgency: str) -> None:
        mark = "!" if urgency == "critical" else "*"
        with _quiet(status):
            sys.stderr.write(f"\n{mark} {title}: {message}\n")
            sys.stderr.flush()

    return notice
