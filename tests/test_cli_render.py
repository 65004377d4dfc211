"""The terminal printer: Markdown and a status line on a terminal, plain text elsewhere."""

from __future__ import annotations

import asyncio
import io
import os
import random
import select
import subprocess
import sys

import pytest

from tea_agent_mini.cli.markdown import BOLD, CODE, DIM, HEADING, RESET, MarkdownStream
from tea_agent_mini.cli.render import TerminalPrinter
from tea_agent_mini.cli.status import ERASE, FRAMES, StatusLine
from tea_agent_mini.types import Done, TextDelta, ToolCallStart, ToolResult
from tests.fakes.scripted_server import Reply, ToolCallSpec
from tests.test_cli import cli, cli_env

ANSWER = """# Plan
Run `make` and check **all** tests.
- first **step**
* second
> a quote
---
```sh
make **test**
```
done"""

RENDERED = (
    f"{HEADING}Plan{RESET}\n"
    f"Run {CODE}make{RESET} and check {BOLD}all{RESET} tests.\n"
    f"• first {BOLD}step{RESET}\n"
    "• second\n"
    f"{DIM}│ {RESET}a quote\n"
    f"{DIM}{'─' * 40}{RESET}\n"
    f"{DIM}```sh{RESET}\n"
    f"{CODE}make **test**{RESET}\n"
    f"{DIM}```{RESET}\n"
    "done"
)


def render(pieces: list[str]) -> str:
    markdown = MarkdownStream()
    return "".join(markdown.feed(piece) for piece in pieces) + markdown.close()


def test_markdown_renders_headings_inline_styles_lists_quotes_rules_and_code():
    assert render([ANSWER]) == RENDERED


@pytest.mark.parametrize("seed", range(20))
def test_markdown_is_the_same_however_the_stream_is_cut(seed):
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, len(ANSWER)), rng.randint(1, 40)))
    pieces = [ANSWER[a:b] for a, b in zip([0, *cuts], [*cuts, len(ANSWER)], strict=True)]
    assert render(pieces) == RENDERED
    assert render(list(ANSWER)) == RENDERED


def test_markdown_closes_styles_left_open_at_the_end_of_a_line():
    assert render(["a **b\nc"]) == f"a {BOLD}b{RESET}\nc"


def test_a_code_block_left_open_ends_with_the_answer():
    markdown = MarkdownStream()
    assert markdown.feed("```\nx = 1\n") == f"{DIM}```{RESET}\n{CODE}x = 1{RESET}\n"
    markdown.close()
    assert markdown.feed("**next** answer\n") == f"{BOLD}next{RESET} answer\n"


def test_markdown_passes_plain_text_on_at_once():
    markdown = MarkdownStream()
    assert markdown.feed("Hello, wor") == "Hello, wor"  # no waiting for the end of the line
    assert markdown.feed("ld **") == "ld "  # the marks wait for what follows


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_markdown_and_a_pipe_gets_the_text(monkeypatch):
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    for out, expected in ((Terminal(), f"{BOLD}hi{RESET}\n"), (io.StringIO(), "**hi**\n")):
        printer = TerminalPrinter.for_terminal(out, io.StringIO())
        for event in (TextDelta("**h"), TextDelta("i**"), Done(text="**hi**")):
            printer(event)
        assert out.getvalue() == expected


def test_no_color_turns_markdown_off(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    assert TerminalPrinter.for_terminal(Terminal(), Terminal()).markdown is None


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_status_line_shows_what_is_awaited_and_for_how_long():
    err, clock = io.StringIO(), Clock()
    status = StatusLine(err, clock)
    status.show("thinking")
    clock.now += 2.5
    status.tick()
    status.clear()
    assert err.getvalue() == f"{ERASE}⠋ thinking 0.0s{ERASE}⠙ thinking 2.5s{ERASE}"
    status.tick()  # nothing to show
    assert err.getvalue().endswith(f"2.5s{ERASE}")


def test_the_status_line_stays_away_while_the_user_is_asked():
    err = io.StringIO()
    status = StatusLine(err, Clock())
    status.show("running toolkit_exec")
    with status.held():
        mark = len(err.getvalue())
        status.tick()
        assert err.getvalue()[mark:] == ""
    status.tick()
    assert err.getvalue().endswith("running toolkit_exec 0.0s")


def test_the_printer_moves_the_status_with_the_turn():
    out, err = Terminal(), Terminal()
    printer = TerminalPrinter(out, err, status=StatusLine(err, Clock()))

    async def events():
        yield ToolCallStart(call_id="1", name="toolkit_exec", arguments="{}")
        yield ToolResult(call_id="1", name="toolkit_exec", ok=True, output="0", duration=0.1)
        yield TextDelta("All ")
        yield TextDelta("done.")
        yield Done(text="All done.")

    async def follow():
        return [event async for event in printer.follow(events())]

    asyncio.run(follow())
    shown = err.getvalue()
    labels = [part.split(" ")[1] for part in shown.split(ERASE) if part and part[0] in FRAMES]
    assert labels[0] == "thinking" and "running" in labels and labels[-1] == "thinking"
    assert out.getvalue() == "All done.\n"
    assert shown.endswith(ERASE)  # gone when the answer starts, and at the end


def run_on_a_terminal(*args: str) -> str:
    """What ``tea-agent-mini run`` writes to a terminal (stdout and stderr on one pty)."""
    pty = pytest.importorskip("pty")
    leader, follower = pty.openpty()
    env = {**cli_env(), "TERM": "xterm"}
    env.pop("NO_COLOR", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "tea_agent_mini", "run", *args],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
        env=env,
    )
    os.close(follower)
    chunks = []
    try:
        while True:
            ready, _, _ = select.select([leader], [], [], 60)
            if not ready:
                break
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the pty is closed once the process ends
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        process.wait(timeout=60)
        os.close(leader)
    return b"".join(chunks).decode("utf-8", "replace")


def test_run_on_a_terminal_renders_markdown_with_a_status_line(model_config, scripted_server):
    scripted_server.push(
        Reply(tool_calls=[ToolCallSpec("toolkit_gettime", {})], delay=0.3),
        Reply(text="# Time\nIt is **late**.", delay=0.05),
    )
    shown = run_on_a_terminal("what time is it?")
    assert f"{HEADING}Time{RESET}" in shown and f"It is {BOLD}late{RESET}." in shown
    assert "thinking" in shown and "→ toolkit_gettime" in shown
    piped = cli("run", "again")  # the default echo reply: no escapes, no status
    assert "\x1b[" not in piped.stdout + piped.stderr and "thinking" not in piped.stderr
