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

from .._lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "authoring": ("create_skill",),
        "cache": ("SkillsCache",),
        "catalog": ("relevant_skills_section", "search_skills"),
        "loader": ("Skill", "SkillCatalog", "SkillProblem", "load_skills", "parse_skill"),
    },
)
