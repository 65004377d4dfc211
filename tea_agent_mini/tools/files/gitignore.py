"""The common subset of .gitignore matching, and glob patterns with ``**``.

Supported: ``*``, ``?``, ``[...]``, ``**`` (any number of directories), ``!`` negation, a trailing
``/`` (directories only), a leading or inner ``/`` (anchored to the .gitignore's directory),
``#`` comments and ``\\`` escapes. Deeper .gitignore files override shallower ones, and within
a file the last matching rule wins, as in git.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path


def glob_to_regex(pattern: str) -> str:
    """Regex source (without anchors) for a slash-separated glob where ``**`` spans directories."""
    out: list[str] = []
    i = 0
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("/**", i) and i + 3 == n:
            out.append("/.*")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "^") else i + 1)
            if end < 0:
                out.append(re.escape(c))
                i += 1
                continue
            body = pattern[i + 1 : end]
            if body[:1] in ("!", "^"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end + 1
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def compile_glob(pattern: str) -> re.Pattern[str]:
    """Full-match regex for a glob over slash-separated relative paths."""
    return re.compile(glob_to_regex(pattern.lstrip("/")) + r"\Z")


@dataclass(frozen=True)
class Rule:
    regex: re.Pattern[str]
    negated: bool
    dir_only: bool


def parse_rule(line: str) -> Rule | None:
    """One .gitignore line as a Rule; None for blanks and comments."""
    line = line.rstrip("\n").rstrip("\r")
    stripped = line.rstrip(" ")
    if line.endswith("\\ ") and len(line) - len(stripped) == 1:
        stripped = line  # an escaped trailing space is part of the pattern
    line = stripped
    if not line or line.startswith("#"):
        return None
    negated = line.startswith("!")
    if negated or line.startswith("\\!") or line.startswith("\\#"):
        line = line[1:]
    dir_only = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    body = glob_to_regex(line.lstrip("/"))
    prefix = "" if anchored or line.startswith("**/") else "(?:.*/)?"
    return Rule(re.compile(prefix + body + r"\Z"), negated, dir_only)


@dataclass(frozen=True)
class IgnoreFile:
    """The rules of one .gitignore; ``base`` is its directory relative to the search root."""

    base: str
    rules: tuple[Rule, ...]

    @classmethod
    def parse(cls, text: str, base: str = "") -> IgnoreFile:
        rules = tuple(r for r in map(parse_rule, text.splitlines()) if r is not None)
        return cls(base.strip("/"), rules)

    def match(self, relpath: str, is_dir: bool) -> bool | None:
        """True ignored, False re-included by a ``!`` rule, None when no rule speaks."""
        if self.base:
            if not relpath.startswith(self.base + "/"):
                return None
            relpath = relpath[len(self.base) + 1 :]
        for rule in reversed(self.rules):
            if rule.dir_only and not is_dir:
                continue
            if rule.regex.match(relpath):
                return not rule.negated
        return None


class IgnoreStack:
    """The .gitignore files in effect while walking down from a root directory."""

    def __init__(self, files: tuple[IgnoreFile, ...] = ()) -> None:
        self.files = files

    def with_dir(self, directory: Path, base: str) -> IgnoreStack:
        """The stack for ``directory`` (``base`` relative to the root): adds its .gitignore."""
        path = directory / ".gitignore"
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return self
        parsed = IgnoreFile.parse(text, base)
        return IgnoreStack((*self.files, parsed)) if parsed.rules else self

    def ignored(self, relpath: str, is_dir: bool) -> bool:
        for ignore_file in reversed(self.files):  # the deepest file has the last word
            verdict = ignore_file.match(relpath, is_dir)
            if verdict is not None:
                return verdict
        return False
