"""Markdown files with optional YAML front matter: the storage of commands and the knowledge base.

Shared by ``commands.py`` and ``knowledge.py``; writes are atomic (temp file, then rename) so a
crash never leaves half a document.
"""

from __future__ import annotations

import os
import re
import tempfile
import unicodedata
from pathlib import Path
from typing import Any

from tea_agent_mini.errors import ToolError

_UNSAFE = re.compile(r"[^\w.-]+")
MAX_SLUG = 80


def slugify(text: str) -> str:
    """A file-name-safe form of ``text``: letters (any script), digits, '-', '_' and '.'."""
    folded = unicodedata.normalize("NFKC", text).strip().lower()
    slug = _UNSAFE.sub("-", folded).strip("-.")[:MAX_SLUG].strip("-.")
    return slug


def split_document(text: str, *, lenient: bool = False) -> tuple[dict[str, Any], str]:
    """(front matter, body); a text without front matter is all body.

    Raises ToolError when the front matter is there but is not a YAML mapping, unless
    ``lenient``: then its ``key: value`` lines are read as plain strings (files written for
    other tools hold values like ``[file] [line]`` that are not valid YAML).
    """
    stripped = text.lstrip("\ufeff")
    if not stripped.startswith("---"):
        return {}, stripped
    from tea_agent_mini.skills.loader import SkillFormatError, split_front_matter

    try:
        return split_front_matter(stripped)
    except SkillFormatError as exc:
        if not lenient:
            raise ToolError(str(exc)) from exc
        return _plain_front_matter(stripped)


def _plain_front_matter(text: str) -> tuple[dict[str, Any], str]:
    lines = text.replace("\r\n", "\n").split("\n")
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() == "---"), None)
    if end is None:
        return {}, text
    meta: dict[str, Any] = {}
    for line in lines[1:end]:
        key, colon, value = line.partition(":")
        if colon and key.strip() and not key.startswith((" ", "\t")):
            meta[key.strip()] = value.strip().strip("'\"")
    return meta, "\n".join(lines[end + 1 :])


def join_document(meta: dict[str, Any], body: str) -> str:
    import yaml

    if not meta and not body.lstrip().startswith("---"):
        return body.strip() + "\n"
    front = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=100)
    return f"---\n{front}---\n\n{body.strip()}\n"


def read_document(path: Path, *, lenient: bool = False) -> tuple[dict[str, Any], str]:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ToolError(f"cannot read {path}: {exc.strerror or exc}") from exc
    return split_document(text, lenient=lenient)


def write_document(path: Path, meta: dict[str, Any], body: str) -> None:
    write_text_atomic(path, join_document(meta, body))


def write_text_atomic(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as out:
                out.write(text)
            os.replace(temp, path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise ToolError(f"cannot write {path}: {exc.strerror or exc}") from exc


def string_list(value: Any) -> list[str]:
    """Front-matter tags/args as a list: a YAML list or a comma-separated string."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, (list, tuple)):
        return [str(part).strip() for part in value if str(part).strip()]
    return []
