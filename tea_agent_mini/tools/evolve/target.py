"""What toolkit_self_evolve may change, and the new text a change gives.

A target is a file in the workspace (relative paths start there; the workspace confinement
applies) or one of the user's own tools (``tool:<name>``, or a path in ``<home>/tools``). Never
a file of the installed tea_agent_mini package, however it is reached (its real path is
compared, so a symlink does not help), and nothing else in the home directory (the store,
configs, the tools' ``.versions``).

A change is one of::

    {"old": "exact text", "new": "replacement"}      mode "replace": one exact occurrence
    {"diff": "--- a/x.py\\n+++ b/x.py\\n@@ ..."}       mode "patch": a unified diff of this file
    {"content": "the whole file"}                     mode "write": the file's new text

``mode`` may name which; without it the keys say. A string is read as JSON, or as a diff when
it looks like one.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext, is_within
from tea_agent_mini.toolkit.userstore import TOOLS_DIR, VERSIONS_DIR
from tea_agent_mini.tools.files import patch as patching
from tea_agent_mini.tools.files.diffs import replace_unique

TOOL_PREFIX = "tool:"
MODES = {"replace": ("old", "new"), "patch": ("diff",), "write": ("content",)}
ALIASES = {"old_string": "old", "new_string": "new", "patch": "diff", "text": "content"}
PROJECT_MARKERS = (".git", "pyproject.toml", "setup.py", "setup.cfg", "tests")


def package_root() -> Path:
    """The real folder of the installed tea_agent_mini package (this file is inside it)."""
    return Path(os.path.realpath(Path(__file__).resolve().parents[2]))


@dataclass(frozen=True)
class Target:
    path: Path  # real, absolute
    shown: str  # as the report names it
    root: Path  # the project it belongs to: git, lint and tests run there
    user_tool: str | None = None  # the file stem, for a file in <home>/tools


def resolve_target(ctx: ToolContext, path: str) -> Target:
    """Where ``path`` points, if toolkit_self_evolve may change it. Raises ToolError."""
    text = path.strip()
    if not text:
        raise ToolError("path is empty: name a file of the workspace, or tool:<name>")
    tools = Path(os.path.realpath(ctx.home / TOOLS_DIR))
    if text.startswith(TOOL_PREFIX):
        name = text[len(TOOL_PREFIX) :].strip().removesuffix(".py")
        resolved = Path(os.path.realpath(tools / f"{name}.py"))
        if not name or resolved.parent != tools or not resolved.is_file():
            raise ToolError(f"you have no tool file {name}.py in {tools}")
    else:
        candidate = Path(os.path.expanduser(text))
        resolved = Path(os.path.realpath(candidate))
        if not (candidate.is_absolute() and is_within(resolved, tools)):
            resolved = ctx.resolve(text)
    _refuse_protected(ctx, resolved, tools)
    if resolved.is_dir():
        raise ToolError(f"'{text}' is a directory; name one file")
    if is_within(resolved, tools):
        return Target(resolved, f"{TOOLS_DIR}/{resolved.name}", tools, resolved.stem)
    workspace = Path(os.path.realpath(ctx.workspace))
    return Target(resolved, ctx.relative(resolved), project_root(resolved, workspace))


def _refuse_protected(ctx: ToolContext, resolved: Path, tools: Path) -> None:
    package = package_root()
    if is_within(resolved, package):
        raise ToolError(
            f"{resolved} belongs to the installed tea_agent_mini package ({package}), which is "
            "never modified; change a copy in the workspace, or make a tool of your own"
        )
    home = Path(os.path.realpath(ctx.home))
    if is_within(resolved, tools):
        if resolved.parent != tools or resolved.suffix != ".py":
            raise ToolError(
                f"in {tools} only the tools' .py files can be changed (not {VERSIONS_DIR} or "
                "metadata)"
            )
    elif is_within(resolved, home):
        raise ToolError(f"{resolved} is the agent's own data ({home}); it is not changed this way")


def project_root(path: Path, workspace: Path) -> Path:
    """The nearest folder from the file up to the workspace that looks like a project (a git
    repository, a pyproject.toml, a tests folder ...); the workspace when none does."""
    folder = path.parent
    while is_within(folder, workspace) and folder != workspace:
        if any((folder / marker).exists() for marker in PROJECT_MARKERS):
            return folder
        folder = folder.parent
    return workspace


def parse_change(change: dict[str, Any] | str) -> tuple[str, dict[str, str]]:
    """(mode, fields) of a change (see the module docstring). Raises ToolError."""
    if isinstance(change, str):
        stripped = change.lstrip()
        if stripped.startswith(("---", "@@", "diff ")):
            return "patch", {"diff": change}
        try:
            change = json.loads(change)
        except ValueError as exc:
            raise ToolError(f"change is neither a JSON object nor a unified diff: {exc}") from exc
    if not isinstance(change, dict):
        raise ToolError('change must be an object such as {"old": "...", "new": "..."}')
    fields = {ALIASES.get(str(k), str(k)): v for k, v in change.items()}
    mode = str(fields.pop("mode", "") or "")
    if not mode:
        found = [m for m, keys in MODES.items() if keys[0] in fields]
        if len(found) != 1:
            raise ToolError(
                'change needs one of: {"old", "new"} (replace), {"diff"} (patch) or '
                '{"content"} (write)'
            )
        mode = found[0]
    if mode not in MODES:
        raise ToolError(f"unknown change mode {mode!r}; use replace, patch or write")
    unknown = sorted(set(fields) - set(MODES[mode]))
    missing = [key for key in MODES[mode] if not isinstance(fields.get(key), str)]
    if unknown or missing:
        raise ToolError(
            f"a {mode} change takes {', '.join(MODES[mode])} (as strings)"
            + (f"; missing: {', '.join(missing)}" if missing else "")
            + (f"; unknown: {', '.join(unknown)}" if unknown else "")
        )
    return mode, {key: fields[key] for key in MODES[mode]}


def new_text(mode: str, fields: dict[str, str], current: str | None, shown: str) -> str:
    """The file's text after the change. Raises ToolError when it does not apply."""
    if mode == "write":
        return fields["content"]
    if current is None:
        raise ToolError(f"'{shown}' does not exist; create it with {{\"content\": ...}}")
    if mode == "replace":
        return replace_unique(current, fields["old"], fields["new"], shown)
    return _patched(current, fields["diff"], shown)


def _patched(current: str, diff: str, shown: str) -> str:
    if not any(line.startswith("--- ") for line in diff.splitlines()):
        diff = f"--- a/{shown}\n+++ b/{shown}\n{diff}"
    patches = patching.parse_patch(diff)
    if len(patches) != 1 or patches[0].new_path is None or patches[0].old_path is None:
        raise ToolError("the diff must change exactly this one file (no new or deleted files)")
    eol = "\r\n" if "\r\n" in current else "\n"
    text = current.replace("\r\n", "\n")
    lines = text.split("\n") if text else []
    final_newline = text.endswith("\n")
    if final_newline:
        lines.pop()
    hunks = patches[0].hunks
    new_lines = patching.apply_hunks(lines, hunks, shown)
    if hunks and hunks[-1].no_newline_new:
        final_newline = False
    elif hunks and hunks[-1].no_newline_old:
        final_newline = True
    return eol.join(new_lines) + (eol if final_newline and new_lines else "")
