"""The terminal asking the user for a tool: ``tea-agent-mini run`` under a real pseudo-terminal,
a toolkit_question answered by number or left to time out, and a notice printed."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.fakes.background import turn_requests
from tests.fakes.scripted_server import Reply, ToolCallSpec

ROOT = Path(__file__).resolve().parent.parent
ASK = {"question": "Which colour?", "choices": ["red", "green"], "default": "red", "timeout": 2}

pytestmark = pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")


class Terminal:
    """``tea-agent-mini run PROMPT`` with stdin and stderr on a pty, stdout on a pipe."""

    def __init__(self, prompt: str) -> None:
        self.master, slave = os.openpty()
        env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8"}
        env.pop("DISPLAY", None)
        env.pop("DBUS_SESSION_BUS_ADDRESS", None)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tea_agent_mini", "run", prompt],
            stdin=slave,
            stderr=slave,
            stdout=subprocess.PIPE,
            env=env,
        )
        os.close(slave)
        self.seen = b""

    def wait_for(self, text: str, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while text.encode() not in self.seen:
            assert time.monotonic() < deadline, self.seen.decode(errors="replace")
            ready, _, _ = select.select([self.master], [], [], 0.1)
            if ready:
                try:
                    self.seen += os.read(self.master, 4096)
                except OSError:
                    break

    def send(self, text: str) -> None:
        os.write(self.master, text.encode())

    def finish(self) -> tuple[int, str]:
        out, _ = self.proc.communicate(timeout=30)
        os.close(self.master)
        return self.proc.returncode, out.decode()


def tool_result(server) -> str:
    return turn_requests(server)[1]["messages"][-1]["content"]


def test_a_question_is_answered_by_number(model_config, scripted_server):
    scripted_server.push(
        Reply(tool_calls=[ToolCallSpec("toolkit_question", {**ASK, "timeout": 60})]),
        Reply(text="Green it is."),
    )
    term = Terminal("paint it")
    term.wait_for("? Which colour?")
    term.wait_for("2) green")
    term.send("2\n")
    code, out = term.finish()
    assert code == 0 and out.strip() == "Green it is."
    assert tool_result(scripted_server) == "The user answered: green"


def test_an_unanswered_question_times_out_to_the_default(model_config, scripted_server):
    scripted_server.push(
        Reply(tool_calls=[ToolCallSpec("toolkit_question", ASK)]), Reply(text="Red, then.")
    )
    started = time.monotonic()
    term = Terminal("paint it")
    term.wait_for("? Which colour?")
    term.wait_for("2 s, then 'red'")
    term.wait_for("(no answer in time)")
    code, out = term.finish()
    assert code == 0 and out.strip() == "Red, then."
    assert time.monotonic() - started < 30
    assert tool_result(scripted_server) == (
        "Nobody answered within 2 seconds; going with the default answer: red"
    )


def test_a_notice_is_printed(model_config, scripted_server):
    notify = {"title": "Backup done", "message": "3 files saved"}
    scripted_server.push(
        Reply(tool_calls=[ToolCallSpec("toolkit_notify", notify)]), Reply(text="Done.")
    )
    term = Terminal("back it up")
    term.wait_for("* Backup done: 3 files saved")
    code, out = term.finish()
    assert code == 0 and out.strip() == "Done."


def test_without_a_terminal_nobody_is_asked(model_config, scripted_server, workspace):
    config = yaml.safe_load(model_config.read_text(encoding="utf-8"))
    config["agent"]["approval"] = "ask"
    model_config.write_text(yaml.safe_dump(config), encoding="utf-8")
    write = {"action": "write", "filename": "notes.txt", "content": "hello"}
    scripted_server.push(
        Reply(tool_calls=[ToolCallSpec("toolkit_file", write)]),
        Reply(tool_calls=[ToolCallSpec("toolkit_question", ASK)]),
        Reply(text="Could not."),
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8"}
    done = subprocess.run(
        [sys.executable, "-m", "tea_agent_mini", "run", "write notes"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0 and done.stdout.decode().strip() == "Could not."
    refused, asked = (r["messages"][-1]["content"] for r in turn_requests(scripted_server)[1:3])
    assert "needs the user's approval (approval: ask), but nobody can be asked" in refused
    assert "declined" not in refused and not (workspace / "notes.txt").exists()
    assert asked.startswith("No one can be asked here")
