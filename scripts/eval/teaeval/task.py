"""What a task is, and the checks judges share.

A ``Task`` makes a ``Case`` from a seeded random generator: the prompts (one per session, all in
the same home, each in a new topic), the files to lay out, and the facts the judge needs (the
number hidden in a file, the word to write). Judges look only at effects: files on disk,
programs run, the store through the CLI, and facts in the answer text.
"""

from __future__ import annotations

import random
import re
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .sandbox import AgentRun


@dataclass(frozen=True)
class Verdict:
    passed: bool
    reason: str


@dataclass(frozen=True)
class Case:
    prompts: tuple[str, ...]
    facts: Mapping[str, Any] = field(default_factory=dict)
    files: Mapping[str, str] = field(default_factory=dict)  # workspace-relative path -> text
    home_files: Mapping[str, str] = field(default_factory=dict)
    config: Mapping[str, Any] = field(default_factory=dict)  # extra config.yaml sections


@dataclass
class JudgeInput:
    """What a judge may look at. ``cli(args)`` runs the agent's CLI in the same sandbox."""

    workspace: Path
    home: Path
    case: Case
    runs: Sequence[AgentRun]
    cli: Callable[[Sequence[str]], AgentRun]

    @property
    def facts(self) -> Mapping[str, Any]:
        return self.case.facts

    @property
    def answer(self) -> str:
        return self.runs[-1].answer if self.runs else ""


@dataclass(frozen=True)
class Task:
    name: str
    about: str
    make: Callable[[random.Random], Case]
    judge: Callable[[JudgeInput], Verdict]

    def case(self, seed: int | str) -> Case:
        """The same seed gives the same case, so runs of one seed compare."""
        return self.make(random.Random(f"{seed}:{self.name}"))


def passed(reason: str) -> Verdict:
    return Verdict(True, reason)


def failed(reason: str) -> Verdict:
    return Verdict(False, reason)


def quote(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def read_file(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def run_python(
    workspace: Path, args: Sequence[str], timeout: float = 30.0
) -> subprocess.CompletedProcess[str]:
    """Run the judge's Python in the workspace (a hung program counts as exit code -9)."""
    try:
        return subprocess.run(
            [sys.executable, *args],
            cwd=workspace,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:
        return subprocess.CompletedProcess(exc.cmd, -9, "", f"timed out after {timeout:g}s")


def has_number(text: str, number: int) -> bool:
    """``number`` as a whole number in ``text`` (``1,234`` counts as 1234)."""
    plain = re.sub(r"(?<=\d)[,_](?=\d{3}\b)", "", text)
    return re.search(rf"(?<![\d.]){number}(?![\d]|\.\d)", plain) is not None


def has_word(text: str, word: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text, re.IGNORECASE) is not None


def names_one_file(answer: str, target: str, others: Sequence[str]) -> Verdict:
    """The answer names ``target`` (a file name) and none of ``others``."""
    if not has_word(answer, target):
        return failed(f"the answer does not name {target}: {quote(answer)}")
    named = [name for name in others if has_word(answer, name)]
    if named:
        return failed(f"the answer also names {', '.join(named)}: {quote(answer)}")
    return passed(f"the answer names {target}")
