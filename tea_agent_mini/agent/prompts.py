"""The system prompt, assembled from parts: identity, environment, tool rules, AGENTS.md."""

from __future__ import annotations

import datetime as _dt
import platform
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

IDENTITY = (
    "You are tea_agent_mini, a capable assistant that gets real work done with tools. "
    "Be direct and accurate; say so when you are unsure or something failed."
)

TOOL_RULES = """\
How to work:
- Use tools to act and to check facts instead of guessing; read a file before editing it.
- Call several independent read-only tools at once when that saves a round trip.
- Paths are relative to the workspace; stay inside it.
- When a tool returns an error, read it, fix the arguments or change approach; do not repeat the
  same failing call.
- When the task is done, answer with the result in plain words (what you did, what you found)."""

AGENTS_FILES = ("AGENTS.md", "agents.md")
AGENTS_LIMIT = 8000


@dataclass(frozen=True)
class PromptParts:
    """Everything the system prompt is made of; extra sections come from memory and skills."""

    workspace: Path
    tool_names: Sequence[str] = ()
    extra_sections: Sequence[str] = ()
    topic_prompt: str | None = None
    approval: str = "auto"


def environment_section(workspace: Path, approval: str = "auto") -> str:
    now = _dt.datetime.now().astimezone()
    lines = [
        "Environment:",
        f"- Workspace: {workspace}",
        f"- OS: {platform.system()} {platform.release()} ({platform.machine()})",
        f"- Python: {platform.python_version()}",
        f"- Local time: {now.strftime('%Y-%m-%d %H:%M %Z')} ({now.strftime('%A')})",
    ]
    if approval == "never":
        lines.append("- Read-only mode: tools that change files or run commands are refused.")
    elif approval == "ask":
        lines.append("- The user confirms each tool call that changes files or runs commands.")
    return "\n".join(lines)


def agents_md_section(workspace: Path) -> str:
    """The workspace's AGENTS.md (project instructions), capped so it cannot crowd out the turn."""
    for name in AGENTS_FILES:
        path = workspace / name
        try:
            text = path.read_text(encoding="utf-8", errors="replace").strip()
        except OSError:
            continue
        if len(text) > AGENTS_LIMIT:
            text = text[:AGENTS_LIMIT] + "\n[... AGENTS.md truncated]"
        return f"Project instructions from {name}:\n{text}" if text else ""
    return ""


def build_system_prompt(parts: PromptParts) -> str:
    sections = [IDENTITY, environment_section(parts.workspace, parts.approval)]
    if parts.tool_names:
        sections.append(TOOL_RULES)
    sections.extend(s for s in parts.extra_sections if s)
    agents = agents_md_section(parts.workspace)
    if agents:
        sections.append(agents)
    if parts.topic_prompt:
        sections.append(f"Instructions for this conversation:\n{parts.topic_prompt}")
    return "\n\n".join(sections)
