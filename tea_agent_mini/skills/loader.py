"""Find and parse ``SKILL.md`` packs: bundled, in the home dir, in the workspace.

Reading is lenient and writing (``authoring``) is strict, as the Agent Skills format recommends:
a skill whose front matter cannot be used is skipped and reported, one that merely bends a rule
(a name that differs from its folder, an over-long description) is loaded with a warning. A bad
skill never hides the others.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any, Protocol

from tea_agent_mini.errors import ConfigError

logger = logging.getLogger(__name__)

SKILL_FILE = "SKILL.md"
LEARNED_SOURCE = "learned"  # <home>/skills/learned: skills crystallised from finished tasks
BUNDLED_PACKAGE = "tea_agent_mini.skills"
BUNDLED_DIR = "bundled"
# Spec rule: lowercase letters, digits and single hyphens, not at either end.
NAME_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_LISTED_FILES = 200
MAX_FILE_DEPTH = 6  # also stops symlink loops
MAX_EXTRA_FILE_BYTES = 256 * 1024
_KNOWN_KEYS = frozenset({"name", "description", "tags", "triggers"})
_SKIPPED_NAMES = frozenset({"__pycache__", ".git", ".DS_Store"})


class SkillFormatError(ConfigError):
    """A SKILL.md (or a skill about to be written) breaks the format."""


class Resource(Protocol):
    """The part of ``importlib.resources.abc.Traversable`` used here; ``pathlib.Path`` fits too."""

    @property
    def name(self) -> str: ...
    def iterdir(self) -> Iterator[Any]: ...
    def is_dir(self) -> bool: ...
    def is_file(self) -> bool: ...
    def joinpath(self, child: str, /) -> Any: ...
    def read_bytes(self) -> bytes: ...


@dataclass(frozen=True)
class Skill:
    """One skill. ``files`` are the folder's other files (relative POSIX paths)."""

    name: str
    description: str
    body: str
    source: str  # "bundled", "learned", "user" or "workspace"
    location: str
    tags: tuple[str, ...] = ()
    triggers: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    overrides: tuple[str, ...] = ()  # sources of same-named skills this one hides
    root: Any = field(default=None, repr=False, compare=False)  # the folder, for extra files


@dataclass(frozen=True)
class SkillProblem:
    """Something wrong with one skill folder. ``fatal``: the skill was skipped."""

    source: str
    location: str
    message: str
    fatal: bool = True

    def __str__(self) -> str:
        kind = "skipped" if self.fatal else "warning"
        return f"{self.source} skill {self.location}: {self.message} ({kind})"


@dataclass
class SkillCatalog:
    """The skills in effect (by name, later sources winning) and what went wrong on the way."""

    skills: dict[str, Skill] = field(default_factory=dict)
    problems: list[SkillProblem] = field(default_factory=list)

    def get(self, name: str) -> Skill | None:
        return self.skills.get(name)

    @property
    def errors(self) -> list[SkillProblem]:
        return [p for p in self.problems if p.fatal]

    @property
    def warnings(self) -> list[SkillProblem]:
        return [p for p in self.problems if not p.fatal]


def skill_dirs(home: Path | None, workspace: Path | None) -> list[tuple[str, Path]]:
    """The on-disk skill directories, in override order (later wins)."""
    dirs = []
    if home is not None:
        # skills the agent learned from its work (evaluation/crystallise.py), then the user's own
        dirs.append((LEARNED_SOURCE, Path(home) / "skills" / LEARNED_SOURCE))
        dirs.append(("user", Path(home) / "skills"))
    if workspace is not None:
        dirs.append(("workspace", Path(workspace) / ".tea_agent" / "skills"))
    return dirs


def bundled_root() -> Resource:
    """The bundled skills folder, wherever the package lives (directory, wheel, Nuitka binary)."""
    from importlib.resources import files

    return files(BUNDLED_PACKAGE).joinpath(BUNDLED_DIR)


def load_skills(
    home: Path | None, workspace: Path | None = None, *, bundled: bool = True
) -> SkillCatalog:
    """All skills: bundled, in ``<home>/skills`` and in ``<workspace>/.tea_agent/skills``."""
    sources: list[tuple[str, Resource]] = []
    if bundled:
        sources.append(("bundled", bundled_root()))
    sources.extend(skill_dirs(home, workspace))
    catalog = SkillCatalog()
    for source, root in sources:
        for skill in _scan(source, root, catalog.problems):
            previous = catalog.skills.get(skill.name)
            if previous is not None:
                skill = replace(skill, overrides=(*previous.overrides, previous.source))
            catalog.skills[skill.name] = skill
    # debug only: callers re-read skills every turn and show problems where they are useful
    for problem in catalog.problems:
        logger.debug("%s", problem)
    return catalog


def _scan(source: str, root: Resource, problems: list[SkillProblem]) -> list[Skill]:
    try:
        if not root.is_dir():
            return []
        folders = sorted((c for c in root.iterdir() if c.is_dir()), key=lambda c: c.name)
    except OSError as exc:
        problems.append(SkillProblem(source, str(root), f"cannot list the folder: {exc}"))
        return []
    found: dict[str, Skill] = {}
    for folder in folders:
        if folder.name.startswith((".", "_")) or (
            source == "user" and folder.name == LEARNED_SOURCE
        ):
            continue
        skill = _read_folder(source, folder, problems)
        if skill is None:
            continue
        if skill.name in found:
            problems.append(
                SkillProblem(
                    source,
                    str(folder),
                    f"another folder here ({found[skill.name].location}) already defines a "
                    f"skill named {skill.name!r}",
                )
            )
            continue
        found[skill.name] = skill
    return list(found.values())


def _read_folder(source: str, folder: Resource, problems: list[SkillProblem]) -> Skill | None:
    location = str(folder)
    skill_md = folder.joinpath(SKILL_FILE)
    try:
        if not skill_md.is_file():
            problems.append(SkillProblem(source, location, f"no {SKILL_FILE} in this folder"))
            return None
        text = skill_md.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(SkillProblem(source, location, f"cannot read {SKILL_FILE}: {exc}"))
        return None
    try:
        skill, warnings = parse_skill(text, folder_name=folder.name)
    except SkillFormatError as exc:
        problems.append(SkillProblem(source, location, str(exc)))
        return None
    problems.extend(SkillProblem(source, location, w, fatal=False) for w in warnings)
    files = tuple(list_files(folder))
    return replace(skill, source=source, location=location, files=files, root=folder)


def parse_skill(text: str, *, folder_name: str | None = None) -> tuple[Skill, list[str]]:
    """A Skill (with empty source/location) and warnings from the text of a SKILL.md.

    Raises SkillFormatError when the front matter is missing, is not YAML, or lacks a usable
    ``name`` or ``description``.
    """
    meta, body = split_front_matter(text)
    warnings: list[str] = []
    name = _required_text(meta, "name")
    if len(name) > MAX_NAME or re.search(r"[\s/\\]", name):
        raise SkillFormatError(f"name {name!r} must be at most {MAX_NAME} characters, no spaces")
    if not NAME_RE.match(name):
        warnings.append(f"name {name!r} should use only a-z, 0-9 and single hyphens")
    if folder_name is not None and name != folder_name:
        warnings.append(f"name {name!r} differs from its folder name {folder_name!r}")
    description = " ".join(_required_text(meta, "description").split())
    if len(description) > MAX_DESCRIPTION:
        warnings.append(f"description is longer than {MAX_DESCRIPTION} characters")
    extra = {k: v for k, v in meta.items() if k not in _KNOWN_KEYS}
    metadata = extra.get("metadata")
    nested = metadata if isinstance(metadata, dict) else {}
    lists = {}
    for key in ("tags", "triggers"):
        value = meta.get(key, nested.get(key))
        lists[key], problem = string_list(value)
        if problem:
            warnings.append(f"{key} {problem}; ignored")
    skill = Skill(
        name=name,
        description=description,
        body=body.strip("\n"),
        source="",
        location="",
        tags=lists["tags"],
        triggers=lists["triggers"],
        metadata=extra,
    )
    return skill, warnings


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """(front matter mapping, body) of a Markdown text starting with a ``---`` YAML block."""
    import yaml

    lines = text.lstrip("\ufeff").replace("\r\n", "\n").split("\n")
    if not lines or lines[0].rstrip() != "---":
        raise SkillFormatError("no YAML front matter: the file must start with a '---' line")
    for end in range(1, len(lines)):
        if lines[end].rstrip() in ("---", "..."):
            break
    else:
        raise SkillFormatError("the front matter is not closed by a '---' line")
    try:
        meta = yaml.safe_load("\n".join(lines[1:end]))
    except yaml.YAMLError as exc:
        detail = " ".join(str(exc).split())
        raise SkillFormatError(f"the front matter is not valid YAML: {detail}") from exc
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise SkillFormatError("the front matter must be a YAML mapping (key: value lines)")
    return {str(k): v for k, v in meta.items()}, "\n".join(lines[end + 1 :])


def _required_text(meta: dict[str, Any], key: str) -> str:
    value = meta.get(key)
    if value is None:
        raise SkillFormatError(f"the front matter has no {key!r}")
    if not isinstance(value, str):
        raise SkillFormatError(f"{key!r} must be a string, not {type(value).__name__}")
    if not value.strip():
        raise SkillFormatError(f"{key!r} is empty")
    return value.strip()


def string_list(value: Any) -> tuple[tuple[str, ...], str | None]:
    """Tags/triggers as a tuple: a YAML list, or one comma-separated string. (items, problem)."""
    if value is None:
        return (), None
    if isinstance(value, str):
        items: Iterable[Any] = value.split(",")
    elif isinstance(value, list):
        items = value
    else:
        return (), f"must be a list of strings, not {type(value).__name__}"
    if any(isinstance(item, (dict, list)) for item in items):
        return (), "must be a list of strings"
    cleaned = (str(item).strip() for item in items if item is not None)
    return tuple(dict.fromkeys(item for item in cleaned if item)), None


def list_files(folder: Resource, limit: int = MAX_LISTED_FILES) -> list[str]:
    """The folder's files other than SKILL.md, as sorted relative POSIX paths (at most limit)."""
    found: list[str] = []
    pending: list[tuple[Resource, PurePosixPath]] = [(folder, PurePosixPath())]
    try:
        while pending and len(found) < limit:
            current, prefix = pending.pop()
            for child in sorted(current.iterdir(), key=lambda c: c.name):
                if child.name in _SKIPPED_NAMES or child.name.startswith("."):
                    continue
                relative = prefix / child.name
                if child.is_dir():
                    if len(relative.parts) < MAX_FILE_DEPTH:
                        pending.append((child, relative))
                elif str(relative) != SKILL_FILE:
                    found.append(str(relative))
    except OSError as exc:
        logger.warning("cannot list the files of skill folder %s: %s", folder, exc)
    return sorted(found)[:limit]


def read_skill_file(skill: Skill, relative: str) -> str:
    """The text of one extra file of a skill. Raises SkillFormatError for a path that escapes
    the skill folder, is not one of its files, or is binary."""
    parts = PurePosixPath(relative.replace("\\", "/")).parts
    if not parts or relative.startswith(("/", "\\")) or ".." in parts:
        raise SkillFormatError(f"{relative!r} is not a path inside the skill folder")
    wanted = "/".join(parts)
    if wanted not in skill.files:
        listed = ", ".join(skill.files) or "none"
        raise SkillFormatError(f"skill {skill.name!r} has no file {wanted!r} (files: {listed})")
    target = skill.root.joinpath(*parts)
    try:
        data = target.read_bytes()[: MAX_EXTRA_FILE_BYTES + 1]
    except OSError as exc:
        raise SkillFormatError(f"cannot read {wanted!r}: {exc}") from exc
    if b"\0" in data[:8192]:
        raise SkillFormatError(f"{wanted!r} is a binary file")
    text = data[:MAX_EXTRA_FILE_BYTES].decode("utf-8", errors="replace")
    if len(data) > MAX_EXTRA_FILE_BYTES:
        text += f"\n[... truncated at {MAX_EXTRA_FILE_BYTES // 1024} KiB]"
    return text
