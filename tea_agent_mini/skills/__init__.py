"""Skills: ``SKILL.md`` packs (Agent Skills format) the agent loads on demand.

A skill is a folder holding a ``SKILL.md`` — YAML front matter (``name``, ``description``,
optional ``tags`` and ``triggers``) and Markdown instructions — plus any extra files it refers to.
Skills come from three places, later ones overriding earlier ones by name:

1. the bundled packs in ``tea_agent_mini/skills/bundled/`` (read through importlib.resources),
2. ``<home>/skills/`` (``~/.tea_agent/skills``: the user's and the agent's own skills),
3. ``<workspace>/.tea_agent/skills/`` (project skills).

    catalog = load_skills(home, workspace)   # SkillsCache: parsed again only on change
    section = relevant_skills_section(catalog.skills.values(), "review my diff", 3)  # per turn
    body = catalog.get("code-review").body                           # loaded on demand
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .authoring import create_skill
    from .cache import SkillsCache
    from .catalog import relevant_skills_section, search_skills
    from .loader import Skill, SkillCatalog, SkillProblem, load_skills, parse_skill

__all__ = [
    "Skill",
    "SkillCatalog",
    "SkillProblem",
    "SkillsCache",
    "create_skill",
    "load_skills",
    "parse_skill",
    "relevant_skills_section",
    "search_skills",
]

_HOMES = {
    "Skill": "loader",
    "SkillCatalog": "loader",
    "SkillProblem": "loader",
    "load_skills": "loader",
    "parse_skill": "loader",
    "search_skills": "catalog",
    "relevant_skills_section": "catalog",
    "create_skill": "authoring",
    "SkillsCache": "cache",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
