"""toolkit_find_tools: the way to every installed tool that a request does not carry.

A request offers a few core tools and those the conversation needs (see
``toolkit/selection.py``). This tool searches all installed tools — bundled, self-made and MCP
servers' — by what the model needs, shows their full usage notes (which the compact schemas
leave out), and adds them to the conversation's tool set, so they are offered from the next
model call on.
"""

from __future__ import annotations

from typing import Any

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import ToolSpec, tool
from tea_agent_mini.toolkit.selection import (
    CORE_TOOLS,
    FINDER,
    STATE_KEY,
    ToolIndex,
    tool_names,
    with_tools,
)

MAX_FOUND = 3
MIN_SEARCH_SCORE = 2.0  # lower than for automatic selection: the model asked


@tool(
    "toolkit_find_tools",  # selection.FINDER; a literal, so build_mini can read it
    concurrency_safe=True,
)
def toolkit_find_tools(ctx: ToolContext, need: str) -> str:
    """Find more tools by describing what you need (e.g. 'weather', 'git commit', 'remember a
    fact', 'schedule a task', 'web search'), or get one tool's full instructions by its name.
    The tools found become available: call them next.

    Args:
        need: what you need to do, in a few words, or a tool's exact name
    """
    toolkit = ctx.toolkit
    if toolkit is None:
        raise ToolError("no tool registry is available here")
    text = need.strip()
    if not text:
        raise ToolError("need is empty: describe what you need, e.g. 'weather forecast'")
    exact = _by_name(toolkit.tools, text)
    if exact is not None:
        found = [exact]
    else:
        matches = ToolIndex(toolkit.specs()).rank(text, MAX_FOUND + 2, MIN_SEARCH_SCORE)
        found = [toolkit.tools[m.name] for m in matches if m.name != FINDER][:MAX_FOUND]
    if not found:
        return _nothing_found(text, toolkit.names())
    ctx.state_set(
        STATE_KEY, with_tools(tool_names(ctx.state_get(STATE_KEY, [])), [s.name for s in found])
    )
    lines = [f"Available now: {', '.join(s.name for s in found)}."]
    lines += [usage(spec) for spec in found]
    return "\n\n".join(lines)


def _by_name(tools: dict[str, ToolSpec], text: str) -> ToolSpec | None:
    name = text.strip("`'\" ").removeprefix("functions.")
    return tools.get(name) or tools.get(f"toolkit_{name}")


def _nothing_found(text: str, names: list[str]) -> str:
    others = sorted(n for n in names if n not in CORE_TOOLS)
    return (
        f"No installed tool matches {text!r}. Try other words, or one of these names: "
        f"{', '.join(others)}."
    )


def usage(spec: ToolSpec) -> str:
    """A tool's whole description and its parameters, one line each."""
    lines = [f"{spec.name}: {' '.join(spec.description.split())}", "Parameters:"]
    required = set(spec.parameters.get("required", ()))
    for key, schema in spec.parameters.get("properties", {}).items():
        lines.append(f"- {_parameter_line(key, schema, key in required)}")
    if len(lines) == 2:
        lines[-1] = "Parameters: none"
    return "\n".join(lines)


def _parameter_line(key: str, schema: Any, required: bool) -> str:
    if not isinstance(schema, dict):
        return key
    kind = schema.get("type", "any")
    if isinstance(kind, list):
        kind = "|".join(str(k) for k in kind)
    detail = f"{key} ({kind}{', required' if required else ''})"
    enum = schema.get("enum")
    if enum:
        detail += f" one of {', '.join(str(v) for v in enum)}"
    description = schema.get("description")
    return f"{detail}: {' '.join(description.split())}" if description else detail
