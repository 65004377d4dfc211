"""MCP tools as toolkit `ToolSpec`s: ``mcp_<server>_<tool>`` names and their input schemas.

Names keep to ``[A-Za-z0-9_]`` and 64 characters, which every model API accepts. A name that had
to be shortened, had non-ASCII characters, or collides with another after sanitising, ends in a
short hash of the
original server and tool names, so it stays stable across restarts.
"""

from __future__ import annotations

import copy
import hashlib
import re
from collections.abc import Callable, Sequence
from typing import Any

from tea_agent_mini.mcp.client import McpTool
from tea_agent_mini.toolkit.registry import ToolSpec

MAX_NAME = 64
MAX_DESCRIPTION = 2000
_UNSAFE = re.compile(r"[^A-Za-z0-9_]")

ToolFuncFactory = Callable[[str, str], Callable[..., Any]]


def tool_name(server: str, tool: str, *, hashed: bool = False) -> str:
    """``mcp_<server>_<tool>`` with other characters replaced by ``_``, at most 64 long."""
    raw = f"mcp_{server}_{tool}"
    name = _UNSAFE.sub("_", raw)
    # non-ASCII names would sanitise to runs of underscores that tell nothing apart
    if len(name) <= MAX_NAME and raw.isascii() and not hashed:
        return name
    digest = hashlib.sha1(f"{server}\0{tool}".encode()).hexdigest()[:8]
    return f"{name[: MAX_NAME - 9]}_{digest}"


def input_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The tool's own schema, made acceptable as function parameters (an object schema)."""
    result = copy.deepcopy(schema) if isinstance(schema, dict) else {}
    result["type"] = "object"
    if not isinstance(result.get("properties"), dict):
        result["properties"] = {}
    required = result.get("required")
    if required is not None and not isinstance(required, list):
        del result["required"]
    return result


def build_specs(
    server: str, tools: Sequence[McpTool], make_func: ToolFuncFactory
) -> list[tuple[ToolSpec, str]]:
    """One spec per tool, with ``make_func(server, tool_name)`` as its function."""
    specs: list[tuple[ToolSpec, str]] = []
    used: set[str] = set()
    for tool in tools:
        name = tool_name(server, tool.name)
        if name in used:
            name = tool_name(server, tool.name, hashed=True)
        used.add(name)
        spec = ToolSpec(
            name=name,
            description=_description(server, tool),
            parameters=input_schema(tool.input_schema),
            func=make_func(server, tool.name),
            concurrency_safe=tool.read_only,
            # MCP tools act on the world unless the server says otherwise, so the approval
            # policy applies to them like to any tool that runs commands
            mutates=not tool.read_only,
            module=f"mcp:{server}",
        )
        specs.append((spec, tool.name))
    return specs


def _description(server: str, tool: McpTool) -> str:
    text = tool.description.strip() or tool.title or f"The {tool.name} tool."
    if len(text) > MAX_DESCRIPTION:
        text = text[: MAX_DESCRIPTION - 3] + "..."
    return f"{text}\n(MCP server {server!r}, tool {tool.name!r})"
