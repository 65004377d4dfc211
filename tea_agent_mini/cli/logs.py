"""``tea-agent-mini logs [-n N] [--follow]``: print the server's log, ``<home>/logs/server.log``.

``--follow`` keeps printing lines as the server writes them, across a rotation (the file is
opened again when it is replaced or shrinks), until interrupted.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import deque
from pathlib import Path
from typing import IO

from ..config import home_dir

POLL_SECONDS = 0.25
EXIT_OK, EXIT_MISSING = 0, 1


def cmd_logs(args: argparse.Namespace) -> int:
    from ..server.serverlog import log_path

    path = log_path(home_dir())
    if not path.is_file() and not args.follow:
        print(f"no server log at {path} yet ('tea-agent-mini serve' writes it)", file=sys.stderr)
        return EXIT_MISSING
    position = 0
    if path.is_file():
        with path.open("rb") as handle:
            sys.stdout.write(_tail(handle, max(0, args.lines)))
            sys.stdout.flush()
            position = handle.tell()
    if not args.follow:
        return EXIT_OK
    try:
        follow(path, position, sys.stdout)
    except KeyboardInterrupt:
        pass
    return EXIT_OK


def _tail(handle: IO[bytes], count: int) -> str:
    """The last ``count`` lines (all with 0), leaving ``handle`` at the end of the file."""
    lines: deque[bytes] = deque(handle, maxlen=count or None)
    return b"".join(lines).decode("utf-8", "replace")


def follow(path: Path, position: int, out: IO[str], *, stop: float = float("inf")) -> None:
    """Print what is written to ``path`` after ``position``, until ``stop`` (monotonic time)."""
    first = _identity(path)
    inode = first[0] if first else None
    while time.monotonic() < stop:
        current = _identity(path)
        if current is None:
            time.sleep(POLL_SECONDS)
            continue
        if current[0] != inode or current[1] < position:  # rotated, replaced or truncated
            inode, position = current[0], 0
        if current[1] > position:
            with path.open("rb") as handle:
                handle.seek(position)
                data = handle.read()
            # a line still being written is printed once it is whole
            whole = data[: data.rfind(b"\n") + 1]
            position += len(whole)
            out.write(whole.decode("utf-8", "replace"))
            out.flush()
        time.sleep(POLL_SECONDS)


def _identity(path: Path) -> tuple[int, int] | None:
    """(inode, size), or None while the file does not exist."""
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return stat.st_ino, stat.st_size
