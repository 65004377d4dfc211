"""Skill housekeeping, part of the evolution pass.

- **Weak skills are retired.** When the store records how skills went (a ``skill_stats`` table
  with a ``name`` or ``skill`` column, ``uses``, and ``successes`` or ``failures``), a skill used
  at least :data:`MIN_USES` times that succeeded in fewer than :data:`RETIRE_BELOW` of them is
  weak. A weak skill of the user's (``<home>/skills``) is retired: its folder moves to
  ``<home>/skills/.retired/``, which the loader skips and from where the user can move it back.
  Bundled and workspace skills are only reported. Without such a table nothing is judged.
- **Orphaned tool skills are removed**: a SKILL.md that ``toolkit_save`` wrote for a tool of the
  user's that no longer exists.
- **Broken skills are listed**, with what is wrong with them.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from ..skills.loader import load_skills
from ..skills.toolskills import generated_tool, remove_tool_skill
from ..store.database import Database

__all__ = ["SkillCare", "care_for_skills", "skill_outcomes"]

log = logging.getLogger(__name__)

STATS_TABLE = "skill_stats"
MIN_USES = 5
RETIRE_BELOW = 0.34  # success rate
RETIRED_DIR = ".retired"


@dataclass
class SkillCare:
    """What the housekeeping found and did."""

    retired: list[str] = field(default_factory=list)  # moved to <home>/skills/.retired
    weak: list[str] = field(default_factory=list)  # weak but not the user's (or retiring is off)
    removed: list[str] = field(default_factory=list)  # tool skills whose tool is gone
    problems: list[str] = field(default_factory=list)  # skills that cannot be read
    judged: int = 0  # skills with recorded outcomes

    def to_dict(self) -> dict[str, object]:
        return {
            "judged": self.judged,
            "retired": self.retired,
            "weak": self.weak,
            "removed_tool_skills": self.removed,
            "problems": self.problems,
        }


def skill_outcomes(db: Database) -> dict[str, tuple[int, int]]:
    """``{skill: (uses, successes)}`` from the store's skill statistics; ``{}`` when the store
    keeps none (the table belongs to skill crystallisation and may not exist)."""
    columns = {str(row["name"]) for row in db.query(f"PRAGMA table_info({STATS_TABLE})")}
    name = next((c for c in ("name", "skill") if c in columns), None)
    if name is None or "uses" not in columns:
        return {}
    if "successes" in columns:
        good = "SUM(successes)"
    elif "failures" in columns:
        good = "SUM(uses) - SUM(failures)"
    else:
        return {}
    rows = db.query(
        f"SELECT {name} AS skill, SUM(uses) AS uses, {good} AS good FROM "
        f"{STATS_TABLE} GROUP BY {name}"
    )
    return {str(r["skill"]): (int(r["uses"] or 0), int(r["good"] or 0)) for r in rows}


def care_for_skills(
    db: Database,
    home: Path,
    workspace: Path | None,
    user_tools: Collection[str],
    *,
    retire: bool = True,
) -> SkillCare:
    """Judge, retire and tidy the skills (see the module docstring)."""
    care = SkillCare()
    catalog = load_skills(home, workspace)
    care.problems = [str(p) for p in catalog.errors]
    for skill in catalog.skills.values():
        tool = generated_tool(skill)
        orphan = skill.source == "user" and tool is not None and tool not in user_tools
        if orphan and tool is not None and remove_tool_skill(home, tool):
            care.removed.append(skill.name)
    outcomes = skill_outcomes(db)
    care.judged = sum(1 for name in outcomes if name in catalog.skills)
    for name, (uses, good) in sorted(outcomes.items()):
        judged = catalog.skills.get(name)
        if judged is None or uses < MIN_USES or good / uses >= RETIRE_BELOW:
            continue
        if retire and judged.source == "user" and _retire(home, Path(judged.location)):
            care.retired.append(name)
        else:
            care.weak.append(name)
    return care


def _retire(home: Path, folder: Path) -> bool:
    target = Path(home) / "skills" / RETIRED_DIR / folder.name
    if target.exists():
        target = target.with_name(f"{folder.name}-{time.strftime('%Y%m%d-%H%M%S')}")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(folder, target)
    except OSError as exc:
        log.warning("cannot retire skill %s: %s", folder.name, exc)
        return False
    return True
