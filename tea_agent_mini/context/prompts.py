"""The system prompt (the stable part of every request) and the turn's context block (the volatile
part).

Servers reuse the cached prompt of an earlier request only for an identical prefix, so the system
prompt holds what stays the same across a session: the guidelines (identity and rules: the
built-in text or the active version of ``guidelines.py``, which changes only when the user sets,
accepts or rolls back a version), environment (the date at most), AGENTS.md, the conversation's
own instructions. Whatever changes from turn to turn (the time, memories, skills, unfinished
work, the mode) goes into the context block (``block.py``), which the request builder puts just
before the latest user message.

Two profiles: ``full`` and ``compact`` (shorter rules and smaller budgets, for windows of 16k
tokens or less; ``agent.prompt: auto`` picks it from ``max_context_tokens``).
"""

from __future__ import annotations

import datetime as _dt
import platform
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = [
    "AGENTS_LIMITS",
    "COMPACT_WINDOW",
    "PromptParts",
    "Profile",
    "build_system_prompt",
    "builtin_guidelines",
    "profile_for",
]

Profile = Literal["compact", "full"]
COMPACT_WINDOW = 16384  # agent.prompt: auto picks compact for windows up to this size

IDENTITY = (
    "You are tea_agent_mini, a capable assistant that gets real work done with tools. "
    "Be direct and accurate; say so when you are unsure or something failed."
)

TOOL_RULES = """\
How to work:
- Do the task with tool calls; do not hand the user code or commands to run instead.
- Use tools to check facts instead of guessing; read a file before editing it.
- Call several independent read-only tools at once when that saves a round trip.
- Paths are relative to the workspace; stay inside it.
- When a tool returns an error, read it, fix the arguments or change approach; do not repeat the
  same failing call.
- You have a few tools at hand; toolkit_find_tools finds the others (web, git, memory, dates,
  scheduling, email, MCP servers' tools ...) by what you need.
- When the task is done, answer with the result in plain words (what you did, what you found)."""

COMPACT_RULES = """\
Rules: do the task with tool calls; never hand the user code or commands to run instead. \
Search or read files to check facts; never guess. Paths are relative to the workspace. Read a \
file before editing it. On a tool error, fix the arguments; never repeat a failing call. Need \
another tool (web, git, memory, dates, schedule ...)? Call toolkit_find_tools. When done, \
answer briefly with the result."""

AGENTS_FILES = ("AGENTS.md", "agents.md")
AGENTS_LIMITS: dict[str, int] = {"full": 8000, "compact": 2000}


@dataclass(frozen=True)
class PromptParts:
    """What the system prompt is made of. Only what stays the same for a session belongs here.
    ``guidelines``: the active version's text (None: the built-in text of the profile)."""

    workspace: Path
    has_tools: bool = True
    topic_prompt: str | None = None
    approval: str = "auto"
    profile: Profile = "full"
    guidelines: str | None = None


def profile_for(setting: str, max_context_tokens: int) -> Profile:
    """The prompt profile for ``agent.prompt`` (auto | compact | full) and the window."""
    if setting == "compact":
        return "compact"
    if setting == "full":
        return "full"
    return "compact" if 0 < max_context_tokens <= COMPACT_WINDOW else "full"


def environment_section(
    workspace: Path, approval: str = "auto", today: _dt.date | None = None
) -> str:
    day = today or _dt.date.today()
    lines = [
        "Environment:",
        f"- Workspace: {workspace}",
        f"- OS: {platform.system()} {platform.release()} ({platform.machine()}), "
        f"Python {platform.python_version()}",
        f"- Date: {day.isoformat()} ({day.strftime('%A')})",
    ]
    if approval == "never":
        lines.append("- Read-only mode: tools that change files or run commands are refused.")
    elif approval == "ask":
        lines.append("- The user confirms each tool call that changes files or runs commands.")
    return "\n".join(lines)


def agents_md_section(workspace: Path, limit: int = AGENTS_LIMITS["full"]) -> str:
    """The workspace's AGENTS.md (project instructions), capped so it cannot crowd out the turn."""
    for name in AGENTS_FILES:
        path = workspace / name
        try:
            text = path.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            continue
        if len(text) > limit:
            text = text[:limit] + "\n[... AGENTS.md truncated]"
        return f"Project instructions from {name}:\n{text}" if text else ""
    return ""


def builtin_guidelines(profile: Profile = "full", has_tools: bool = True) -> str:
    """The agent's own instructions as shipped: version 0 of the guidelines (``guidelines.py``)."""
    if not has_tools:
        return IDENTITY
    return f"{IDENTITY}\n\n{COMPACT_RULES if profile == 'compact' else TOOL_RULES}"


def build_system_prompt(parts: PromptParts, today: _dt.date | None = None) -> str:
    guidelines = parts.guidelines or builtin_guidelines(parts.profile, parts.has_tools)
    sections = [guidelines, environment_section(parts.workspace, parts.approval, today)]
    agents = agents_md_section(parts.workspace, AGENTS_LIMITS[parts.profile])
    if agents:
        sections.append(agents)
    if parts.topic_prompt:
        sections.append(f"Instructions for this conversation:\n{parts.topic_prompt}")
    return "\n\n".join(sections)
