"""A runtime's side of the files several instances on one PostgreSQL share (issue 17).

``store/shared.py`` keeps the files (a profile saved, a self-made tool) with a version number.
An instance shares what it saved (:func:`share_files`) and, before each turn, takes what the
others shared since it last looked (:func:`catch_up`: one version-row read when nothing
changed): self-made tools reach its live toolkit, a changed profile of its own is adopted. On
SQLite there is one instance and nothing to do.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from .errors import ConfigError, StoreError

if TYPE_CHECKING:
    from .runtime import Runtime

log = logging.getLogger(__name__)


def catch_up(runtime: Runtime) -> list[str]:
    """Apply what the other instances shared since the last call; the paths (relative to the
    home) that changed here."""
    if runtime.store.db.dialect != "postgresql":
        return []
    home = runtime.config.home
    try:
        changed = runtime.store.shared.catch_up(home)
    except StoreError as exc:
        log.warning("cannot read the files other instances shared: %s", exc)
        return []
    if not changed:
        return []
    if any(file.kind == "user_tools" for file in changed) and runtime.built("toolkit"):
        from .toolkit.usertools import sync_user_tools

        sync_user_tools(runtime.toolkit, home)
    paths = [file.path for file in changed]
    if runtime.profile_file() in paths:
        try:
            runtime.adopt(runtime.reload_config())
        except ConfigError as exc:
            log.warning("the shared profile %s is not valid here: %s", runtime.config.profile, exc)
    return paths


def share_files(runtime: Runtime, paths: list[str], kind: str) -> int:
    """Share these files of the home with the other instances; the new version, 0 on SQLite.
    A failure is logged, never raised: the file is saved here either way."""
    try:
        return runtime.store.shared.publish(runtime.config.home, paths, kind)
    except (StoreError, ValueError, OSError) as exc:
        log.warning("cannot share %s with the other instances: %s", ", ".join(paths), exc)
        return 0
