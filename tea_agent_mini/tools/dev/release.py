"""toolkit_release_version: bump the project's version and add a dated CHANGELOG.md entry."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import tool
from tea_agent_mini.tools.dev.project import VERSION_RE, version_file
from tea_agent_mini.tools.dev.tomlreader import TomlDecodeError, load_toml
from tea_agent_mini.tools.files import undo
from tea_agent_mini.tools.files.fileio import read_utf8, write_atomic

_BUMPABLE = re.compile(r"^(\d+)(?:\.(\d+))?(?:\.(\d+))?")
_VALID = re.compile(r"^\d+(\.\d+)*[0-9A-Za-z.+!-]*$")
_VERSION_FILES = ("_version.py", "__version__.py", "version.py", "__init__.py")
# (file, current version, the file's text with a new version put in)
Located = tuple[Path, str, Callable[[str], str]]


def bump(version: str, part: str) -> str:
    """``1.2.3`` -> 1.2.4 (patch), 1.3.0 (minor), 2.0.0 (major); suffixes like rc1 are dropped."""
    match = _BUMPABLE.match(version.strip())
    if not match:
        raise ToolError(f"cannot bump {version!r}: it does not start with MAJOR.MINOR.PATCH")
    major, minor, patch = (int(group or 0) for group in match.groups())
    if part == "major":
        return f"{major + 1}.0.0"
    if part == "minor":
        return f"{major}.{minor + 1}.0"
    if part == "patch":
        return f"{major}.{minor}.{patch + 1}"
    raise ToolError(f"unknown part {part!r}; use patch, minor, major or set")


def changelog_entry(version: str, notes: str | None, today: dt.date) -> str:
    lines = [line.rstrip() for line in (notes or "").strip().splitlines()]
    bullets = [
        line if not line.strip() or line.lstrip().startswith(("-", "*", "#")) else f"- {line}"
        for line in lines
    ]
    body = "\n".join(bullets) if bullets else f"- Release {version}"
    return f"## [{version}] - {today.isoformat()}\n\n{body}\n"


def prepend_entry(text: str | None, entry: str) -> str:
    """The changelog with ``entry`` before the first release heading (after any title)."""
    if not text:
        return f"# Changelog\n\n{entry}"
    match = re.search(r"^## ", text, re.MULTILINE)
    if match:
        return text[: match.start()] + entry + "\n" + text[match.start() :]
    return text.rstrip("\n") + "\n\n" + entry


@tool("toolkit_release_version", mutates=True)
def toolkit_release_version(
    ctx: ToolContext,
    part: Literal["patch", "minor", "major", "set"] = "patch",
    version: str | None = None,
    changelog: str | None = None,
    path: str = ".",
) -> str:
    """Bump the project version and record it in CHANGELOG.md. part: patch (1.2.3 -> 1.2.4),
    minor (-> 1.3.0), major (-> 2.0.0) or set (with `version`). The version is changed where
    it lives: pyproject.toml [project].version (or [tool.poetry].version), or for a dynamic
    version the __version__ = '...' file that hatch or setuptools point to (else a package
    _version.py / __init__.py). A dated '## [version] - YYYY-MM-DD' entry with the
    `changelog` lines is put at the top of CHANGELOG.md (created if missing).

    Args:
        part: which part of the version to bump, or set an explicit version
        version: [set] the new version
        changelog: what changed, one item per line (they become '- ' bullets)
        path: project directory (default '.')
    """
    root = ctx.resolve(path or ".", must_exist=True)
    source, current, replace = find_version(ctx, root)
    if part == "set":
        if not version or not _VALID.match(version.strip()):
            raise ToolError("part 'set' needs a version like '1.4.0' or '2.0.0rc1'")
        new = version.strip()
        if new == current:
            raise ToolError(f"the version is already {current}")
    else:
        new = bump(current, part)
    changelog_path = root / "CHANGELOG.md"
    befores = undo.capture([source, changelog_path])
    write_atomic(source, replace(new).encode("utf-8"), label=ctx.relative(source))
    old_log = read_utf8(changelog_path, "CHANGELOG.md") if changelog_path.exists() else None
    entry = changelog_entry(new, changelog, dt.date.today())
    write_atomic(changelog_path, prepend_entry(old_log, entry).encode("utf-8"))
    note = undo.record(ctx, f"release {new}", befores)
    return (
        f"version {current} -> {new} in {ctx.relative(source)}\n"
        f"{ctx.relative(changelog_path)}: added\n{entry}{note}"
    )


def find_version(ctx: ToolContext, root: Path) -> Located:
    """Where the project keeps its version."""
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            data, _ = load_toml(pyproject)
        except (TomlDecodeError, UnicodeDecodeError) as exc:
            raise ToolError(f"cannot parse {ctx.relative(pyproject)}: {exc}") from exc
        for table, section in (
            (data.get("project", {}), "project"),
            (data.get("tool", {}).get("poetry", {}), "tool.poetry"),
        ):
            if isinstance(table.get("version"), str):
                return _toml_version(ctx, pyproject, section, table["version"])
        found = version_file(root, data)
        if found is not None:
            return _python_version(ctx, ctx.resolve(str(found), must_exist=True))
    for candidate in _package_files(root):
        text = candidate.read_text(encoding="utf-8", errors="replace")
        if VERSION_RE.search(text):
            return _python_version(ctx, ctx.resolve(str(candidate)))
    raise ToolError(
        f"no version found in {ctx.relative(root)}: expected pyproject.toml [project].version "
        "or a __version__ = '...' line in the package"
    )


def _toml_version(ctx: ToolContext, file: Path, section: str, current: str) -> Located:
    text = read_utf8(file, ctx.relative(file))
    header = re.search(rf"^\[{re.escape(section)}\][ \t]*(#.*)?$", text, re.MULTILINE)
    if header is None:
        raise ToolError(f"cannot find the [{section}] table in {ctx.relative(file)} to edit")
    following = re.search(r"^\[", text[header.end() :], re.MULTILINE)
    end = header.end() + following.start() if following else len(text)
    line = re.compile(r"""^(version\s*=\s*)(["'])([^"']*)\2""", re.MULTILINE)
    match = line.search(text, header.end(), end)
    if match is None:
        raise ToolError(f"cannot find 'version = ...' in [{section}] of {ctx.relative(file)}")

    def replace(new: str) -> str:
        quote = match.group(2)
        return text[: match.start()] + f"{match.group(1)}{quote}{new}{quote}" + text[match.end() :]

    return file, current, replace


def _python_version(ctx: ToolContext, file: Path) -> Located:
    text = read_utf8(file, ctx.relative(file))
    match = VERSION_RE.search(text)
    if match is None:
        raise ToolError(f"{ctx.relative(file)} has no __version__ = '...' line")

    def replace(new: str) -> str:
        quote = match.group(2)
        return text[: match.start()] + f"{match.group(1)}{quote}{new}{quote}" + text[match.end() :]

    return file, match.group(3), replace


def _package_files(root: Path) -> list[Path]:
    found = []
    for base in (root, root / "src"):
        if not base.is_dir():
            continue
        for package in sorted(p for p in base.iterdir() if (p / "__init__.py").is_file()):
            found += [package / name for name in _VERSION_FILES if (package / name).is_file()]
    return found
