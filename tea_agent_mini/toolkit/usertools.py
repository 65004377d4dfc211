"""Self-made tools: toolkit_save, toolkit_reload, toolkit_rollback, toolkit_list_versions.

A tool saved here is written to ``<home>/tools`` (see ``userstore``) and registered in the
session's live Toolkit at once, so it can be called in the same session without a restart.
The code convention is documented in ``usercode``. The Toolkit is reached through
``ctx.toolkit``; without one the tool is saved and loads at the next start.

At startup the runtime calls ``sync_user_tools(toolkit, home)`` after loading the built-ins.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import Toolkit, ToolSpec, tool
from tea_agent_mini.toolkit.usercode import (
    UserToolError,
    check_schema,
    check_tool_name,
    validate_tool_code,
)
from tea_agent_mini.toolkit.userstore import (
    ORIGIN_ATTR,
    Origin,
    ToolMeta,
    UserToolStore,
    forget_module,
    load_file,
    load_module,
    module_origin,
    now_iso,
    self_made_spec,
)

LOAD_ERROR_PREFIX = "user tool "


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


def _live_toolkit(ctx: ToolContext) -> Toolkit | None:
    return getattr(ctx, "toolkit", None)


def _check_name_free(toolkit: Toolkit | None, name: str) -> None:
    """Refuse a name the live toolkit gives to a built-in or to another user tool file."""
    existing = toolkit.get(name) if toolkit is not None else None
    if existing is None:
        return
    origin = module_origin(existing)
    if origin is None:
        raise UserToolError(f"{name!r} is a built-in tool; choose another name")
    if origin.stem != name:
        raise UserToolError(f"{name!r} is already defined by {origin.stem}.py; choose another name")


def _activate(ctx: ToolContext, store: UserToolStore, meta: ToolMeta, module: Any) -> str:
    """Register a just-written tool in the live toolkit; returns a note for the model."""
    toolkit = _live_toolkit(ctx)
    if toolkit is None:
        forget_module(module.__name__)
        return "There is no live toolkit in this context, so it loads at the next start."
    setattr(module, ORIGIN_ATTR, Origin(meta.name, store.stamp(meta.name)))
    current = toolkit.get(meta.name)
    install(toolkit, [self_made_spec(meta, module)], [current] if current else [])
    toolkit.load_errors.pop(LOAD_ERROR_PREFIX + meta.name, None)
    return f"It is registered: call {meta.name} now."


SAVE_PARAMETERS = {
    "type": "object",
    "properties": {
        "name": {
            "type": "string",
            "description": "tool name, a-z 0-9 _ (also the entry function's name); must not "
            "be a built-in tool's name",
        },
        "description": {"type": "string", "description": "what the tool does, for the model"},
        "parameters": {
            "type": ["object", "string"],
            "description": 'JSON schema of the arguments: {"type": "object", "properties": '
            '{...}, "required": [...]}; properties must match the function parameters',
        },
        "code": {"type": "string", "description": "the Python source of the tool module"},
    },
    "required": ["name", "description", "parameters", "code"],
}


@tool(
    "toolkit_save",
    "Create or upgrade a tool of your own; it is callable right away, in this session. The code "
    "defines one top-level function named after the tool, whose first parameter is ctx (the "
    "tool context: ctx.workspace, ctx.home, ctx.resolve(path)) and whose other parameters are "
    "the tool's arguments, e.g. `def word_count(ctx, text: str, unique: bool = False): ...`. "
    "Helper functions must start with '_'. Every parameter must be a property of the schema "
    "(those without a default in 'required'). Return a string or JSON-able data. Only installed "
    "modules can be imported. Saving again creates a new version; see toolkit_list_versions "
    "and toolkit_rollback. Saved tools always count as writing (they need approval and are not "
    "available in read-only mode); only the user can mark one read-only, by hand, with "
    '"read_only": true in its .json file.',
    SAVE_PARAMETERS,
    mutates=True,
)
def toolkit_save(
    ctx: ToolContext,
    name: str,
    description: str,
    parameters: dict[str, Any] | str,
    code: str,
) -> str:
    toolkit = _live_toolkit(ctx)
    check_tool_name(name)
    _check_name_free(toolkit, name)
    if not description.strip():
        raise UserToolError("description is empty: say what the tool does")
    schema = check_schema(_schema_object(parameters))
    validate_tool_code(name, code, schema)
    store = UserToolStore(ctx.home)
    if store.code_path(name).exists() and not store.meta_path(name).exists():
        raise UserToolError(
            f"{store.code_path(name)} exists and was not made by toolkit_save; choose another name"
        )
    module = load_module(name, code, store.code_path(name))  # a failing import saves nothing
    previous = store.read_meta(name)
    meta = ToolMeta(
        name=name,
        description=" ".join(description.split()),
        parameters=schema,
        version=store.next_version(name),
        created=now_iso(),
    )
    try:
        store.save(meta, code)
    except OSError as exc:
        forget_module(module.__name__)
        raise ToolError(f"could not write the tool files: {exc}") from exc
    kept = f" (v{previous.version} is kept)" if previous else ""
    note = _activate(ctx, store, meta, module)
    return f"Saved {name} v{meta.version} to {store.code_path(name)}{kept}. {note}"


def _schema_object(parameters: dict[str, Any] | str) -> Any:
    if isinstance(parameters, str):
        try:
            return json.loads(parameters)
        except ValueError as exc:
            raise UserToolError(f"parameters is not valid JSON: {exc}") from exc
    return parameters


@tool(
    "toolkit_reload",
    "Re-scan the user tools folder (~/.tea_agent/tools): load new tool files, reload changed "
    "ones and drop deleted ones, in this session. Reports each file that fails to load.",
    {"type": "object", "properties": {}},
    mutates=True,
)
def toolkit_reload(ctx: ToolContext) -> str:
    toolkit = _live_toolkit(ctx)
    if toolkit is None:
        raise ToolError("there is no live toolkit in this context; tools load at the next start")
    return sync_user_tools(toolkit, ctx.home).render()


@tool(
    "toolkit_rollback",
    "Make an earlier saved version of one of your tools the live one again (takes effect at "
    "once). Later versions are kept, so you can roll forward too. See toolkit_list_versions.",
    {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "the tool's name"},
            "version": {"type": "integer", "description": "the version number to restore"},
        },
        "required": ["name", "version"],
    },
    mutates=True,
)
def toolkit_rollback(ctx: ToolContext, name: str, version: int) -> str:
    store = UserToolStore(ctx.home)
    _check_name_free(_live_toolkit(ctx), name)
    live = store.read_meta(name)
    if live is None:
        raise UserToolError(f"{name!r} is not a tool made with toolkit_save")
    code, meta = store.read_version(name, version)
    validate_tool_code(name, code, meta.parameters)
    module = load_module(name, code, store.code_path(name))
    try:
        store.restore(name, version)
    except OSError as exc:
        forget_module(module.__name__)
        raise ToolError(f"could not write the tool files: {exc}") from exc
    note = _activate(ctx, store, meta, module)
    return f"Rolled {name} back from v{live.version} to v{version}. {note}"


@tool(
    "toolkit_list_versions",
    "List the saved versions of one of your tools (which one is live), or without a name, all "
    "your tools with their live version.",
    {
        "type": "object",
        "properties": {"name": {"type": "string", "description": "the tool's name (optional)"}},
    },
    concurrency_safe=True,
)
def toolkit_list_versions(ctx: ToolContext, name: str = "") -> str:
    store = UserToolStore(ctx.home)
    if not name.strip():
        return _list_tools(store)
    live = store.read_meta(name.strip())
    if live is None:
        raise UserToolError(f"{name!r} is not a tool made with toolkit_save")
    lines = [f"{live.name}: live version v{live.version}"]
    for version in store.versions(live.name):
        _, meta = store.read_version(live.name, version)
        mark = "  <- live" if version == live.version else ""
        lines.append(f"- v{version} ({meta.created}): {meta.description}{mark}")
    return "\n".join(lines)


def _list_tools(store: UserToolStore) -> str:
    lines = []
    for stem in store.stems():
        try:
            meta = store.read_meta(stem)
        except UserToolError as exc:
            lines.append(f"- {stem}: {exc}")
            continue
        if meta is None:
            lines.append(f"- {stem}.py: hand-written module (not versioned)")
        else:
            lines.append(f"- {meta.name} v{meta.version}: {meta.description}")
    return "\n".join(["Your tools:", *lines]) if lines else "You have no tools of your own yet."
