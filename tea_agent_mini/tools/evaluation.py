"""toolkit_evaluation: the model reviews how past tasks went and what they taught.

Evaluations and lessons are made in the background after each task (``evaluation/``); this tool
only reads them: recent outcomes, one in full, the totals, and the lessons kept.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Literal

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import tool

if TYPE_CHECKING:
    from tea_agent_mini.store import Store
    from tea_agent_mini.store.evaluations import Evaluation

DEFAULT_LIMIT = 10
MAX_LIMIT = 50
REQUEST_CHARS = 120


@tool(
    "toolkit_evaluation",
    concurrency_safe=True,
    keywords="evaluation evaluations outcome outcomes feedback lessons learned mistakes "
    "past tasks went wrong success rate quality review",
)
def toolkit_evaluation(
    ctx: ToolContext,
    action: Literal["list", "show", "stats", "lessons"],
    id: int | None = None,  # shadows the builtin: it is the name the model sees
    outcome: Literal["success", "partial", "failed"] | None = None,
    this_conversation: bool = False,
    limit: int = DEFAULT_LIMIT,
) -> str:
    """Review how past tasks went: each finished task that used tools is scored (outcome,
    quality 1-5, steps, errors, tokens; the user's 👍/👎 overrides), and failed or corrected
    ones leave a lesson. Look before repeating a kind of task that went wrong before.

    Args:
        action: list recent evaluations; show one in full; stats (totals); lessons (what
            failed tasks taught)
        id: [show] the evaluation's id
        outcome: [list] only this outcome
        this_conversation: [list/stats] only this conversation's tasks
        limit: [list/lessons] at most this many (default 10)
    """
    store = _store(ctx)
    limit = max(1, min(MAX_LIMIT, int(limit)))
    topic = ctx.topic_id if this_conversation else None
    if action == "list":
        found = store.evaluations.recent(limit, topic, outcome)
        if not found:
            return "No task has been evaluated yet."
        return "\n".join(["Evaluations, newest first:", *(_line(e) for e in found)])
    if action == "show":
        if id is None:
            raise ToolError("show needs 'id', an evaluation's id (see action=list)")
        evaluation = store.evaluations.get(int(id))
        if evaluation is None:
            raise ToolError(f"no evaluation with id {id}")
        return _detail(store, evaluation)
    if action == "stats":
        stats = store.evaluations.stats(topic)
        if not stats.total:
            return "No task has been evaluated yet."
        outcomes = ", ".join(f"{k} {v}" for k, v in stats.outcomes.items())
        sources = ", ".join(f"{k} {v}" for k, v in stats.sources.items())
        return (
            f"{stats.total} task(s) evaluated: {outcomes}. Average quality "
            f"{stats.average_quality}/5. Judged by: {sources}. Rated by the user: "
            f"{stats.rated}. With a lesson: {stats.lessons}."
        )
    lessons = store.lessons.recent(limit)
    if not lessons:
        return "No lesson learned yet."
    lines = ["Lessons, newest first:"]
    lines += [f"- #{x.id} [{x.category}] {x.mistake} Instead: {x.instead}" for x in lessons]
    return "\n".join(lines)


def _store(ctx: ToolContext) -> Store:
    if ctx.store is None:
        raise ToolError("this tool needs the conversation store, which is not available here")
    return ctx.store


def _line(evaluation: Evaluation) -> str:
    request = " ".join(evaluation.user_text.split())
    if len(request) > REQUEST_CHARS:
        request = request[: REQUEST_CHARS - 1] + "…"
    rated = f", user: {evaluation.rating}" if evaluation.rating else ""
    return (
        f"- #{evaluation.id} {_when(evaluation.created_at)} {evaluation.outcome} "
        f"q{evaluation.quality} ({evaluation.source}{rated}; {evaluation.tool_calls} call(s), "
        f"{evaluation.errors} error(s)) {request!r}"
    )


def _detail(store: Store, evaluation: Evaluation) -> str:
    lines = [
        f"Evaluation #{evaluation.id} of conversation {evaluation.topic_id} "
        f"({_when(evaluation.created_at)})",
        f"Request: {evaluation.user_text}",
        f"Outcome: {evaluation.outcome}, quality {evaluation.quality}/5, judged by "
        f"{evaluation.source}. {evaluation.reason}",
        f"Tools in order: {', '.join(evaluation.tools) or 'none'}",
        f"Cost: {evaluation.iterations} model call(s), {evaluation.tool_calls} tool call(s), "
        f"{evaluation.errors} error(s), "
        f"{evaluation.prompt_tokens + evaluation.completion_tokens} tokens",
    ]
    if evaluation.error_text:
        lines.append(f"Errors:\n{evaluation.error_text}")
    if evaluation.rating:
        comment = f": {evaluation.comment}" if evaluation.comment else ""
        lines.append(f"The user rated it {evaluation.rating}{comment}")
    lesson = store.lessons.get(evaluation.lesson_id) if evaluation.lesson_id else None
    if lesson is not None:
        lines.append(f"Lesson [{lesson.category}]: {lesson.mistake} Instead: {lesson.instead}")
    return "\n".join(lines)


def _when(timestamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(timestamp)) if timestamp else "?"
