"""The volatile sections of a turn's context block, each within its budget for the profile:
relevant memories, lessons of earlier tasks and skills, unfinished work, the working mode, the
workspace's top level and the time. They change from turn to turn, so they go into the block
before the latest message, never into the stable system prompt."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..memory.manager import MemoryManager
    from ..skills.loader import Skill
    from ..store import Store
    from .prompts import Profile


@dataclass(frozen=True)
class SectionBudget:
    memory_chars: int
    skills: int  # skills named by relevance
    work_chars: int
    workspace_entries: int
    lessons: int = 2  # lessons of earlier tasks, by relevance
    lesson_chars: int = 500


SECTION_BUDGETS: dict[str, SectionBudget] = {
    "compact": SectionBudget(
        memory_chars=1200, skills=2, work_chars=1200, workspace_entries=25, lessons=2
    ),
    "full": SectionBudget(
        memory_chars=4000,
        skills=5,
        work_chars=3000,
        workspace_entries=60,
        lessons=4,
        lesson_chars=1500,
    ),
}


@dataclass(frozen=True)
class SectionSources:
    """Where the sections come from (the runtime's parts)."""

    store: Store
    memory: MemoryManager | None
    skills: Iterable[Skill]
    tool_names: list[str]
    workspace: Path


def turn_sections(
    sources: SectionSources, topic_id: str, query: str, profile: Profile
) -> list[str]:
    from ..evaluation.skillmatch import similar_learned
    from ..skills.catalog import relevant_skills_section
    from .block import time_line, workspace_overview
    from .modes import mode_prompt_section
    from .resume import unfinished_work_section

    budget = SECTION_BUDGETS[profile]
    memory = sources.memory
    memories = memory.prompt_block(query) if query and memory is not None else ""
    skills = list(sources.skills)
    similar = similar_learned(skills, query, budget.skills)  # learned skills, by meaning
    return [
        cap_lines(memories, budget.memory_chars),
        lessons_section(sources, query, budget),
        relevant_skills_section(skills, query, budget.skills, similar=similar),
        unfinished_work_section(sources.store, topic_id, budget.work_chars),
        mode_prompt_section(sources.store, topic_id, sources.tool_names),
        workspace_overview(sources.workspace, budget.workspace_entries),
        time_line(),
    ]


def lessons_section(sources: SectionSources, query: str, budget: SectionBudget) -> str:
    """Lessons of earlier tasks relevant to ``query`` (``evaluation/lessons.py``), vectors made
    by the memory's embedder; "" without a query."""
    from ..evaluation.lessons import LessonBook

    if not query.strip() or sources.memory is None:
        return ""
    book = LessonBook(sources.store, sources.memory.embedder)
    return book.section(query, budget.lessons, budget.lesson_chars)


def cap_lines(text: str, limit: int) -> str:
    """``text`` cut after its last whole line within ``limit`` characters."""
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit("\n", 1)[0]
    return cut if "\n" in cut else ""
