"""Presenting skills to the model: the short L0 list for the system prompt, and keyword search."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from tea_agent_mini.skills.loader import Skill

TOOL_NAME = "toolkit_skills"
MAX_PROMPT_SKILLS = 60
MAX_PROMPT_DESCRIPTION = 400
# Where a query word was found, and how much that says about the skill.
_WEIGHTS = (("name", 6.0), ("triggers", 4.0), ("tags", 4.0), ("description", 3.0), ("body", 1.0))
_STOPWORDS = frozenset(
    {"a", "an", "and", "are", "as", "at", "be", "by", "do", "for", "from", "how", "i", "in"}
    | {"is", "it", "me", "my", "of", "on", "or", "the", "this", "to", "with"}
)
_WORD_RE = re.compile(r"\w+")


def one_line(text: str, limit: int = MAX_PROMPT_DESCRIPTION) -> str:
    """``text`` on one line, cut at a word boundary with an ellipsis when over ``limit``."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1].rsplit(" ", 1)[0]
    return cut.rstrip(",;:") + "…"


def skills_prompt_section(
    skills: Iterable[Skill], *, tool_name: str = TOOL_NAME, limit: int = MAX_PROMPT_SKILLS
) -> str:
    """The L0 system-prompt section: each skill's name and one-line description, and how to load
    one. Empty when there are no skills. Bodies stay out of the prompt until loaded."""
    ordered = sorted(skills, key=lambda s: s.name)
    if not ordered:
        return ""
    lines = [
        "Skills: instructions for particular kinds of task. When the task at hand matches one, "
        f'first load it with {tool_name}(action="load", name="<name>") and follow it; '
        f'{tool_name}(action="search", query="...") looks through all of them.'
    ]
    lines += [f"- {skill.name}: {one_line(skill.description)}" for skill in ordered[:limit]]
    if len(ordered) > limit:
        lines.append(
            f'- ... and {len(ordered) - limit} more; {tool_name}(action="list") shows them all'
        )
    return "\n".join(lines)


@dataclass(frozen=True)
class SkillMatch:
    skill: Skill
    score: float
    fields: tuple[str, ...]  # where the query words were found


def query_terms(query: str) -> list[str]:
    words = [w for w in _WORD_RE.findall(query.lower()) if w]
    meaningful = [w for w in words if w not in _STOPWORDS]
    return list(dict.fromkeys(meaningful or words))


def search_skills(skills: Iterable[Skill], query: str, limit: int = 10) -> list[SkillMatch]:
    """Skills matching the words of ``query``, best first.

    A word counts in a field when it starts one of the field's words (so "commit" finds
    "commits"; words under four letters must match whole), or for non-ASCII words (CJK has no
    spaces) when it appears anywhere in it.
    Skills that match more of the words rank higher; name, trigger and tag hits weigh most.
    """
    terms = query_terms(query)
    if not terms:
        return []
    matches = []
    for skill in skills:
        match = _score(skill, terms)
        if match is not None:
            matches.append(match)
    matches.sort(key=lambda m: (-m.score, m.skill.name))
    return matches[: max(limit, 0)]


def _score(skill: Skill, terms: list[str]) -> SkillMatch | None:
    texts = {
        "name": skill.name.replace("-", " "),
        "triggers": " ".join(skill.triggers),
        "tags": " ".join(skill.tags),
        "description": skill.description,
        "body": skill.body,
    }
    lowered = {field: text.lower() for field, text in texts.items()}
    words = {field: set(_WORD_RE.findall(text)) for field, text in lowered.items()}
    score = 0.0
    fields: set[str] = set()
    matched = 0
    for term in terms:
        hit = False
        for field, weight in _WEIGHTS:
            if _contains(term, lowered[field], words[field]):
                score += weight
                fields.add(field)
                hit = True
        matched += hit
    if not matched:
        return None
    score *= matched / len(terms)
    phrase = " ".join(terms)
    if len(terms) > 1 and any(phrase in lowered[f] for f in ("description", "triggers", "name")):
        score += 3.0
    ordered = tuple(f for f, _ in _WEIGHTS if f in fields)
    return SkillMatch(skill, round(score, 2), ordered)


def _contains(term: str, text: str, words: set[str]) -> bool:
    if not term.isascii():
        return term in text
    if len(term) < 4:
        return term in words
    return any(word.startswith(term) for word in words)
