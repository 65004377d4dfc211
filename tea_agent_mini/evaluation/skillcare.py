"""Skill housekeeping, part of the evolution pass.

- **Weak skills are retired.** From how skills went (``store.skill_stats``: the outcomes of the
  tasks that loaded each one), a skill judged at least :data:`MIN_USES` times that succeeded in
  fewer than :data:`RETIRE_BELOW` of them is weak. A weak skill of the user's or a learned one
  (``<home>/skills``, ``<home>/skills/learned``) is retired: its folder moves to
  ``<home>/skills/.retired/``, which the loader skips and from where the user can move it back.
  Bundled and workspace skills are only reported.
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

from ..skills.loader import LEARNED_SOURCE, load_skills
from ..skills.toolskills import generated_tool, remove_tool_skill
from ..store.database import Database

__all__ = ["SkillCare", "care_for_skills", "skill_outcomes"]

log = logging.getLogger(__name__)

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
    """``{skill: (judged uses, successes)}`` from the store's skill statistics."""
    from ..store.skillstats import SkillStatsRepository

    stats = SkillStatsRepository(db).all()
    return {s.name: (s.judged, s.successes) for s in stats if s.judged}


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
        mine = judged.source in ("user", LEARNED_SOURCE)
        if retire and mine and _retire(home, Path(judged.location)):
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
