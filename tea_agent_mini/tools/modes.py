"""toolkit_mode: switch the conversation's working mode (the modes are ``context/modes.py``'s)."""

from __future__ import annotations

from typing import Annotated

from tea_agent_mini.context.modes import DEFAULT_MODE, MODES, STATE_KEY, render_section
from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import tool


@tool("toolkit_mode")
def toolkit_mode(
    ctx: ToolContext, mode: Annotated[str | None, {"enum": list(MODES)}] = None
) -> str:
    """Switch this conversation's working mode, which adjusts your instructions and the tools
    to favour: design, develop, test, review, docs, devops, or default. Without 'mode' it
    shows the current mode and the choices.

    Args:
        mode: the mode to switch to; omit it to see the current mode
    """
    if mode is None:
        current = MODES.get(ctx.state_get(STATE_KEY) or DEFAULT_MODE, MODES[DEFAULT_MODE])
        lines = [f"Current mode: {current.name}. Modes:"]
        lines += [f"- {m.name}: {m.summary}" for m in MODES.values()]
        return "\n".join(lines)
    chosen = MODES.get(mode.strip().lower())
    if chosen is None:
        raise ToolError(f"unknown mode {mode!r}; choose one of {', '.join(MODES)}")
    ctx.state_set(STATE_KEY, None if chosen.name == DEFAULT_MODE else chosen.name)
    if chosen.name == DEFAULT_MODE:
        return "Back to the default mode (no special emphasis) from the next turn on."
    tools = ctx.toolkit.names() if ctx.toolkit is not None else None
    return f"Mode set to {chosen.name} from the next turn on.\n\n{render_section(chosen, tools)}"
