"""toolkit_custom_commands: reusable prompt templates (slash commands) kept as Markdown files.

A command is ``<name>.md`` in ``<home>/commands/`` (user) or ``<workspace>/.tea_agent/commands/``
(project; overrides a user command of the same name), with optional front matter
(``description``, ``argument-hint``) and a body where ``$ARGUMENTS`` (or ``$@``) is replaced by
all arguments, ``$1``, ``$2`` ... by single ones and ``${@:N}`` / ``${@:N:L}`` by a slice — the
convention of other agent CLIs, so their command files can be dropped in.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import tool
from tea_agent_mini.tools.mdfiles import read_document, write_document

Action = Literal["list", "get", "save", "delete", "render"]
ACTIONS: tuple[str, ...] = get_args(Action)
Scope = Literal["user", "project"]
SCOPES: tuple[str, ...] = get_args(Scope)
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
MAX_TEMPLATE = 64 * 1024
_PLACEHOLDER = re.compile(r"\$ARGUMENTS|\$\{@:(\d+)(?::(\d+))?\}|\$@|\$(\d+)")


@dataclass(frozen=True)
class Command:
    name: str
    template: str
    description: str
    argument_hint: str
    scope: str
    path: Path


def command_dirs(home: Path, workspace: Path) -> dict[str, Path]:
    """Where commands live, by scope; later scopes override earlier ones."""
    return {"user": home / "commands", "project": workspace / ".tea_agent" / "commands"}


def load_commands(home: Path, workspace: Path) -> dict[str, Command]:
    """Every command by name (a project command hides a user command of the same name)."""
    found: dict[str, Command] = {}
    for scope, folder in command_dirs(home, workspace).items():
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.md")):
            if NAME_RE.match(path.stem):
                found[path.stem] = _read(path, scope)
    return found


def _read(path: Path, scope: str) -> Command:
    try:
        meta, body = read_document(path, lenient=True)
    except ToolError as exc:
        meta, body = {"description": f"(unreadable: {exc})"}, ""
    hint = meta.get("argument-hint", meta.get("argument_hint", ""))
    if isinstance(hint, list):  # YAML reads ``[file]`` as a list; it was meant literally
        hint = " ".join(f"[{part}]" for part in hint)
    return Command(
        name=path.stem,
        template=body.strip(),
        description=str(meta.get("description") or "").strip(),
        argument_hint=str(hint or "").strip(),
        scope=scope,
        path=path,
    )


def render_template(template: str, args: str | list[str] | None) -> tuple[str, list[str]]:
    """(prompt, missing placeholders) with the arguments substituted in one pass.

    A string is split like a shell command line for ``$1`` ...; ``$ARGUMENTS`` gets it as
    written. A template without any placeholder gets the arguments appended.
    """
    if isinstance(args, list):
        positional = [str(arg) for arg in args]
        whole = " ".join(positional)
    else:
        whole = (args or "").strip()
        try:
            positional = shlex.split(whole)
        except ValueError:  # an unbalanced quote: fall back to plain words
            positional = whole.split()
    missing: list[str] = []

    def substitute(match: re.Match[str]) -> str:
        if match.group(3) is not None:
            index = int(match.group(3))
            if 1 <= index <= len(positional):
                return positional[index - 1]
            missing.append(match.group(0))
            return ""
        if match.group(1) is not None:
            start = max(int(match.group(1)) - 1, 0)
            length = int(match.group(2)) if match.group(2) is not None else None
            end = None if length is None else start + length
            return " ".join(positional[start:end])
        return whole

    rendered, count = _PLACEHOLDER.subn(substitute, template)
    if count == 0 and whole:
        rendered = f"{rendered.rstrip()}\n\nARGUMENTS: {whole}"
    return rendered, missing


@tool("toolkit_custom_commands", mutates=True, mutating_actions=("save", "delete"))
def toolkit_custom_commands(
    ctx: ToolContext,
    action: Action,
    name: str | None = None,
    template: str | None = None,
    description: str | None = None,
    args: str | list[str] | None = None,
    scope: Scope | None = None,
) -> str:
    """Reusable prompt templates (slash commands such as /review) stored as Markdown files.
    render turns a command and its arguments into the prompt to follow; save stores a new
    template for later; list shows what exists (user and project commands).

    Args:
        action: list the commands, get one's template, save (create or replace) one, delete
            one, or render one with arguments into a ready prompt
        name: the command's name, e.g. 'review'
        template: [save] the prompt in Markdown; $ARGUMENTS is replaced by all arguments, $1,
            $2 ... by single ones, ${@:2} by the second and later ones
        description: [save] one line: what it does
        args: [render] the arguments: a string (split like a shell line for $1 ...) or a list
            of strings
        scope: [save/delete] user (all projects, the default for save) or project (this
            workspace only)
    """
    commands = load_commands(ctx.home, ctx.workspace)
    if action == "list":
        return _list(commands)
    if action not in ACTIONS:
        raise ToolError(f"unknown action {action!r}; use {', '.join(ACTIONS)}")
    name = _check_name(name)
    if action == "save":
        return _save(ctx, name, template, description, scope or "user", commands.get(name))
    command = commands.get(name)
    if command is None:
        known = ", ".join(sorted(commands)) or "none yet"
        raise ToolError(f"no command named {name!r} (commands: {known})")
    if action == "get":
        return _show(command)
    if action == "delete":
        return _delete(ctx, command, scope)
    prompt, missing = render_template(command.template, args)
    note = f"\n\n(Not given: {', '.join(missing)}.)" if missing else ""
    return f"Command /{name} expands to the prompt below; carry it out.\n\n{prompt}{note}"


def _check_name(name: str | None) -> str:
    name = (name or "").strip().lstrip("/")
    if name.endswith(".md"):
        name = name[:-3]
    if not NAME_RE.match(name):
        raise ToolError(
            "'name' must be 1-64 letters, digits, '-' or '_', starting with a letter or digit"
        )
    return name


def _list(commands: dict[str, Command]) -> str:
    if not commands:
        return "There are no custom commands yet; create one with action 'save'."
    lines = [f"{len(commands)} command(s):"]
    for command in sorted(commands.values(), key=lambda c: c.name):
        hint = f" {command.argument_hint}" if command.argument_hint else ""
        about = command.description or command.template.split("\n", 1)[0][:80]
        lines.append(f"/{command.name}{hint} — {about} [{command.scope}]")
    return "\n".join(lines)


def _show(command: Command) -> str:
    lines = [f"/{command.name} ({command.scope}: {command.path})"]
    if command.description:
        lines.append(f"description: {command.description}")
    if command.argument_hint:
        lines.append(f"argument-hint: {command.argument_hint}")
    return "\n".join(lines) + "\n\n" + command.template


def _save(
    ctx: ToolContext,
    name: str,
    template: str | None,
    description: str | None,
    scope: str,
    existing: Command | None,
) -> str:
    if not template or not template.strip():
        raise ToolError("save needs 'template' (the prompt text)")
    if len(template) > MAX_TEMPLATE:
        raise ToolError(f"the template is too long (limit {MAX_TEMPLATE // 1024} KiB)")
    if scope not in SCOPES:
        raise ToolError(f"scope must be one of {', '.join(SCOPES)}")
    path = command_dirs(ctx.home, ctx.workspace)[scope] / f"{name}.md"
    meta: dict[str, str] = {}
    if description and description.strip():
        meta["description"] = " ".join(description.split())
    hints = sorted(set(re.findall(r"\$(\d+)", template)), key=int)
    if hints:
        meta["argument-hint"] = " ".join(f"<arg{n}>" for n in hints)
    elif "$ARGUMENTS" in template or "$@" in template:
        meta["argument-hint"] = "<arguments>"
    replaced = path.exists()
    write_document(path, meta, template)
    verb = "Replaced" if replaced else "Saved"
    text = f"{verb} /{name} in {path}."
    if existing is not None and existing.scope == "project" and scope == "user":
        text += " Note: a project command of the same name overrides it in this workspace."
    return text


def _delete(ctx: ToolContext, command: Command, scope: str | None) -> str:
    path = command.path
    if scope is not None:
        if scope not in SCOPES:
            raise ToolError(f"scope must be one of {', '.join(SCOPES)}")
        path = command_dirs(ctx.home, ctx.workspace)[scope] / f"{command.name}.md"
        if not path.is_file():
            raise ToolError(f"/{command.name} has no {scope} version to delete")
    try:
        path.unlink()
    except OSError as exc:
        raise ToolError(f"cannot delete {path}: {exc.strerror or exc}") from exc
    remaining = load_commands(ctx.home, ctx.workspace).get(command.name)
    after = f" The {remaining.scope} version remains." if remaining else ""
    return f"Deleted /{command.name} ({path}).{after}"
