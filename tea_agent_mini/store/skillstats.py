"""How each skill has gone: how often it was loaded, and how the tasks that loaded it ended.

A use is counted when a skill's instructions are loaded (``toolkit_skills action=load``, or a
skill called as if it were a tool); the outcome when that turn's evaluation comes in (success,
or anything else). The evolution pass retires the weak ones (``evaluation/skillcare.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from .database import Database, Row

__all__ = ["SkillStats", "SkillStatsRepository"]


@dataclass(frozen=True)
class SkillStats:
    name: str
    uses: int = 0
    successes: int = 0
    failures: int = 0
    last_used: float | None = None

    @property
    def judged(self) -> int:
        return self.successes + self.failures


class SkillStatsRepository:
    def __init__(self, db: Database) -> None:
        self._db = db

    def used(self, name: str) -> None:
        """Count one load of ``name``."""
        now = self._db.now()
        self._db.execute(
            "INSERT INTO skill_stats (name, uses, last_used) VALUES (?, 1, ?) "
            "ON CONFLICT (name) DO UPDATE SET uses = skill_stats.uses + 1, last_used = ?",
            (name, now, now),
        )

    def outcome(self, name: str, success: bool) -> None:
        """Count how a task that loaded ``name`` ended."""
        column = "successes" if success else "failures"
        self._db.execute(
            f"INSERT INTO skill_stats (name, {column}) VALUES (?, 1) "
            f"ON CONFLICT (name) DO UPDATE SET {column} = skill_stats.{column} + 1",
            (name,),
        )

    def get(self, name: str) -> SkillStats | None:
        row = self._db.query_one("SELECT * FROM skill_stats WHERE name = ?", (name,))
        return _stats(row) if row else None

    def all(self) -> list[SkillStats]:
        return [_stats(row) for row in self._db.query("SELECT * FROM skill_stats ORDER BY name")]


def _stats(row: Row) -> SkillStats:
    return SkillStats(
        name=row["name"],
        uses=int(row["uses"]),
        successes=int(row["successes"]),
        failures=int(row["failures"]),
        last_used=row["last_used"],
    )
