"""Presenting skills to the model: the relevant few in a turn's context, and keyword search."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tea_agent_mini.skills.loader import Skill

TOOL_NAME = "toolkit_skills"
MAX_PROMPT_DESCRIPTION = 400
NAMED_BODY_CHARS = 2000  # a skill the message names joins the context whole up to this size
# A skill joins a turn's context only on a clear match: two or more words of the message in its
# name, triggers, tags or description ("door code" is not about code review).
MIN_RELEVANT_SCORE = 5.0
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


def relevant_skills_section(
    skills: Iterable[Skill],
    query: str,
    limit: int,
    *,
    tool_name: str = TOOL_NAME,
    similar: Sequence[Skill] = (),
) -> str:
    """The skills that match ``query`` (at most ``limit``), and how to load one; "" when none
    does. ``similar``: skills found by meaning (learned ones), offered first. Part of a turn's
    context block: listing every skill on every request costs tokens whether or not one fits."""
    skills = list(skills)
    named = named_skills(skills, query)[:limit]
    if len(named) == 1 and len(named[0].body) <= NAMED_BODY_CHARS:
        return named_skill_section(named[0])
    if named:  # "following the release-notes skill": that one, not every skill about writing
        chosen = named
    else:
        found = search_skills(skills, query, limit) if query.strip() else []
        floor = max(MIN_RELEVANT_SCORE, found[0].score * 0.5) if found else 0.0
        terms = query_terms(query)
        chosen = [m.skill for m in found if m.score >= floor and _words_matched(m.skill, terms) > 1]
        merged: dict[str, Skill] = {}
        for skill in [*similar, *chosen]:  # the similar ones first, each skill once
            merged.setdefault(skill.name, skill)
        chosen = list(merged.values())[:limit]
    if not chosen:
        return ""
    lines = [
        "Skills that may fit this task (before you start, load one with "
        f'{tool_name}(action="load", name="<name>") and follow it):'
    ]
    lines += [f"- {skill.name}: {one_line(skill.description, 200)}" for skill in chosen]
    return "\n".join(lines)


def named_skill_section(skill: Skill) -> str:
    """The instructions of the one skill the message asks for, in full: loading it would cost a
    round trip, and a small model often does something else instead."""
    extra = f" Its other files: {', '.join(skill.files)}." if skill.files else ""
    return (
        f"The user asked for the skill {skill.name}. Follow its instructions, one tool call at a "
        f"time:{extra}\n{skill.body.strip()}"
    )


def named_skills(skills: Iterable[Skill], text: str) -> list[Skill]:
    """The skills whose name ``text`` spells out ("release-notes", or "release notes"). A
    one-word name counts only beside the word "skill": "cut a release" is not a request for
    the skill named release."""
    lowered = text.lower()
    says_skill = re.search(r"\bskills?\b", lowered) is not None
    named = []
    for skill in skills:
        if "-" not in skill.name and not says_skill:
            continue
        spellings = {skill.name.lower(), skill.name.lower().replace("-", " ")}
        if any(re.search(rf"(?<![\w-]){re.escape(s)}(?![\w-])", lowered) for s in spellings):
            named.append(skill)
    return sorted(named, key=lambda skill: skill.name)


def _words_matched(skill: Skill, terms: list[str]) -> int:
    """How many of ``terms`` the skill's name, triggers, tags or description contain."""
    text = " ".join([skill.name.replace("-", " "), *skill.triggers, *skill.tags, skill.description])
    from ..terms import STOPWORDS

    words = set(_WORD_RE.findall(text.lower()))
    # stricter than search: "read" must not find "readability", "that" counts for nothing
    return sum(
        1
        for term in terms
        if term not in STOPWORDS
        and (term in words or (len(term) >= 5 and any(w.startswith(term) for w in words)))
    )


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
