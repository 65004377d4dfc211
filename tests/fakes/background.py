"""The runtime's background prompts (title, L2->L3 summary, memory extraction, task evaluation,
lessons, learned skills) as the scripted model sees them: recognise them, answer them by rule,
and leave them out of turn counts."""

from __future__ import annotations

from typing import Any

from tea_agent_mini.context.summary import SUMMARY_MARKER
from tea_agent_mini.context.title import TITLE_MARKER
from tea_agent_mini.evaluation.crystallise import CRYSTALLISE_PROMPT
from tea_agent_mini.evaluation.evaluator import EVALUATE_PROMPT
from tea_agent_mini.evaluation.lessons import LESSON_PROMPT
from tea_agent_mini.memory.adjust import ADJUST_PROMPT, REFLECT_PROMPT
from tea_agent_mini.memory.extract import EXTRACT_PROMPT
from tests.fakes.script import Reply

SUMMARY_TEXT = (
    "## Project background\n- a parser project\n## Changes made\n- fixed the tokenizer\n"
    "## Decisions\n- keep it pure Python\n## Fixes\n- none\n## Constraints\n- Python 3.10\n"
    "## Preferences\n- short answers\n## Open items\n- write the docs"
)
VERDICT_TEXT = '{"outcome": "success", "quality": 4, "reason": "scripted verdict"}'
LESSON_TEXT = (
    '{"category": "general", "mistake": "A scripted mistake.", '
    '"instead": "Do the scripted thing instead."}'
)

SKILL_TEXT = (
    '{"name": "scripted-skill", "description": "A scripted skill for scripted tasks.", '
    '"when_to_use": "When a scripted task comes.", "steps": ["Do the scripted step."], '
    '"pitfalls": [], "triggers": ["scripted task"]}'
)


def _system(request: dict) -> str:
    messages = request.get("messages") or []
    first = messages[0] if messages else {}
    content = first.get("content") if first.get("role") == "system" else ""
    return content if isinstance(content, str) else ""


def is_title(request: dict) -> bool:
    return _system(request).startswith(TITLE_MARKER)


def is_summary(request: dict) -> bool:
    return _system(request).startswith(SUMMARY_MARKER)


def is_extraction(request: dict) -> bool:
    return _system(request).startswith(EXTRACT_PROMPT[:60])


def is_memory_upkeep(request: dict) -> bool:
    system = _system(request)
    return system.startswith(ADJUST_PROMPT[:60]) or system.startswith(REFLECT_PROMPT[:40])


def is_evaluation(request: dict) -> bool:
    return _system(request).startswith(EVALUATE_PROMPT[:60])


def is_lesson(request: dict) -> bool:
    return _system(request).startswith(LESSON_PROMPT[:60])


def is_crystallise(request: dict) -> bool:
    return _system(request).startswith(CRYSTALLISE_PROMPT[:60])


def is_background(request: dict) -> bool:
    return (
        is_crystallise(request)
        or is_title(request)
        or is_summary(request)
        or is_extraction(request)
        or is_memory_upkeep(request)
        or is_evaluation(request)
        or is_lesson(request)
    )


def answer_background(
    server: Any,
    *,
    title: str = "Scripted title",
    summary: str = SUMMARY_TEXT,
    memories: str = '{"memories": []}',
    verdict: str = VERDICT_TEXT,
    lesson: str = LESSON_TEXT,
    skill: str = SKILL_TEXT,
) -> None:
    """Rules so the cheap model's prompts never reach the scripted queue."""
    server.on(is_title, Reply(text=title))
    server.on(is_summary, Reply(text=summary))
    server.on(is_extraction, Reply(text=memories))
    server.on(is_memory_upkeep, Reply(text='{"changes": []}'))
    server.on(is_evaluation, Reply(text=verdict))
    server.on(is_lesson, Reply(text=lesson))
    server.on(is_crystallise, Reply(text=skill))


def turn_requests(server: Any) -> list[dict]:
    return [r for r in server.requests if not is_background(r)]
