"""Self-made tools: toolkit_save, toolkit_reload, toolkit_rollback, toolkit_list_versions.

A tool saved here is written to ``<home>/tools`` (see ``toolkit/userstore.py``) and registered
in the session's live Toolkit at once, so it can be called in the same session without a
restart, and gets a SKILL.md (``<home>/skills/tool-<name>/``: when to use it, its parameters,
an example call) so the skills find it too. The code convention is documented in
``toolkit/usercode.py``. The Toolkit is reached through ``ctx.toolkit``; without one the tool
is saved and loads at the next start.
"""

from __future__ import annotations

import json
from typing import Any

from tea_agent_mini.errors import ToolError
from tea_agent_mini.skills.loader import SkillFormatError
from tea_agent_mini.skills.toolskills import tool_skill_name, write_tool_skill
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import tool
from tea_agent_mini.toolkit.usercode import (
    UserToolError,
    check_schema,
    check_tool_name,
    validate_tool_code,
)
from tea_agent_mini.toolkit.userstore import (
    ToolMeta,
    UserToolStore,
    forget_module,
    load_module,
    now_iso,
)
from tea_agent_mini.toolkit.usertools import (
    activate,
    check_name_free,
    live_toolkit,
    sync_user_tools,
)


@tool("toolkit_save", mutates=True)
def toolkit_save(
    ctx: ToolContext,
    name: str,
    description: str,
    parameters: dict[str, Any] | str,
    code: str,
) -> str:
    """Create or upgrade a tool of your own; it is callable right away, in this session. The
    code defines one top-level function named after the tool, whose first parameter is ctx
    (the tool context: ctx.workspace, ctx.home, ctx.resolve(path)) and whose other parameters
    are the tool's arguments, e.g. `def word_count(ctx, text: str, unique: bool = False):
    ...`. Helper functions must start with '_'. Every parameter must be a property of the
    schema (those without a default in 'required'). Return a string or JSON-able data. Only
    installed modules can be imported. Saving again creates a new version; see
    toolkit_list_versions and toolkit_rollback. Saved tools always count as writing (they
    need approval and are not available in read-only mode); only the user can mark one
    read-only, by hand, with "read_only": true in its .json file.

    Args:
        name: tool name, a-z 0-9 _ (also the entry function's name); must not be a built-in
            tool's name
        description: what the tool does, for the model
        parameters: JSON schema of the arguments: {"type": "object", "properties": {...},
            "required": [...]}; properties must match the function parameters
        code: the Python source of the tool module
    """
    toolkit = live_toolkit(ctx)
    check_tool_name(name)
    check_name_free(toolkit, name)
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
    note = activate(ctx, store, meta, module)
    skill = describe_in_skill(ctx, meta)
    return f"Saved {name} v{meta.version} to {store.code_path(name)}{kept}. {note}{skill}"


def describe_in_skill(ctx: ToolContext, meta: ToolMeta) -> str:
    """Write the tool's SKILL.md (``skills/toolskills.py``); a note for the answer."""
    try:
        path = write_tool_skill(
            ctx.home, meta.name, meta.description, meta.parameters, meta.version
        )
    except (OSError, SkillFormatError) as exc:
        return f" (its SKILL.md could not be written: {exc})"
    if path is None:
        return f" (a skill of yours is named {tool_skill_name(meta.name)}: it was left alone)"
    return ""


def _schema_object(parameters: dict[str, Any] | str) -> Any:
    if isinstance(parameters, str):
        try:
            return json.loads(parameters)
        except ValueError as exc:
            raise UserToolError(f"parameters is not valid JSON: {exc}") from exc
    return parameters


@tool("toolkit_reload", mutates=True)
def toolkit_reload(ctx: ToolContext) -> str:
    """Re-scan the user tools folder (~/.tea_agent/tools): load new tool files, reload changed
    ones and drop deleted ones, in this session. Reports each file that fails to load."""
    toolkit = live_toolkit(ctx)
    if toolkit is None:
        raise ToolError("there is no live toolkit in this context; tools load at the next start")
    return sync_user_tools(toolkit, ctx.home).render()


@tool("toolkit_rollback", mutates=True)
def toolkit_rollback(ctx: ToolContext, name: str, version: int) -> str:
    """Make an earlier saved version of one of your tools the live one again (takes effect at
    once). Later versions are kept, so you can roll forward too. See toolkit_list_versions.

    Args:
        name: the tool's name
        version: the version number to restore
    """
    store = UserToolStore(ctx.home)
    check_name_free(live_toolkit(ctx), name)
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
    note = activate(ctx, store, meta, module)
    skill = describe_in_skill(ctx, meta)
    return f"Rolled {name} back from v{live.version} to v{version}. {note}{skill}"


@tool("toolkit_list_versions", concurrency_safe=True)
def toolkit_list_versions(ctx: ToolContext, name: str = "") -> str:
    """List the saved versions of one of your tools (which one is live), or without a name,
    all your tools with their live version.

    Args:
        name: the tool's name (optional)
    """
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
