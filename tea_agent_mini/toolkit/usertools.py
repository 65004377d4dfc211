"""User tools in the live Toolkit: loading, reloading and dropping them as their files change.

At startup the runtime calls ``sync_user_tools(toolkit, home)`` after loading the built-ins;
``toolkit_reload`` calls it again, and the tools that save or roll back a tool
(``tools/selfmade.py``) register it at once with :func:`activate`. Files and versions are
``userstore``'s; the code convention is ``usercode``'s.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tea_agent_mini.errors import StoreError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import Toolkit, ToolSpec
from tea_agent_mini.toolkit.usercode import UserToolError
from tea_agent_mini.toolkit.userstore import (
    ORIGIN_ATTR,
    Origin,
    ToolMeta,
    UserToolStore,
    forget_module,
    load_file,
    module_origin,
    self_made_spec,
)

LOAD_ERROR_PREFIX = "user tool "

log = logging.getLogger(__name__)


@dataclass
class SyncReport:
    """What ``sync_user_tools`` did, by tool name (errors by file stem)."""

    loaded: list[str] = field(default_factory=list)
    reloaded: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)

    def render(self) -> str:
        parts = []
        for label, names in (
            ("loaded", self.loaded),
            ("reloaded", self.reloaded),
            ("removed", self.removed),
            ("unchanged", self.unchanged),
        ):
            if names:
                parts.append(f"{label}: {', '.join(sorted(names))}")
        lines = ["; ".join(parts) if parts else "no user tools found"]
        lines += [f"failed {stem}: {error}" for stem, error in sorted(self.errors.items())]
        return "\n".join(lines)


def sync_user_tools(toolkit: Toolkit, home: Path) -> SyncReport:
    """Bring the toolkit's user tools in line with ``<home>/tools``.

    New files are loaded, files changed since they were loaded (mtime or size) are reloaded,
    tools whose file is gone are removed. A file that fails keeps its previously loaded version,
    if any. Built-in tools are never replaced. Errors also land in ``toolkit.load_errors``.
    """
    store = UserToolStore(home)
    report = SyncReport()
    loaded = _loaded_by_file(toolkit)
    stems = store.stems()
    for stem in set(loaded) - set(stems):
        for spec in loaded[stem]:
            _drop(toolkit, spec)
            report.removed.append(spec.name)
        toolkit.load_errors.pop(LOAD_ERROR_PREFIX + stem, None)
    for stem in stems:
        current = loaded.get(stem, [])
        stamp = store.stamp(stem)
        if current and all(module_origin(s) == Origin(stem, stamp) for s in current):
            report.unchanged += [s.name for s in current]
            continue
        try:
            specs = load_file(store, stem)
            install(toolkit, specs, replacing=current)
        except UserToolError as exc:
            message = str(exc) + (" (the previously loaded version stays)" if current else "")
            report.errors[stem] = message
            toolkit.load_errors[LOAD_ERROR_PREFIX + stem] = message
            continue
        toolkit.load_errors.pop(LOAD_ERROR_PREFIX + stem, None)
        (report.reloaded if current else report.loaded).extend(s.name for s in specs)
        gone = {s.name for s in current} - {s.name for s in specs}
        report.removed += sorted(gone)
    return report


def _loaded_by_file(toolkit: Toolkit) -> dict[str, list[ToolSpec]]:
    by_file: dict[str, list[ToolSpec]] = {}
    for spec in toolkit.specs():
        origin = module_origin(spec)
        if origin is not None:
            by_file.setdefault(origin.stem, []).append(spec)
    return by_file


def install(
    toolkit: Toolkit, specs: Sequence[ToolSpec], replacing: Sequence[ToolSpec] = ()
) -> None:
    """Register ``specs`` in place of ``replacing``. Raises UserToolError on a name clash with a
    built-in or with another user file (then nothing changes)."""
    with toolkit.lock:  # the clash check and the change as one step
        replaced = {s.name for s in replacing}
        for spec in specs:
            existing = toolkit.get(spec.name)
            if existing is None or spec.name in replaced:
                continue
            for module in {s.module for s in specs}:
                forget_module(module)
            origin = module_origin(existing)
            if origin is None:
                raise UserToolError(f"{spec.name!r} would shadow the built-in tool of that name")
            raise UserToolError(f"{spec.name!r} is already defined by {origin.stem}.py")
        new_names = {s.name for s in specs}
        for old in replacing:
            if old.name not in new_names:
                toolkit.unregister(old.name)
        for spec in specs:
            toolkit.replace(spec)
        for module in {s.module for s in replacing} - {s.module for s in specs}:
            forget_module(module)


def _drop(toolkit: Toolkit, spec: ToolSpec) -> None:
    toolkit.unregister(spec.name)
    forget_module(spec.module)


def live_toolkit(ctx: ToolContext) -> Toolkit | None:
    return getattr(ctx, "toolkit", None)


def check_name_free(toolkit: Toolkit | None, name: str) -> None:
    """Refuse a name the live toolkit gives to a built-in or to another user tool file."""
    existing = toolkit.get(name) if toolkit is not None else None
    if existing is None:
        return
    origin = module_origin(existing)
    if origin is None:
        raise UserToolError(f"{name!r} is a built-in tool; choose another name")
    if origin.stem != name:
        raise UserToolError(f"{name!r} is already defined by {origin.stem}.py; choose another name")


def activate(ctx: ToolContext, store: UserToolStore, meta: ToolMeta, module: Any) -> str:
    """Register a just-written tool in the live toolkit (and share it with the other instances
    on the same PostgreSQL); returns a note for the model."""
    share_tool(ctx, meta.name)
    toolkit = live_toolkit(ctx)
    if toolkit is None:
        forget_module(module.__name__)
        return "There is no live toolkit in this context, so it loads at the next start."
    setattr(module, ORIGIN_ATTR, Origin(meta.name, store.stamp(meta.name)))
    current = toolkit.get(meta.name)
    install(toolkit, [self_made_spec(meta, module)], [current] if current else [])
    toolkit.load_errors.pop(LOAD_ERROR_PREFIX + meta.name, None)
    return f"It is registered: call {meta.name} now."


def share_tool(ctx: ToolContext, name: str) -> None:
    """Publish the tool's live files through the store when it is PostgreSQL (the others load
    them at their next turn, ``home_sync.catch_up``); a failure is logged, the tool stays saved."""
    shared = ctx.store.shared if ctx.store is not None else None
    if shared is None or not shared.enabled:
        return
    try:
        shared.publish(ctx.home, [f"tools/{name}.py", f"tools/{name}.json"], "user_tools")
    except (StoreError, ValueError, OSError) as exc:
        log.warning("cannot share the tool %s with the other instances: %s", name, exc)


def tool_inventory(toolkit: Toolkit) -> list[tuple[ToolSpec, bool]]:
    """Every installed tool, with whether it is one of the user's own (for the evolution pass)."""
    return [(spec, module_origin(spec) is not None) for spec in toolkit.specs()]
