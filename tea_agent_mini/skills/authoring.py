"""Writing a new skill to ``<home>/skills/<name>/SKILL.md``, checked strictly against the format."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from tea_agent_mini.skills.loader import (
    MAX_DESCRIPTION,
    MAX_NAME,
    NAME_RE,
    SKILL_FILE,
    SkillFormatError,
    parse_skill,
)

MAX_BODY_CHARS = 64 * 1024
MAX_LIST_ITEMS = 20


def validate_skill_name(name: str) -> str:
    """The name, if it follows the Agent Skills rule. Raises SkillFormatError otherwise."""
    if not isinstance(name, str) or not name:
        raise SkillFormatError("a skill needs a name")
    if len(name) > MAX_NAME or not NAME_RE.match(name):
        raise SkillFormatError(
            f"skill name {name!r} is not valid: use 1-{MAX_NAME} characters a-z, 0-9 and single "
            "hyphens, not at the start or end (e.g. 'release-notes')"
        )
    return name


def render_skill_md(
    name: str,
    description: str,
    body: str,
    tags: Sequence[str] = (),
    triggers: Sequence[str] = (),
    metadata: Mapping[str, object] | None = None,
) -> str:
    """The text of a SKILL.md: YAML front matter, a blank line, the body."""
    import yaml

    meta: dict[str, object] = {"name": name, "description": description}
    if tags:
        meta["tags"] = list(tags)
    if triggers:
        meta["triggers"] = list(triggers)
    if metadata:
        meta["metadata"] = dict(metadata)
    front = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=100)
    return f"---\n{front}---\n\n{body.strip()}\n"


def create_skill(
    home: Path,
    name: str,
    description: str,
    body: str,
    *,
    tags: Sequence[str] = (),
    triggers: Sequence[str] = (),
    overwrite: bool = False,
) -> Path:
    """Write ``<home>/skills/<name>/SKILL.md`` and return its path.

    Raises SkillFormatError when the name, description or body break the format, or when the
    skill already exists and ``overwrite`` is false.
    """
    validate_skill_name(name)
    description = " ".join((description or "").split())
    if not description:
        raise SkillFormatError("a skill needs a description: what it does and when to use it")
    if len(description) > MAX_DESCRIPTION:
        raise SkillFormatError(f"the description is over {MAX_DESCRIPTION} characters")
    body = body or ""
    if not body.strip():
        raise SkillFormatError("a skill needs a body: the instructions to follow")
    if body.lstrip().startswith("---"):
        raise SkillFormatError(
            "pass only the Markdown instructions as the body; the front matter (name, "
            "description, tags, triggers) is written from the other arguments"
        )
    if len(body) > MAX_BODY_CHARS:
        raise SkillFormatError(f"the body is over {MAX_BODY_CHARS // 1024} KiB; split it up")
    tags = _clean_list(tags, "tags")
    triggers = _clean_list(triggers, "triggers")
    folder = Path(home) / "skills" / name
    target = folder / SKILL_FILE
    if target.exists() and not overwrite:
        raise SkillFormatError(
            f"skill {name!r} already exists at {target}; pass overwrite=true to replace it"
        )
    text = render_skill_md(name, description, body, tags, triggers)
    parse_skill(text, folder_name=name)  # what we write must read back
    folder.mkdir(parents=True, exist_ok=True)
    temporary = folder / f".{SKILL_FILE}.tmp"
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, target)
    return target


def _clean_list(items: Sequence[str] | None, label: str) -> list[str]:
    if items is None:
        return []
    if isinstance(items, str):
        items = items.split(",")
    cleaned = list(dict.fromkeys(str(i).strip() for i in items if str(i).strip()))
    if len(cleaned) > MAX_LIST_ITEMS:
        raise SkillFormatError(f"at most {MAX_LIST_ITEMS} {label}")
    if any("\n" in item or len(item) > 100 for item in cleaned):
        raise SkillFormatError(f"{label} must be short single-line words or phrases")
    return cleaned
