"""toolkit_question: ask the user something mid-task (a dialog in the web UI, a prompt in the CLI).

The front end provides ``ctx.ask_user``; without one, or when nobody answers in time, the tool
falls back to the default and says so, so the model never waits forever or invents an answer.
"""

from __future__ import annotations

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import tool

MAX_CHOICES = 20
MIN_TIMEOUT, MAX_TIMEOUT = 1.0, 3600.0


@tool("toolkit_question")
def toolkit_question(
    ctx: ToolContext,
    question: str,
    choices: list[str] | None = None,
    default: str | None = None,
    timeout: float = 120,
) -> str:
    """Ask the user a question and wait for the answer — only when you cannot proceed
    sensibly without it (a real choice between options, missing information). Offer 'choices'
    when the answer is one of a few options, and a 'default' to use if nobody answers in time.

    Args:
        question: one clear question
        choices: possible answers to pick from (the user may still type another)
        default: used when nobody answers
        timeout: seconds to wait (default 120)
    """
    question = question.strip()
    if not question:
        raise ToolError("'question' must not be empty")
    options = _clean_choices(choices)
    wait = min(max(float(timeout), MIN_TIMEOUT), MAX_TIMEOUT)
    if ctx.ask_user is None:
        return _fallback("No one can be asked here (this front end has no way to ask)", default)
    shown_default = default.strip() if default is not None and default.strip() else None
    answer = ctx.ask_user(question, options or None, wait, shown_default)
    if answer is None or not answer.strip():
        return _fallback(f"Nobody answered within {wait:g} seconds", default)
    return f"The user answered: {_pick(answer.strip(), options)}"


def _clean_choices(choices: list[str] | None) -> list[str]:
    seen: dict[str, None] = {}
    for choice in choices or []:
        text = " ".join(str(choice).split())
        if text:
            seen.setdefault(text, None)
    if len(seen) > MAX_CHOICES:
        raise ToolError(f"offer at most {MAX_CHOICES} choices")
    return list(seen)


def _pick(answer: str, options: list[str]) -> str:
    """A typed number picks that choice (1-based) unless it is itself one of the choices."""
    if options and answer not in options and answer.isdigit():
        index = int(answer)
        if 1 <= index <= len(options):
            return options[index - 1]
    return answer


def _fallback(reason: str, default: str | None) -> str:
    if default is not None and default.strip():
        return f"{reason}; going with the default answer: {default.strip()}"
    return (
        f"{reason}, and there is no default. Do not wait for an answer: make a reasonable "
        "assumption, say which one you made, or stop and ask in your reply."
    )
