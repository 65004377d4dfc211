"""Working modes (design, develop, test, review, docs, devops) per conversation.

A mode adds a short section to the turn's context block and names the tools to lean on. The
mode is kept in the topic's state (``toolkit_mode``, ``tools/modes.py``, switches it); the
runtime's context block calls :func:`mode_prompt_section`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tea_agent_mini.store import Store
STATE_KEY = "mode"
DEFAULT_MODE = "default"


@dataclass(frozen=True)
class Mode:
    name: str
    summary: str
    prompt: str
    tools: tuple[str, ...] = ()


MODES: dict[str, Mode] = {
    mode.name: mode
    for mode in (
        Mode(
            "design",
            "shape the solution before building it",
            "Clarify the requirements and constraints, compare two or three approaches with "
            "their trade-offs, and settle the structure (modules, interfaces, data, failure "
            "cases) in writing before any code. Record decisions and open questions.",
            ("toolkit_plan", "toolkit_file", "toolkit_grep", "toolkit_glob", "toolkit_kb"),
        ),
        Mode(
            "develop",
            "make focused, working code changes",
            "Read the relevant code first, change it in small verified steps in the project's "
            "own style, and run the tests after each step. Keep the change to what was asked.",
            ("toolkit_file", "toolkit_edit", "toolkit_apply_patch", "toolkit_exec", "toolkit_todo"),
        ),
        Mode(
            "test",
            "write and run tests, find the cause of failures",
            "Test behaviour, not implementation: cover the normal case, edge cases and errors "
            "with real effects. Run the suite, read each failure fully, and fix the cause rather "
            "than the test. Report what is covered and what is not.",
            ("toolkit_run_tests", "toolkit_exec", "toolkit_file", "toolkit_edit", "toolkit_grep"),
        ),
        Mode(
            "review",
            "review code and changes without editing",
            "Read the code and the diff carefully and report findings by file and line, most "
            "severe first: bugs, risks, missing tests, unclear code. Propose fixes; do not "
            "change files unless asked.",
            ("toolkit_git", "toolkit_code_review", "toolkit_grep", "toolkit_file"),
        ),
        Mode(
            "docs",
            "write documentation that matches the code",
            "Write for the reader's task: what it is, how to use it, examples that really run. "
            "Check every statement against the code, and keep README and guides consistent.",
            ("toolkit_file", "toolkit_edit", "toolkit_grep", "toolkit_publish_doc"),
        ),
        Mode(
            "devops",
            "build, deploy and operate",
            "Inspect the environment before acting, prefer reversible steps, say what a command "
            "that changes a system will do before running it, verify the result afterwards, and "
            "never print or commit secrets.",
            ("toolkit_exec", "toolkit_os_info", "toolkit_git", "toolkit_build", "toolkit_file"),
        ),
        Mode(DEFAULT_MODE, "general assistance, no special emphasis", ""),
    )
}


def render_section(mode: Mode, tool_names: Iterable[str] | None = None) -> str:
    """The system-prompt section for ``mode`` ("" for the default mode)."""
    if not mode.prompt:
        return ""
    tools = list(mode.tools)
    if tool_names is not None:
        available = set(tool_names)
        tools = [name for name in tools if name in available]
    text = f"Working mode: {mode.name} — {mode.summary}.\n{mode.prompt}"
    if tools:
        text += f"\nLean on these tools: {', '.join(tools)}."
    return text


def current_mode(store: Store | None, topic_id: str | None) -> Mode:
    from tea_agent_mini.store import topic_scope

    if store is None or not topic_id:
        return MODES[DEFAULT_MODE]
    name = store.state.get(topic_scope(topic_id), STATE_KEY)
    return MODES.get(name, MODES[DEFAULT_MODE]) if isinstance(name, str) else MODES[DEFAULT_MODE]


def mode_prompt_section(
    store: Store | None, topic_id: str | None, tool_names: Iterable[str] | None = None
) -> str:
    """The system-prompt section for the topic's mode; "" when it is the default.

    ``tool_names`` (the tools the session has) limits the named tools to existing ones.
    """
    return render_section(current_mode(store, topic_id), tool_names)
