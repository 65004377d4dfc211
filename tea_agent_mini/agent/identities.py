"""Subagent identities: Markdown files with YAML front matter, the format other coding agents'
agent files use::

    ---
    name: explorer
    description: Finds and reads code to answer a question about the workspace.
    tools: toolkit_file, toolkit_grep, toolkit_glob     # or a YAML list; omitted: all tools
    model: cheap                                        # main (default), cheap, or a profile
    max_turns: 12
    read_only: true                                     # its writes are refused
    ---
    You explore the workspace and report what you found ...

The body is the identity's system prompt. Files come from three places, later ones replacing
earlier ones of the same name: the bundled identities (``agent/bundled/``), the user's
(``<home>/agents/``) and the workspace's (``<workspace>/.tea_agent/agents/``). A file that cannot
be read is skipped and reported (``doctor`` lists the problems).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import ConfigError

NAME_RE = re.compile(r"^[a-z][a-z0-9_-]{0,39}$")
DEFAULT_MAX_TURNS = 20
MAX_PROMPT_CHARS = 8000
MODEL_CHOICES = ("main", "cheap")
# Names other agents' files use: their models map onto ours, their tools onto ours.
MODEL_ALIASES = {"inherit": "main", "sonnet": "main", "opus": "main", "haiku": "cheap"}
TOOL_ALIASES = {
    "read": "toolkit_file",
    "write": "toolkit_file",
    "edit": "toolkit_edit",
    "multiedit": "toolkit_edit",
    "grep": "toolkit_grep",
    "glob": "toolkit_glob",
    "ls": "toolkit_glob",
    "bash": "toolkit_exec",
    "webfetch": "toolkit_web_fetch",
    "websearch": "toolkit_search",
    "todowrite": "toolkit_todo",
}
# Tools no subagent gets: it cannot start subagents or manage the team (depth 1).
PARENT_ONLY = frozenset(
    {
        "toolkit_subagent",
        "toolkit_parallel_subtasks",
        "toolkit_spawn_teammate",
        "toolkit_broadcast",
    }
)


@dataclass(frozen=True)
class Identity:
    """Who a subagent is: its prompt, the tools it may use and the model it runs on."""

    name: str
    description: str
    prompt: str
    tools: tuple[str, ...] | None = None  # None: every tool (but PARENT_ONLY); names or globs
    model: str = "main"  # main | cheap | a profile name
    max_turns: int = DEFAULT_MAX_TURNS
    timeout: float | None = None
    read_only: bool = False
    source: str = "bundled"  # bundled | user | workspace

    def allowed(self, installed: Iterable[str]) -> list[str]:
        """The installed tools this identity may call, in the order its file lists them."""
        names = [name for name in installed if name not in PARENT_ONLY]
        if self.tools is None:
            return names
        chosen: list[str] = []
        for pattern in self.tools:
            for name in fnmatch.filter(names, pattern):
                if name not in chosen:
                    chosen.append(name)
        return chosen


@dataclass
class IdentitySet:
    """The identities found, and the files that could not be read (path -> problem)."""

    identities: dict[str, Identity] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)

    def get(self, name: str) -> Identity | None:
        return self.identities.get(name.strip().lower())

    def describe(self) -> str:
        """One line per identity: what the model reads to choose one."""
        return "\n".join(
            f"- {i.name}: {i.description}" for i in sorted(self.identities.values(), key=_name)
        )


class IdentityError(ConfigError):
    """An identity file that cannot be used; the message says why."""


def load_identities(home: Path, workspace: Path) -> IdentitySet:
    """Bundled, then the user's, then the workspace's identities (later ones win)."""
    found = IdentitySet()
    bundled = resources.files("tea_agent_mini.agent").joinpath("bundled")
    for entry in sorted(bundled.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".md"):
            _add(found, entry.name, entry.read_text(encoding="utf-8"), "bundled")
    for folder, source in (
        (home / "agents", "user"),
        (workspace / ".tea_agent" / "agents", "workspace"),
    ):
        for path in sorted(folder.glob("*.md")) if folder.is_dir() else ():
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                found.problems[str(path)] = f"cannot read it: {exc}"
                continue
            _add(found, str(path), text, source)
    return found


def _add(found: IdentitySet, where: str, text: str, source: str) -> None:
    try:
        identity = parse_identity(text, source, fallback_name=Path(where).stem)
    except IdentityError as exc:
        found.problems[where] = str(exc)
        return
    found.identities[identity.name] = identity


def parse_identity(text: str, source: str = "user", *, fallback_name: str = "") -> Identity:
    """An identity from a file's text. Raises IdentityError naming what is wrong."""
    meta, body = split_front_matter(text)
    name = str(meta.get("name") or fallback_name).strip().lower()
    if not NAME_RE.match(name):
        raise IdentityError(f"name {name!r} must be lowercase letters, digits, - or _")
    description = " ".join(str(meta.get("description") or "").split())
    if not description:
        raise IdentityError("the front matter needs a description (when to use this agent)")
    prompt = body.strip()
    if not prompt:
        raise IdentityError("the file has no prompt (the text after the front matter)")
    return Identity(
        name=name,
        description=description,
        prompt=prompt[:MAX_PROMPT_CHARS],
        tools=_tools(meta.get("tools")),
        model=_model(meta.get("model")),
        max_turns=_positive_int(meta.get("max_turns"), "max_turns", DEFAULT_MAX_TURNS),
        timeout=_timeout(meta.get("timeout")),
        read_only=_flag(meta.get("read_only")),
        source=source,
    )


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    """(front matter, body). Raises IdentityError when the front matter is missing or bad."""
    import yaml

    lines = text.lstrip("\ufeff").splitlines()
    if not lines or lines[0].strip() != "---":
        raise IdentityError("the file must start with YAML front matter between --- lines")
    try:
        end = next(i for i, line in enumerate(lines[1:], 1) if line.strip() == "---")
    except StopIteration:
        raise IdentityError("the front matter has no closing --- line") from None
    try:
        meta = yaml.safe_load("\n".join(lines[1:end])) or {}
    except yaml.YAMLError as exc:
        raise IdentityError(f"the front matter is not valid YAML: {exc}") from exc
    if not isinstance(meta, dict):
        raise IdentityError("the front matter must be a mapping (key: value lines)")
    return meta, "\n".join(lines[end + 1 :])


def _tools(value: Any) -> tuple[str, ...] | None:
    if value is None or value == "*" or value == ["*"]:
        return None
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(item, str) for item in items):
        raise IdentityError("tools must be a comma-separated string or a list of names")
    names = [item.strip() for item in items if item.strip()]
    return tuple(TOOL_ALIASES.get(name.lower(), name) for name in names)


def _model(value: Any) -> str:
    text = str(value or "main").strip()
    return MODEL_ALIASES.get(text.lower(), text)


def _positive_int(value: Any, key: str, default: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise IdentityError(f"{key} must be a positive integer, got {value!r}")
    return value


def _timeout(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise IdentityError(f"timeout must be a positive number of seconds, got {value!r}")
    return float(value)


def _flag(value: Any) -> bool:
    if value is None or isinstance(value, bool):
        return bool(value)
    raise IdentityError(f"read_only must be true or false, got {value!r}")


def _name(identity: Identity) -> str:
    return identity.name
