"""How the terminal reaches the user for a tool: approval before a mutating tool, questions
(``toolkit_question``, waiting no longer than the tool's timeout) and notices."""

from __future__ import annotations

import os
import select
import sys

from ..types import ApprovalCallback, AskUserCallback, NoticeCallback


def read_line(timeout: float | None = None) -> str | None:
    """A line typed on stdin; None at end of input or when nothing came within ``timeout``
    seconds (where select() works on stdin, i.e. POSIX; elsewhere it waits for the line)."""
    if timeout is not None and os.name == "posix":
        ready, _, _ = select.select([sys.stdin], [], [], timeout)
        if not ready:
            return None
    line = sys.stdin.readline()
    return line.rstrip("\r\n") if line else None


def terminal_approval() -> ApprovalCallback | None:
    """Ask on the terminal before a mutating tool runs. None without a terminal: then the
    executor refuses the call, saying that nobody can be asked."""
    if not sys.stdin.isatty():
        return None

    def approve(name: str, arguments: str) -> bool:
        sys.stderr.write(f"Allow {name}({arguments})? [y/N] ")  # all of it: what will run
        sys.stderr.flush()
        return (read_line() or "").strip().lower() in {"y", "yes"}

    return approve


def terminal_question() -> AskUserCallback | None:
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
        sys.stderr.write("\n".join(lines))
        sys.stderr.flush()
        answer = read_line(timeout)
        if answer is None:
            sys.stderr.write("\n(no answer in time)\n")
        return answer

    return ask


def terminal_notice() -> NoticeCallback:
    """Show a tool's notice (toolkit_notify without a desktop) on stderr."""

    def notice(title: str, message: str, urgency: str) -> None:
        mark = "!" if urgency == "critical" else "*"
        sys.stderr.write(f"\n{mark} {title}: {message}\n")
        sys.stderr.flush()

    return notice
