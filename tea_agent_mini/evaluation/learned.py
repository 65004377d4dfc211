"""The skills the agent learned, as the user manages them: list, read, edit, promote, delete.

Crystallisation (``crystallise.py``) writes ``<home>/skills/learned/<name>/SKILL.md`` and keeps
the texts it replaced under ``versions/v<n>.md``. This is the user's side of it, shared by the
CLI (``skills learned``) and REST (``/v1/skills/learned``):

- an edit must still parse (``skills/loader.parse_skill``) and keep the skill's name; the text
  it replaces is kept as a version, and the new text records the next version number, so a later
  crystallisation of the same skill goes on counting from there;
- promoting moves the folder to ``<home>/skills/<name>/``: from then on it is the user's own
  skill, which crystallisation never rewrites (a draft close to it is skipped); the old versions
  stay behind with the learned folder, which is removed;
- how often a skill was offered and how those turns ended come from ``store.skill_stats`` when
  the store keeps such statistics (read defensively: older stores have none).
"""

from __future__ import annotations

import datetime as _dt
import logging
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ..errors import StoreError, TeaAgentError
from ..skills.loader import MAX_NAME, NAME_RE, SKILL_FILE, SkillFormatError, split_front_matter
from .crystallise import learned_dir

__all__ = ["LearnedSkill", "LearnedSkillError", "LearnedSkills", "OldVersion", "SkillUse"]

log = logging.getLogger(__name__)

Reason = Literal["invalid", "missing", "conflict"]
VERSIONS = "versions"
MAX_TEXT = 64 * 1024
_VERSION_FILE = re.compile(r"^v([0-9]{1,9})\.md$")


class LearnedSkillError(TeaAgentError):
    """A learned skill that does not exist (``missing``), a name or text that cannot be used
    (``invalid``), or a promotion onto a skill of the user's (``conflict``)."""

    def __init__(self, message: str, reason: Reason = "invalid") -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class SkillUse:
    """How a skill did, from ``store.skill_stats``."""

    uses: int = 0
    successes: int = 0
    failures: int = 0
    last_used: float | None = None
    retired: bool = False


@dataclass(frozen=True)
class LearnedSkill:
    """One learned skill. ``problem``: why its SKILL.md cannot be read (it is then not offered,
    but can still be edited or deleted)."""

    name: str
    description: str
    version: int
    path: Path
    modified: float
    score: int | None = None
    learned_from: str = ""
    learned_at: str = ""
    tools: tuple[str, ...] = ()
    problem: str = ""
    use: SkillUse | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON of the CLI and REST (the uses are null where the store records none)."""
        use = self.use
        return {
            "name": self.name,
            "description": self.description,
            "version": self.version,
            "score": self.score,
            "learned_from": self.learned_from,
            "learned_at": self.learned_at,
            "tools": list(self.tools),
            "modified": self.modified,
            "problem": self.problem,
            "uses": use.uses if use else None,
            "successes": use.successes if use else None,
            "failures": use.failures if use else None,
            "last_used": use.last_used if use else None,
            "retired": bool(use and use.retired),
        }


@dataclass(frozen=True)
class OldVersion:
    version: int
    text: str
    saved_at: float


def check_name(name: str) -> str:
    """``name`` if it can name a skill folder (the Agent Skills rule: no dots, no slashes)."""
    if not isinstance(name, str) or len(name) > MAX_NAME or not NAME_RE.match(name):
        shown = str(name)[:80]
        raise LearnedSkillError(
            f"{shown!r} is not a skill name: 1-{MAX_NAME} characters a-z, 0-9 and single hyphens"
        )
    return name


class LearnedSkills:
    """The learned skills of ``home``; ``stats`` is the store's ``skill_stats`` (or None)."""

    def __init__(self, home: Path, stats: Any = None) -> None:
        self.home = Path(home)
        self.root = learned_dir(self.home)
        self.stats = stats

    @classmethod
    def of(cls, home: Path, store: Any = None) -> LearnedSkills:
        return cls(home, getattr(store, "skill_stats", None))

    def all(self) -> list[LearnedSkill]:
        """Every learned skill, by name."""
        try:
            folders = sorted(p for p in self.root.iterdir() if p.is_dir())
        except OSError:  # no learned skill yet
            return []
        uses = self._all_uses()
        return [
            self._read(folder, uses.get(folder.name))
            for folder in folders
            if NAME_RE.match(folder.name) and not folder.is_symlink()
        ]

    def get(self, name: str) -> LearnedSkill:
        folder = self._folder(name)
        return self._read(folder, self._use(name))

    def text(self, name: str) -> str:
        return self._skill_md(self._folder(name)).read_text(encoding="utf-8", errors="replace")

    def versions(self, name: str) -> list[OldVersion]:
        """The texts this skill had before, newest first."""
        found = []
        for number, path in _version_files(self._folder(name)):
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
                found.append(OldVersion(number, text, path.stat().st_mtime))
            except OSError:
                continue
        return sorted(found, key=lambda v: v.version, reverse=True)

    def edit(self, name: str, text: str) -> LearnedSkill:
        """Replace the skill's SKILL.md with ``text``, keeping the old one as a version.

        Raises:
            LearnedSkillError: no such skill (``missing``), or ``text`` does not parse, names
                another skill or is too long (``invalid``: nothing is changed).
        """
        folder = self._folder(name)
        current = self._skill_md(folder)
        old = current.read_text(encoding="utf-8", errors="replace")
        new = _checked(text, name)
        if new == old:
            return self.get(name)
        kept = _version_of(old)
        if (folder / VERSIONS / f"v{kept}.md").exists():
            kept = max(number for number, _ in _version_files(folder)) + 1
        new = _with_version(new, kept + 1)
        (folder / VERSIONS).mkdir(exist_ok=True)
        os.replace(current, folder / VERSIONS / f"v{kept}.md")
        _write(current, new)
        return self.get(name)

    def promote(self, name: str) -> Path:
        """Make the skill the user's own: ``<home>/skills/<name>/SKILL.md``, which is returned.

        Raises:
            LearnedSkillError: no such skill (``missing``), the user has a skill folder of that
                name (``conflict``), or its SKILL.md does not parse (``invalid``).
        """
        folder = self._folder(name)
        text = _checked(self._skill_md(folder).read_text(encoding="utf-8", errors="replace"), name)
        target = self.home / "skills" / name
        if target.exists():
            raise LearnedSkillError(f"you already have a skill folder {target}", "conflict")
        target.mkdir(parents=True)
        for item in folder.iterdir():  # its own files go with it; its versions do not
            if item.name not in (SKILL_FILE, VERSIONS) and not item.name.startswith("."):
                os.replace(item, target / item.name)
        _write(target / SKILL_FILE, _promoted(text))
        shutil.rmtree(folder)
        return target / SKILL_FILE

    def delete(self, name: str) -> None:
        shutil.rmtree(self._folder(name))

    def _folder(self, name: str) -> Path:
        folder = self.root / check_name(name)
        if not folder.is_dir() or folder.is_symlink():
            raise LearnedSkillError(f"no learned skill named {name!r}", "missing")
        return folder

    @staticmethod
    def _skill_md(folder: Path) -> Path:
        path = folder / SKILL_FILE
        if not path.is_file():
            raise LearnedSkillError(f"learned skill {folder.name!r} has no {SKILL_FILE}", "missing")
        return path

    def _read(self, folder: Path, use: SkillUse | None) -> LearnedSkill:
        path = folder / SKILL_FILE
        base: dict[str, Any] = {"name": folder.name, "path": path, "use": use}
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
            modified = path.stat().st_mtime
            meta, _ = split_front_matter(text)
        except (OSError, SkillFormatError) as exc:
            return LearnedSkill(description="", version=1, modified=0.0, problem=str(exc), **base)
        nested = meta.get("metadata")
        info = nested if isinstance(nested, dict) else {}
        description = meta.get("description")
        tools = info.get("tools")
        return LearnedSkill(
            description=" ".join(str(description).split()) if description else "",
            version=_positive(info.get("version")) or 1,
            modified=modified,
            score=_positive(info.get("score")),
            learned_from=str(info.get("learned_from") or ""),
            learned_at=str(info.get("learned_at") or ""),
            tools=tuple(str(t) for t in tools) if isinstance(tools, list) else (),
            problem="" if description else "the front matter has no description",
            **base,
        )

    def _all_uses(self) -> dict[str, SkillUse]:
        records = getattr(self.stats, "all", None)
        try:
            found = records() if callable(records) else []
        except StoreError as exc:  # statistics are a nicety: the skills list without them
            log.warning("cannot read the skill statistics: %s", exc)
            return {}
        return {str(getattr(r, "name", "")): _use_of(r) for r in found}

    def _use(self, name: str) -> SkillUse | None:
        get = getattr(self.stats, "get", None)
        try:
            record = get(name) if callable(get) else None
        except StoreError as exc:
            log.warning("cannot read the skill statistics: %s", exc)
            return None
        return _use_of(record) if record is not None else None


def _use_of(record: Any) -> SkillUse:
    last = getattr(record, "last_used", None)
    return SkillUse(
        uses=int(getattr(record, "uses", 0) or 0),
        successes=int(getattr(record, "successes", 0) or 0),
        failures=int(getattr(record, "failures", 0) or 0),
        last_used=float(last) if isinstance(last, (int, float)) else None,
        retired=bool(getattr(record, "retired", False)),
    )


def _checked(text: str, name: str) -> str:
    """``text`` if it is a SKILL.md of the skill ``name``; LearnedSkillError saying why not."""
    from ..skills.loader import parse_skill

    if len(text) > MAX_TEXT:
        raise LearnedSkillError(f"the text is over {MAX_TEXT // 1024} KiB")
    try:
        skill, _ = parse_skill(text, folder_name=name)
    except SkillFormatError as exc:
        raise LearnedSkillError(str(exc)) from exc
    if skill.name != name:
        raise LearnedSkillError(
            f"the name must stay {name!r} (not {skill.name!r}): a skill's name is its folder"
        )
    if not skill.body.strip():
        raise LearnedSkillError("the skill has no instructions below its front matter")
    return text if text.endswith("\n") else text + "\n"


def _version_of(text: str) -> int:
    try:
        meta, _ = split_front_matter(text)
    except SkillFormatError:
        return 1
    nested = meta.get("metadata")
    return _positive(nested.get("version") if isinstance(nested, dict) else None) or 1


def _with_version(text: str, version: int) -> str:
    """``text`` with ``metadata.version`` (and the day it was edited) set in its front matter."""
    return _set_metadata(text, version=version, edited_at=_dt.date.today().isoformat())


def _promoted(text: str) -> str:
    return _set_metadata(text, promoted_at=_dt.date.today().isoformat())


def _set_metadata(text: str, **values: object) -> str:
    import yaml

    meta, body = split_front_matter(text)
    nested = meta.get("metadata")
    meta["metadata"] = {**(nested if isinstance(nested, dict) else {}), **values}
    front = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=100)
    return f"---\n{front}---\n{body}"


def _version_files(folder: Path) -> list[tuple[int, Path]]:
    try:
        paths = list((folder / VERSIONS).iterdir())
    except OSError:
        return []
    found = ((_VERSION_FILE.match(p.name), p) for p in paths)
    return [(int(match.group(1)), path) for match, path in found if match and path.is_file()]


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _write(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)
