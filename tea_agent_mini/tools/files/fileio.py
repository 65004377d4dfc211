"""File reads and atomic writes shared by the editing tools (save_file, diff, batch, release)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from tea_agent_mini.errors import ToolError
from tea_agent_mini.tools.files.files import BINARY_SNIFF_BYTES, is_binary


def write_atomic(path: Path, data: bytes, *, label: str = "") -> None:
    """Replace ``path`` with ``data`` in one step: readers see the old or the new file, never
    half of it. Parent directories are created; an existing file keeps its permissions."""
    name = label or path.name
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        mode = path.stat().st_mode & 0o7777 if path.exists() else None
        fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise ToolError(f"cannot write '{name}': {exc.strerror or exc}") from exc
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, path)
    except OSError as exc:
        _remove_quietly(Path(temp))
        raise ToolError(f"cannot write '{name}': {exc.strerror or exc}") from exc


def _remove_quietly(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


def read_utf8(path: Path, label: str) -> str:
    """A text file's content (line ends untouched). Raises ToolError for missing, binary or
    non-UTF-8 files."""
    if not path.is_file():
        raise ToolError(f"'{label}' does not exist or is not a file")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ToolError(f"cannot read '{label}': {exc.strerror or exc}") from exc
    if is_binary(data[:BINARY_SNIFF_BYTES]):
        raise ToolError(f"'{label}' is a binary file; it cannot be edited as text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(f"'{label}' is not UTF-8 text ({exc.reason} at byte {exc.start})") from exc


def read_bytes_or_none(path: Path) -> bytes | None:
    """The file's bytes, or None when there is no file (what an undo snapshot records)."""
    try:
        return path.read_bytes() if path.is_file() else None
    except OSError as exc:
        raise ToolError(f"cannot read '{path.name}': {exc.strerror or exc}") from exc
