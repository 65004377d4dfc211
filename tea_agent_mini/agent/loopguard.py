"""Loop detection: the same tool call repeated (or failing) three times in a row ends the turn."""

from __future__ import annotations

import json

REPEAT_LIMIT = 3


def _canonical(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), sort_keys=True)
    except (ValueError, TypeError):
        return arguments.strip()


class LoopGuard:
    def __init__(self, limit: int = REPEAT_LIMIT) -> None:
        self.limit = limit
        self._last: tuple[str, str] | None = None
        self._streak = 0
        self._failures = 0

    def record(self, name: str, arguments: str, ok: bool) -> None:
        key = (name, _canonical(arguments))
        if key == self._last:
            self._streak += 1
            self._failures = self._failures + 1 if not ok else 0
        else:
            self._last, self._streak = key, 1
            self._failures = 0 if ok else 1

    def verdict(self) -> str | None:
        """A message explaining why the turn must stop, or None to carry on."""
        if self._last is None or self._streak < self.limit:
            return None
        name = self._last[0]
        if self._failures >= self.limit:
            return (
                f"Stopped: {name} failed {self._failures} times in a row with the same arguments."
            )
        return f"Stopped: {name} was called {self._streak} times in a row with the same arguments."
