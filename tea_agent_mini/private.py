"""Files and folders that hold the user's data: only the user may read them.

Folders the agent creates (the home and those under it) are 0700; a folder that already exists
keeps the mode its owner gave it. Files are created 0600, and the database files are tightened
to 0600 even when they exist: SQLite gives its -wal and -shm files the database's mode, and
they hold the same conversations.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600


def private_dirs(path: Path) -> None:
    """Create ``path`` and its missing ancestors with mode 0700 (existing ones are untouched).

    Raises OSError when a folder cannot be created.
    """
    missing: list[Path] = []
    current = Path(path)
    while not current.exists() and current != current.parent:
        missing.append(current)
        current = current.parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):  # made meanwhile by another process
            folder.mkdir(mode=PRIVATE_DIR)


def private_file(path: Path) -> None:
    """Create ``path`` empty with mode 0600 when it does not exist; else set its mode to 0600.

    Raises OSError when it can do neither.
    """
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE))
    except FileExistsError:
        os.chmod(path, PRIVATE_FILE)


def tighten(path: Path) -> None:
    """Mode 0600 for ``path`` if it exists."""
    with contextlib.suppress(FileNotFoundError):
        os.chmod(path, PRIVATE_FILE)
