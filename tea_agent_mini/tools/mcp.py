"""toolkit_mcp: the configured MCP servers, their state and their tools; restart one.

The servers themselves are run by `tea_agent_mini.mcp.manager.McpManager`, which the runtime
hands to tools as ``ToolContext.mcp`` (``Runtime.tool_context``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, get_args

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import tool

if TYPE_CHECKING:
    from tea_agent_mini.mcp.manager import McpManager, ServerStatus

Action = Literal["list", "status", "restart"]
ACTIONS: tuple[str, ...] = get_args(Action)


@tool("toolkit_mcp", mutates=True, mutating_actions={"restart"})
def toolkit_mcp(ctx: ToolContext, action: Action, server: str | None = None) -> str:
    """Show the MCP (Model Context Protocol) servers configured in mcp_servers.json or
    config.yaml: their state (starting, ready, failed, stopped) and the tools they provide, which
    are callable as mcp_<server>_<tool>. A crashed server restarts by itself on the next call to
    one of its tools; use restart when it has given up or after fixing its configuration.

    Args:
        action: list: every server with its state and tools; status: details of one server (or
            all), including its last error; restart: stop and start a server again (also one
            that gave up after repeated crashes)
        server: [status/restart] the server's name as configured
    """
    manager = manager_of(ctx)
    if action == "list":
        return render_list(manager)
    if action == "status":
        names = [server] if server else manager.names()
        if not names:
            return _no_servers(manager)
        return "\n\n".join(render_status(manager.server_status(name)) for name in names)
    if action == "restart":
        if not server:
            raise ToolError(f"restart needs server (one of: {', '.join(manager.names())})")
        status = manager.restart(server)
        return "Restarted.\n" + render_status(status)
    raise ToolError(f"unknown action {action!r}; expected one of {', '.join(ACTIONS)}")


def manager_of(ctx: ToolContext) -> McpManager:
    """The MCP manager the runtime put in the context; a ToolError when there is none."""
    from tea_agent_mini.mcp.manager import McpManager  # loaded already when there is one

    manager = ctx.mcp
    if not isinstance(manager, McpManager):
        raise ToolError(
            "MCP is not set up in this session: no servers are configured (add them to "
            "mcp_servers.json in the tea_agent home or under mcp_servers: in config.yaml)"
        )
    return manager


def render_list(manager: McpManager) -> str:
    statuses = manager.status()
    if not statuses:
        return _no_servers(manager)
    lines = [f"MCP servers ({len(statuses)}):"]
    for status in statuses:
        lines.append(f"- {status.name} [{status.state}] {status.transport}: {status.target}")
        if status.error:
            lines.append(f"  error: {status.error}")
        if status.tools:
            lines.append(f"  tools: {', '.join(status.tools)}")
    lines += [f"config problem: {error}" for error in manager.config_errors]
    return "\n".join(lines)


def render_status(status: ServerStatus) -> str:
    fields: list[tuple[str, Any]] = [
        ("server", status.name),
        ("state", status.state),
        ("transport", status.transport),
        ("target", status.target),
        ("error", status.error),
        ("reports itself as", status.server_name),
        ("protocol", status.protocol_version),
        ("pid", status.pid),
        ("consecutive failures", status.failures or None),
        ("tools", ", ".join(status.tools) or "(none known)"),
    ]
    return "\n".join(f"{label}: {value}" for label, value in fields if value not in (None, ""))


def _no_servers(manager: McpManager) -> str:
    problems = "".join(f"\nconfig problem: {error}" for error in manager.config_errors)
    return "No MCP servers are configured." + problems
