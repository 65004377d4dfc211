"""toolkit_prompt_evolve: the versions of the agent's own guidelines (the identity and rules at
the top of its system prompt), through the runtime's ``PromptVersions``
(``context/prompt_versions.py``).

set, accept and rollback change what every later turn's system prompt says, so they count as
writing: the approval policy asks (``ask``) or refuses (``never``) them. evolve only stores a
proposal.
"""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Literal

from tea_agent_mini.errors import LLMError, ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.modelcall import require_runtime
from tea_agent_mini.toolkit.registry import tool

if TYPE_CHECKING:
    from tea_agent_mini.context.prompt_versions import PromptVersions
    from tea_agent_mini.store.prompts import PromptVersion, TurnOutcomes

LISTED = 20
NEXT_TURN = "It applies from the next turn."


@tool(
    "toolkit_prompt_evolve",
    mutates=True,
    mutating_actions=("set", "accept", "rollback"),
    keywords="prompt guidelines instructions evolve improve revise rollback version",
)
async def toolkit_prompt_evolve(
    ctx: ToolContext,
    action: Literal["list", "current", "evolve", "accept", "rollback", "set", "diff"],
    version: int | None = None,
    text: str = "",
    note: str = "",
) -> str:
    """Versions of your own guidelines (the identity and rules opening your system prompt):
    list, current, evolve (propose a revision from recent evaluations, lessons and the user's
    remembered instructions, shown as a diff; nothing changes until it is accepted), accept a
    proposal, rollback (to the version before, or to a given one; 0 is the built-in text), set
    (a complete new text from the user), diff. A change applies from the next turn.

    Args:
        action: list, current, evolve, accept, rollback, set or diff
        version: [accept] the proposal; [rollback] the version to return to (default: the one
            before); [diff] the version to compare with the one it was made from (default: the
            version in use)
        text: [set] the complete new guidelines
        note: [set/evolve] why, kept with the version
    """
    from tea_agent_mini.context.guidelines import PromptVersionError

    runtime = require_runtime(ctx)
    prompts = runtime.prompts
    try:
        if action == "evolve":
            proposal = await prompts.evolve(runtime.llm_for("cheap"), note=note.strip())
            number = proposal.version.version
            return (
                f"Proposed version {number} (a revision of version {proposal.base.version}, "
                f"{proposal.evidence.summary()}). Nothing changes until it is accepted: "
                f"action=accept version={number}.\n\n{proposal.diff}"
            )
        return await asyncio.to_thread(_act, prompts, action, version, text, note.strip())
    except PromptVersionError as exc:
        raise ToolError(str(exc)) from exc
    except LLMError as exc:
        raise ToolError(f"the model could not propose a revision: {exc}") from exc


def _act(prompts: PromptVersions, action: str, version: int | None, text: str, note: str) -> str:
    if action == "list":
        return _listing(prompts)
    if action == "current":
        current = prompts.current()
        return f"{_line(current, prompts.outcomes().get(current.version))}\n\n{current.text}"
    if action == "diff":
        return prompts.diff(version) or "No difference from the version it was made from."
    if action == "set":
        if not text.strip():
            raise ToolError("set needs text: the complete new guidelines")
        added = prompts.set(text, note=note)
        return f"Version {added.version} is now in use. {NEXT_TURN}"
    if action == "accept":
        if version is None:
            raise ToolError("accept needs version: the number of the proposal")
        accepted = prompts.accept(version)
        return f"Version {accepted.version} is now in use. {NEXT_TURN}"
    if action == "rollback":
        active = prompts.rollback(version)
        return f"Rolled back: version {active.version} is in use again. {NEXT_TURN}"
    raise ToolError(f"unknown action {action!r}; use list, current, evolve, accept, rollback, set")


def _listing(prompts: PromptVersions) -> str:
    outcomes = prompts.outcomes()
    stored = prompts.newest(LISTED)
    lines = [f"Versions of the guidelines, newest first (version {prompts.in_use()} in use):"]
    lines += [f"- {_line(v, outcomes.get(v.version))}" for v in stored]
    if len(stored) < LISTED:
        lines.append(f"- {_line(prompts.get(0), outcomes.get(0))}")
    return "\n".join(lines)


def _line(version: PromptVersion, outcomes: TurnOutcomes | None) -> str:
    text = f"version {version.version}: {version.status}, {version.source}"
    if version.parent is not None:
        made = time.strftime("%Y-%m-%d %H:%M", time.localtime(version.created_at))
        text += f", from version {version.parent}, {made}"
    if version.note:
        text += f" ({version.note})"
    if outcomes is not None:
        text += (
            f"; {outcomes.turns} turns: {outcomes.completed} completed, "
            f"{outcomes.stopped} stopped, {outcomes.failed} failed"
        )
    return text
