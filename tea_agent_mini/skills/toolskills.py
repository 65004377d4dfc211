"""The SKILL.md that ``toolkit_save`` writes for each self-made tool, and how to recognise one.

A self-made tool is found through the skills as well as through the tool list: its skill says
when to use it, what it takes and shows a call. It lives in ``<home>/skills/tool-<name>/`` (the
tool's ``_`` become ``-``, as skill names require) and carries ``generated-by: toolkit_save``
and the tool's name in its front matter's ``metadata``, so it is rewritten when the tool changes
and removed by the evolution pass when the tool is gone. A skill of that name that the user
wrote (no such mark) is never overwritten.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

from tea_agent_mini.skills.loader import MAX_NAME, SKILL_FILE, Skill, SkillFormatError, parse_skill

__all__ = [
    "GENERATOR",
    "generated_tool",
    "remove_tool_skill",
    "render_tool_skill",
    "tool_skill_name",
    "write_tool_skill",
]

GENERATOR = "toolkit_save"
PREFIX = "tool-"
_EXAMPLES = {"string": "...", "integer": 1, "number": 1.5, "boolean": True, "array": []}


def tool_skill_name(tool: str) -> str:
    """``tool-<name>`` with ``_`` as ``-``, within the skill name's 64 characters."""
    words = re.sub(r"[^a-z0-9]+", "-", tool.lower()).strip("-")
    return (PREFIX + words)[:MAX_NAME].rstrip("-")


def generated_tool(skill: Skill) -> str | None:
    """The tool a skill was written for by ``toolkit_save``; None for any other skill."""
    meta = skill.metadata.get("metadata")
    if isinstance(meta, dict) and meta.get("generated-by") == GENERATOR:
        tool = meta.get("tool")
        return tool if isinstance(tool, str) and tool else None
    return None


def render_tool_skill(
    tool: str, description: str, parameters: dict[str, Any], version: int = 1
) -> str:
    """The text of the tool's SKILL.md: when to use it, its parameters, an example call."""
    import yaml

    summary = " ".join(description.split())
    front = {
        "name": tool_skill_name(tool),
        "description": f"Your own tool {tool}: {summary}"[:1000],
        "tags": ["self-made tool", tool],
        "metadata": {"generated-by": GENERATOR, "tool": tool, "version": version},
    }
    properties = parameters.get("properties", {}) or {}
    required = set(parameters.get("required", []) or [])
    lines = [f"# {tool}", "", f"Use it when you need to: {summary}", "", "## Parameters", ""]
    for name, schema in properties.items():
        kind = schema.get("type", "any") if isinstance(schema, dict) else "any"
        note = schema.get("description", "") if isinstance(schema, dict) else ""
        need = "required" if name in required else "optional"
        lines.append(f"- `{name}` ({kind}, {need}){': ' + note if note else ''}")
    if not properties:
        lines.append("(none)")
    example = {name: _example(schema) for name, schema in properties.items() if name in required}
    call = json.dumps(example, ensure_ascii=False)
    lines += ["", "## Example", "", f"Call the tool `{tool}` with `{call}`.", ""]
    lines.append(
        "It is one of your own tools (saved with toolkit_save); toolkit_list_versions shows its "
        "versions, toolkit_self_evolve changes its code safely."
    )
    head = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=100)
    return f"---\n{head}---\n\n" + "\n".join(lines) + "\n"


def _example(schema: Any) -> Any:
    if not isinstance(schema, dict):
        return "..."
    for key in ("example", "default"):
        if key in schema:
            return schema[key]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) and kind else kind
    return _EXAMPLES.get(kind, {}) if isinstance(kind, str) else "..."


def write_tool_skill(
    home: Path, tool: str, description: str, parameters: dict[str, Any], version: int = 1
) -> Path | None:
    """Write ``<home>/skills/tool-<name>/SKILL.md``; None (nothing written) when a skill of
    that name exists that ``toolkit_save`` did not write."""
    name = tool_skill_name(tool)
    folder = Path(home) / "skills" / name
    target = folder / SKILL_FILE
    if target.exists() and _owner(target) != tool:
        return None
    text = render_tool_skill(tool, description, parameters, version)
    parse_skill(text, folder_name=name)  # what we write must read back
    folder.mkdir(parents=True, exist_ok=True)
    temporary = folder / f".{SKILL_FILE}.tmp"
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, target)
    return target


def remove_tool_skill(home: Path, tool: str) -> bool:
    """Remove the generated skill of ``tool``; False when there is none (or not ours)."""
    folder = Path(home) / "skills" / tool_skill_name(tool)
    if _owner(folder / SKILL_FILE) != tool:
        return False
    shutil.rmtree(folder, ignore_errors=True)
    return True


def _owner(path: Path) -> str | None:
    try:
        skill, _ = parse_skill(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SkillFormatError):
        return None
    return generated_tool(skill)
