"""toolkit_evolution: run the evolution pass now, or show its last report.

The pass itself (``evaluation/evolution.py``) also runs on the background worker, at most once
per ``agent.evolution.interval``; this tool runs it at once, whatever the interval.
"""

from __future__ import annotations

from typing import Literal

from tea_agent_mini.config import EvolutionConfig
from tea_agent_mini.errors import ToolError
from tea_agent_mini.evaluation.evolution import read_report, run_evolution
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import tool
from tea_agent_mini.toolkit.usertools import live_toolkit, tool_inventory


@tool(
    "toolkit_evolution",
    mutates=True,
    mutating_actions=("run",),
    keywords="tool usage statistics failures unused tools suggestions TOOLS.md",
)
def toolkit_evolution(ctx: ToolContext, action: Literal["run", "report"] = "report") -> str:
    """How your tools are used, and what to improve: calls, failures and time per tool over
    the last days, tools never called, tools often used together, suggestions; it also
    rewrites TOOLS.md for your own tools and retires weak skills. report: the last pass's
    report (the pass runs in the background about hourly). run: run the pass now.

    Args:
        action: report (show the last report) or run (run the pass now, then show it)
    """
    if action == "report":
        text = read_report(ctx.home)
        if text is None:
            return "There is no evolution report yet; toolkit_evolution action=run makes one."
        return text
    if ctx.store is None:
        raise ToolError("there is no store in this context to read the tool calls from")
    toolkit = live_toolkit(ctx)
    tools = tool_inventory(toolkit) if toolkit is not None else []
    settings = ctx.runtime.config.agent.evolution if ctx.runtime else EvolutionConfig()
    report = run_evolution(ctx.store, ctx.home, settings, tools, workspace=ctx.workspace)
    return report.to_markdown()
