"""Files that several instances on one PostgreSQL share: config profiles and self-made tools.

The home stays on each machine, so what one instance saves there (a profile changed over the
API, a tool made with ``toolkit_save``) travels through the store: :meth:`publish` copies the
files' text into ``shared_files`` under a new version, and every instance calls
:meth:`catch_up` at the start of a turn. That costs one small query (the highest version) while
nothing changed; when it moved, the rows newer than the last version seen are written into the
local home (a file whose text is already the same is left alone; ``None`` deletes it), and the
caller reloads what they belong to (the runtime: the profile, ``sync_user_tools``).

Only on PostgreSQL: on SQLite one machine owns the home, both methods do nothing.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..private import private_dirs
from .database import Database

__all__ = ["KINDS", "SharedFile", "SharedFileRepository", "shareable"]

log = logging.getLogger(__name__)

KINDS = ("config", "user_tools")
# what may be written into a home from the store: a profile, a user tool's code or description
_SHAREABLE = re.compile(r"^(?:[A-Za-z0-9][A-Za-z0-9_.-]*\.yaml|tools/[a-z0-9_]+\.(?:py|json))$")
MAX_BYTES = 1_000_000


def shareable(path: str) -> bool:
    return _SHAREABLE.match(path) is not None


@dataclass(frozen=True)
class SharedFile:
    path: str  # relative to the home, with /
    kind: str
    content: str | None  # None: the file was deleted
    version: int
    origin: str = ""


class SharedFileRepository:
    def __init__(self, db: Database) -> None:
        self._db = db
        self._lock = threading.Lock()
        self.seen = 0  # the highest version this process has applied

    @property
    def enabled(self) -> bool:
        return self._db.dialect == "postgresql"

    def publish(self, home: Path, paths: Sequence[str], kind: str, origin: str = "") -> int:
        """Share the files at ``paths`` (relative to ``home``) as they are on disk now; the new
        version (0: not shared, on SQLite). A missing file is shared as deleted.

        Raises:
            ValueError: a path that is not shareable or an unknown kind.
            StoreError: the write failed.
        """
        if not self.enabled or not paths:
            return 0
        if kind not in KINDS:
            raise ValueError(f"unknown kind of shared file: {kind!r}")
        files = []
        for path in paths:
            if not shareable(path):
                raise ValueError(f"{path!r} cannot be shared")
            try:
                content: str | None = (home / path).read_text(encoding="utf-8")
            except FileNotFoundError:
                content = None
            if content is not None and len(content.encode()) > MAX_BYTES:
                raise ValueError(f"{path} is larger than {MAX_BYTES} bytes")
            files.append((path, content))
        with self._db.transaction() as tx:
            row = tx.query_one("SELECT COALESCE(MAX(version), 0) FROM shared_files")
            version = (int(row[0]) if row else 0) + 1
            for path, content in files:
                tx.execute(
                    "INSERT INTO shared_files (path, kind, content, version, origin, updated_at) "
                    "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (path) DO UPDATE SET kind = "
                    "excluded.kind, content = excluded.content, version = excluded.version, "
                    "origin = excluded.origin, updated_at = excluded.updated_at",
                    (path, kind, content, version, origin, tx.now()),
                )
        return version

    def version(self) -> int:
        row = self._db.query_one("SELECT COALESCE(MAX(version), 0) FROM shared_files")
        return int(row[0]) if row else 0

    def since(self, version: int) -> list[SharedFile]:
        rows = self._db.query(
            "SELECT path, kind, content, version, origin FROM shared_files WHERE version > ? "
            "ORDER BY version, path",
            (version,),
        )
        return [SharedFile(str(r[0]), str(r[1]), r[2], int(r[3]), str(r[4])) for r in rows]

    def catch_up(self, home: Path) -> list[SharedFile]:
        """Write into ``home`` the files shared since the last call; the ones that changed
        there. One query when nothing was shared meanwhile; nothing at all on SQLite."""
        if not self.enabled:
            return []
        with self._lock:
            if self.version() <= self.seen:
                return []
            files = self.since(self.seen)
            changed = [file for file in files if _apply(home, file)]
            if files:
                self.seen = max(file.version for file in files)
            return changed


def _apply(home: Path, file: SharedFile) -> bool:
    """Write (or delete) one shared file in ``home``; whether the file changed."""
    if not shareable(file.path):
        log.warning("ignored a shared file with an unexpected path: %r", file.path)
        return False
    target = home / file.path
    try:
        current: str | None = target.read_text(encoding="utf-8")
    except FileNotFoundError:
        current = None
    except OSError as exc:
        log.warning("cannot read %s to update it from the store: %s", target, exc)
        return False
    if current == file.content:
        return False
    try:
        if file.content is None:
            target.unlink(missing_ok=True)
            return True
        private_dirs(target.parent)
        temporary = target.with_name(f".{target.name}.{os.getpid()}.shared")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(file.content)
        os.replace(temporary, target)
    except OSError as exc:
        log.warning("cannot write %s from the store: %s", target, exc)
        return False
    log.info("updated %s from the store (version %d)", target, file.version)
    return True
