"""Loop detection: the same tool call repeated in a row ends the turn.

Three identical calls in a row stop it. Two are enough when both failed because the call itself
was wrong (an unknown tool, arguments the tool refuses): nothing ran, so the same call can only
fail the same way again. The message says what failed last and what to do instead.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ..types import ToolResult

REPEAT_LIMIT = 3
CALL_ERROR_LIMIT = 2
_ERROR_CHARS = 240
# How the executor words a call it could not run (toolnames, repair, arguments, callfix).
_UNKNOWN_TOOL = re.compile(r"^unknown tool '")
_BAD_CALL = re.compile(
    r"^(?:Invalid tool arguments:|[\w.\-]+: (?:arguments must be|unexpected parameter"
    r"|missing required parameter|parameter '|the call has no 'action'))"
)
_EXAMPLE = re.compile(r"e\.g\. (\{.*\})(?= \(actions:|$)")


def _canonical(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), sort_keys=True)
    except (ValueError, TypeError):
        return arguments.strip()


def is_call_error(error: str) -> bool:
    """Whether ``error`` says the call itself was wrong, so that the tool never ran."""
    return bool(_UNKNOWN_TOOL.match(error) or _BAD_CALL.match(error))


@dataclass
class _Streak:
    """The same call, made ``count`` times in a row; the last ``failures`` of them failed."""

    name: str
    arguments: str
    count: int = 0
    failures: int = 0
    error: str = ""


class LoopGuard:
    def __init__(self, limit: int = REPEAT_LIMIT, call_error_limit: int = CALL_ERROR_LIMIT) -> None:
        self.limit = limit
        self.call_error_limit = min(call_error_limit, limit)
        self._streak: _Streak | None = None

    def record(self, result: ToolResult, arguments: str) -> None:
        """One finished call: its result, and the arguments the model sent."""
        canonical = _canonical(arguments)
        streak = self._streak
        if streak is None or (streak.name, streak.arguments) != (result.name, canonical):
            streak = self._streak = _Streak(result.name, canonical)
        streak.count += 1
        streak.failures = 0 if result.ok else streak.failures + 1
        streak.error = "" if result.ok else (result.error or "").strip()

    def verdict(self) -> str | None:
        """A message explaining why the turn must stop, or None to carry on."""
        streak = self._streak
        if streak is None:
            return None
        if streak.failures >= self._failure_limit(streak):
            return _failed_message(streak)
        if streak.count >= self.limit:
            return (
                f"Stopped: {streak.name} was called {streak.count} times in a row with the same "
                "arguments. Its result will not change by asking again."
            )
        return None

    def repeated_success(self) -> str | None:
        """The tool's name when the last call repeated the one before it and both succeeded:
        a small model that did not notice the result answers its question."""
        streak = self._streak
        if streak is not None and streak.count == 2 and streak.failures == 0:
            return streak.name
        return None

    def _failure_limit(self, streak: _Streak) -> int:
        return self.call_error_limit if is_call_error(streak.error) else self.limit


def _failed_message(streak: _Streak) -> str:
    error = streak.error or "no error text"
    short = error if len(error) <= _ERROR_CHARS else error[: _ERROR_CHARS - 3].rstrip() + "..."
    return (
        f"Stopped: {streak.name} failed {streak.failures} times in a row with the same "
        f"arguments. Last error: {short} Instead: {_fix(error)}"
    )


def _fix(error: str) -> str:
    if _UNKNOWN_TOOL.match(error):
        return "call a tool by one of the exact names the error suggests."
    example = _EXAMPLE.search(error)
    if example:
        return f"send the call with an action, e.g. {example.group(1)}"
    if _BAD_CALL.match(error):
        return "change the arguments as the error says."
    return "change the arguments or take another approach; the same call fails the same way."
