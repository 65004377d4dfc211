"""Small-model slips the turn loop answers with one more request instead of ending the turn.

A small local model often describes the call it means to make ("I'll use toolkit_grep with:
```json {...}```") instead of making it, replies with nothing but template markup, or repeats a
call whose result already answers it. :class:`Corrections` decides when to say so; what it says
is sent with the next request only (``pending``) and never stored, so the history stays what
the model and the tools really did. Quoted calls never run on their own: after the model was
asked to make the call, a single read-only call it quotes is taken as that call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from pathlib import Path
from typing import Any

from ..types import Completion, ToolCall, ToolCatalog

__all__ = ["Corrections", "MAX_CORRECTIONS"]

MAX_CORRECTIONS = 2  # per turn
SHELL_TOOLS = frozenset({"toolkit_exec"})
DESCRIBED = (
    "You described tool calls instead of making them. Do the next step now: reply with only "
    "that one tool call and no other text."
)
EMPTY_REPLY = "Your reply was empty. Call the tool you need, or answer the user."
REPEATED = (
    "You called {name} twice with the same arguments and got the same result (above). Use "
    "it: answer the question, or take the next step with other arguments or another tool."
)
UNAPPLIED_CODE = (
    "Your reply shows code, but {state}. If the task needs a file changed, change it now: "
    "reply with only the tool call (toolkit_edit, or toolkit_file with action write). "
    "If it does not, give your final answer."
)
_FENCED_CODE = re.compile(r"```[\w+-]*\n(.*?)```", re.S)
SEEN_OUTPUT_CHARS = 32_000  # of this turn's tool results, to tell quoted code from new code
UNCHECKED_FILE = (
    "You named {name}, but the workspace has no such file, and you used no tool to look. Search "
    "or read first (toolkit_grep, toolkit_glob, toolkit_file), then answer from what you find."
)
# a relative file name with a common extension, as an answer names it: `docs/notes.md`, a.txt
_EXTENSIONS = (
    "py|txt|md|json|ya?ml|toml|csv|js|ts|html|css|sh|cfg|ini|log|xml|rst|c|h|cpp|go|rs|java|rb|sql"
)
_FILE_NAMES = re.compile(
    rf"(?<![\w/.:-])((?:[\w.-]+/)*[\w-]+\.(?:{_EXTENSIONS}))(?![\w/.-]*\w)", re.I
)
_MARKUP = re.compile(r"</?tools>|</?tool_call>|```\w*")
# How a model announces its own next steps ("I'll use toolkit_exec ...", "Let's ...", "1. First")
_OWN_STEPS = re.compile(
    r"\b(?:I'll|I will|I am going to|I'm going to|let's|let me|we need to|we will|we can|"
    r"first,|step \d|here's how I)",
    re.I,
)

# ... or hands the step to the user ("you can use the following command: ```json {...}```"):
# wrong when the user asked for the result, right when they asked how to do it
_YOUR_STEPS = re.compile(
    r"\b(?:you can|you could|you may|you need to|you should|use the following|"
    r"run the following|with the following)\b",
    re.I,
)
_ASKS_HOW = re.compile(
    r"\b(?:how (?:do|can|could|would|should|to)|explain|show me how|what(?:'s| is) the "
    r"(?:syntax|command|format)|examples?|teach me)\b",
    re.I,
)


def asks_how(request: str) -> bool:
    """Whether the user asked how to do something (an answer may quote calls), not for it to
    be done."""
    return bool(_ASKS_HOW.search(request))


class Corrections:
    """The corrections of one turn: at most :data:`MAX_CORRECTIONS` asks, and the messages to
    send with the next request."""

    def __init__(self, toolkit: ToolCatalog, request: str = "") -> None:
        self.toolkit = toolkit
        # a question about the workspace's facts, not how to do something
        self.question = request.rstrip().endswith("?") and not asks_how(request)
        self.steps = (
            _OWN_STEPS
            if asks_how(request)
            else re.compile(f"{_OWN_STEPS.pattern}|{_YOUR_STEPS.pattern}", re.I)
        )
        self.asked = 0
        self.pending: list[dict[str, Any]] = []
        self.asked_to_call = False  # the request just made carried a DESCRIBED correction
        self.calls = 0  # tool calls finished this turn
        self.changed = False  # a call that writes files succeeded
        self.last_failed = False
        self.seen = ""  # the end of this turn's tool results

    def record(self, call: ToolCall, ok: bool, output: str = "") -> None:
        """One finished tool call of this turn, and what it returned."""
        self.calls += 1
        self.seen = (self.seen + output)[-SEEN_OUTPUT_CHARS:]
        self.last_failed = not ok
        # a shell command counts as a check, not a change: running the tests changes nothing
        if ok and call.name not in SHELL_TOOLS and self._mutates(call):
            self.changed = True

    def take_pending(self) -> list[dict[str, Any]]:
        pending, self.pending = self.pending, []
        self.asked_to_call = any(m.get("content") == DESCRIBED for m in pending)
        return pending

    def described(self, content: str) -> bool:
        """Ask again when ``content`` announces its own steps (or, when the user asked for a
        result, hands them to the user) and quotes a call (or names a tool beside a JSON object
        of arguments) that it did not make."""
        from ..llm.textcalls import quoted_calls

        if not content or self.asked >= MAX_CORRECTIONS or not self.steps.search(content):
            return False  # documentation written for the user may quote calls too
        names = self.toolkit.names()
        if not quoted_calls(content, names) and not _names_a_tool_with_json(content, names):
            return False
        return self._ask(content, DESCRIBED)

    def empty(self, content: str, completion: Completion) -> bool:
        """Ask again when the reply says nothing but template markup."""
        from ..llm.assemble import clean_template_tokens

        if completion.finish_reason == "length" or self.asked >= MAX_CORRECTIONS:
            return False
        if _MARKUP.sub("", clean_template_tokens(content)).strip():
            return False
        return self._ask(content, EMPTY_REPLY)

    def unapplied_code(self, content: str) -> bool:
        """Ask again when a working turn (tools already ran) ends in code that was never
        applied: nothing was changed yet, or the last call failed and the reply shows the fix
        as code (or as a Python-style tool call) instead of making it."""
        if self.asked >= MAX_CORRECTIONS or not self.calls or not content:
            return False
        if self.changed and not self.last_failed:
            return False
        if not self._new_code(content) and not _python_style_call(content, self.toolkit):
            return False
        state = "your last tool call failed" if self.last_failed else "no file was changed"
        return self._ask(content, UNAPPLIED_CODE.format(state=state))

    def _new_code(self, content: str) -> bool:
        """A code block with a line no tool returned: written, not quoted from a file read."""
        for block in _FENCED_CODE.findall(content):
            lines = (line.strip() for line in block.splitlines())
            if any(line and line not in self.seen for line in lines):
                return True
        return False

    def unchecked_file(self, content: str, workspace: Path | None) -> bool:
        """Ask again when the user asked a question, no tool ran, and the answer names a file
        that the workspace does not have: a guess from the file listing, not a look."""
        if self.asked >= MAX_CORRECTIONS or self.calls or not self.question or workspace is None:
            return False
        missing = [p for p in _FILE_NAMES.findall(content) if not (workspace / p).exists()]
        if not missing:
            return False
        return self._ask(content, UNCHECKED_FILE.format(name=missing[0]))

    def repeated(self, name: str) -> None:
        """Point the model at the result of a call it just repeated."""
        self.pending = [{"role": "user", "content": REPEATED.format(name=name)}]

    def requested_call(self, content: str) -> list[ToolCall]:
        """After the model was asked to make the call it described: the one read-only call its
        reply quotes, if that is all it quotes."""
        from ..llm.textcalls import quoted_calls

        if not self.asked_to_call:
            return []
        calls = quoted_calls(content, self.toolkit.names())
        if len(calls) != 1 or self._mutates(calls[0]):
            return []
        return calls

    def _mutates(self, call: ToolCall) -> bool:
        spec = self.toolkit.get(call.name)
        try:
            arguments = json.loads(call.arguments)
        except ValueError:
            return True
        return spec is None or not isinstance(arguments, dict) or spec.mutates_with(arguments)

    def _ask(self, content: str, text: str) -> bool:
        self.asked += 1
        self.pending = [
            {"role": "assistant", "content": content},
            {"role": "user", "content": text},
        ]
        return True


def _python_style_call(content: str, toolkit: ToolCatalog) -> bool:
    """``toolkit_edit("a.py", ...)``: a call written as code, which no parser can run."""
    return any(f"{name}(" in content for name in toolkit.names())


def _names_a_tool_with_json(content: str, names: Collection[str]) -> bool:
    """A tool's name in the text and a JSON object after it: arguments described in prose."""
    for name in names:
        at = content.find(name)
        if at >= 0 and "{" in content[at:]:
            return True
    return False
