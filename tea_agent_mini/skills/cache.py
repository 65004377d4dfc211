"""Skills parsed once and read again only when their files change.

Every model request lists the skills in the system prompt; re-reading and YAML-parsing every
``SKILL.md`` for that was most of the cost of building a request. A :class:`SkillsCache` keeps the
catalog and, on each call, only looks at the on-disk skill folders: the folder listing, each skill
folder's and each ``SKILL.md``'s modification time (and size and inode, so that a same-second
rewrite or a replace by rename is seen). The bundled skills ship with the package and cannot
change while it runs.

    catalog = SkillsCache(home, workspace).catalog()   # the runtime keeps one (Runtime.skills)

What is not seen: a file added or removed in a *subfolder* of a skill (``Skill.files`` keeps
the old list until the skill folder itself or its ``SKILL.md`` changes), and a rewrite that keeps
the size, the inode and the modification time (possible on filesystems with a coarse clock).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from .loader import SKILL_FILE, SkillCatalog, load_skills, skill_dirs

__all__ = ["SkillsCache", "skills_stamp"]


_Stamp = tuple[tuple[str, tuple[object, ...]], ...]


def _stat(path: str | os.DirEntry[str]) -> tuple[int, int, int] | None:
    try:
        info = path.stat() if isinstance(path, os.DirEntry) else os.stat(path)
    except OSError:
        return None
    return (info.st_mtime_ns, info.st_size, info.st_ino)


def _folder_stamp(root: Path) -> tuple[object, ...]:
    """The root's own stamp, then (name, folder stamp, SKILL.md stamp) of each folder in it."""
    own = _stat(str(root))
    if own is None:
        return ()
    entries: list[tuple[object, ...]] = []
    try:
        with os.scandir(root) as listing:
            for entry in listing:
                if entry.is_dir():
                    skill_md = os.path.join(entry.path, SKILL_FILE)
                    entries.append((entry.name, _stat(entry), _stat(skill_md)))
    except OSError:
        return (own,)
    entries.sort(key=lambda item: str(item[0]))
    return (own, *entries)


def skills_stamp(home: Path | None, workspace: Path | None) -> _Stamp:
    """What changes when a skill in ``<home>/skills`` or the workspace's skills changes."""
    return tuple((source, _folder_stamp(root)) for source, root in skill_dirs(home, workspace))


class SkillsCache:
    """The skill catalog of ``home`` and ``workspace``, reloaded when :func:`skills_stamp`
    changes. Thread-safe; the catalog returned is shared: treat it as read-only."""

    def __init__(
        self, home: Path | None, workspace: Path | None = None, *, bundled: bool = True
    ) -> None:
        self.home = home
        self.workspace = workspace
        self.bundled = bundled
        self._lock = threading.Lock()
        self._stamp: _Stamp | None = None
        self._catalog: SkillCatalog | None = None
        self.loads = 0  # how many times the skills were read and parsed

    def catalog(self) -> SkillCatalog:
        # the stamp is taken before loading: a change during the load is seen by the next call
        stamp = skills_stamp(self.home, self.workspace)
        with self._lock:
            if self._catalog is None or stamp != self._stamp:
                self._catalog = load_skills(self.home, self.workspace, bundled=self.bundled)
                self._stamp = stamp
                self.loads += 1
            return self._catalog
