"""The records every stage of the build reports: checks and proof steps."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Check:
    """One named check; it passes when it found no problems."""

    name: str
    problems: list[str] = field(default_factory=list)
    detail: str = ""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.problems

    def fail(self, message: str) -> None:
        self.problems.append(message)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "ok": self.ok}


def all_ok(checks: list[Check]) -> bool:
    return all(check.ok for check in checks)


def failures(checks: list[Check]) -> list[str]:
    return [f"{check.name}: {problem}" for check in checks for problem in check.problems]
