"""toolkit_skills: list, load, search and create SKILL.md skills.

The skill list is re-read on every call, so a skill dropped into a skills folder (or created here)
is visible at once.
"""

from __future__ import annotations

import difflib
from typing import Literal, get_args

from tea_agent_mini.errors import ToolError
from tea_agent_mini.skills.catalog import one_line, search_skills
from tea_agent_mini.skills.loader import (
    Skill,
    SkillCatalog,
    SkillFormatError,
    load_skills,
    read_skill_file,
)
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import tool

Action = Literal["list", "load", "search", "create"]
ACTIONS: tuple[str, ...] = get_args(Action)


@tool("toolkit_skills", mutates=True, mutating_actions=("create",))
def toolkit_skills(
    ctx: ToolContext,
    action: Action,
    name: str = "",
    file: str = "",
    query: str = "",
    description: str = "",
    body: str = "",
    tags: list[str] | None = None,
    triggers: list[str] | None = None,
    overwrite: bool = False,
) -> str:
    """Skills are step-by-step instructions for particular kinds of task (SKILL.md packs).
    list: every skill with its one-line description. load: a skill's full instructions and
    the list of its extra files (pass file=... to read one). search: skills matching
    keywords. create: save a new skill to the user's skills folder (name: a-z, 0-9,
    hyphens). Load a skill before doing a task it covers, then follow it.

    Args:
        action: list all skills, load one (its instructions), search by keywords, or create a
            new one
        name: [load/create] the skill's name
        file: [load] read this extra file of the skill (a path from its file list) instead of
            its instructions
        query: [search] words to look for
        description: [create] one or two sentences: what the skill does and when to use it
            (this is what appears in the skill list)
        body: [create] the instructions, in Markdown, without front matter
        tags: [create] a few topic words
        triggers: [create] typical request phrases that call for this skill
        overwrite: [create] replace your existing skill of that name (default false)
    """
    if action == "create":
        return _create(ctx, name, description, body, tags or [], triggers or [], overwrite)
    catalog = load_skills(ctx.home, ctx.workspace)
    if action == "list":
        return _list(catalog)
    if action == "load":
        text = _load(catalog, name, file)
        if ctx.store is not None and not file.strip():
            ctx.store.skill_stats.used(_find(catalog, name).name)  # how skills go: skillstats.py
        return text
    if action == "search":
        return _search(catalog, query)
    raise ToolError(f"unknown action {action!r}; use {', '.join(ACTIONS)}")


def _list(catalog: SkillCatalog) -> str:
    skills = sorted(catalog.skills.values(), key=lambda s: s.name)
    lines = [f"{len(skills)} skill(s):" if skills else "No skills found."]
    for skill in skills:
        lines.append(f"- {skill.name} [{skill.source}]: {one_line(skill.description)}")
    if catalog.problems:
        lines.append("Problems:")
        lines += [f"- {problem}" for problem in catalog.problems]
    return "\n".join(lines)


def _find(catalog: SkillCatalog, name: str) -> Skill:
    if not name.strip():
        raise ToolError("this action needs 'name' (a skill name from action='list')")
    skill = catalog.get(name.strip())
    if skill is not None:
        return skill
    close = difflib.get_close_matches(name, list(catalog.skills), n=3, cutoff=0.5)
    hint = f" Did you mean: {', '.join(close)}?" if close else " See action='list'."
    broken = [p for p in catalog.errors if p.location.rstrip("/").endswith(name)]
    if broken:
        hint += f" A skill folder of that name could not be read: {broken[0].message}."
    raise ToolError(f"no skill named {name!r}.{hint}")


# A small model tends to repeat loaded instructions back as its answer; the last line says what
# to do next.
FOLLOW = "Follow these instructions now, one tool call at a time; do not repeat them back."


def _load(catalog: SkillCatalog, name: str, file: str) -> str:
    skill = _find(catalog, name)
    if file.strip():
        try:
            return read_skill_file(skill, file.strip())
        except SkillFormatError as exc:
            raise ToolError(str(exc)) from exc
    origin = skill.source
    if skill.overrides:
        origin += f", overriding the {' and '.join(skill.overrides)} one"
    lines = [f"# Skill: {skill.name} ({origin})", f"Location: {skill.location}"]
    if skill.files:
        lines.append(
            f"Extra files (read one with toolkit_skills(action='load', name='{skill.name}', "
            f"file='<path>')): {', '.join(skill.files)}"
        )
    else:
        lines.append("Extra files: none")
    return "\n".join(lines) + "\n\n" + skill.body.rstrip() + "\n\n" + FOLLOW


def _search(catalog: SkillCatalog, query: str) -> str:
    if not query.strip():
        raise ToolError("search needs 'query' (some words describing the task)")
    matches = search_skills(catalog.skills.values(), query)
    if not matches:
        return f"No skill matches {query!r}. action='list' shows them all."
    lines = [f"{len(matches)} skill(s) match {query!r}, best first:"]
    for match in matches:
        where = ", ".join(match.fields)
        lines.append(f"- {match.skill.name}: {one_line(match.skill.description)} (in {where})")
    return "\n".join(lines)


def _create(
    ctx: ToolContext,
    name: str,
    description: str,
    body: str,
    tags: list[str],
    triggers: list[str],
    overwrite: bool,
) -> str:
    from tea_agent_mini.skills.authoring import create_skill

    try:
        path = create_skill(
            ctx.home,
            name.strip(),
            description,
            body,
            tags=tags,
            triggers=triggers,
            overwrite=overwrite,
        )
    except SkillFormatError as exc:
        raise ToolError(str(exc)) from exc
    except OSError as exc:
        raise ToolError(f"could not write the skill: {exc}") from exc
    message = f"Created skill {name.strip()!r} at {path}."
    skill = load_skills(ctx.home, ctx.workspace).get(name.strip())
    if skill is not None and skill.source == "workspace":
        message += " Note: a workspace skill of the same name overrides it in this workspace."
    elif skill is not None and skill.overrides:
        message += f" It overrides the {' and '.join(skill.overrides)} skill of that name."
    return message
