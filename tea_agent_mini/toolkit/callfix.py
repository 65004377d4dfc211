"""A call that leaves out the ``action`` of a multi-action tool (toolkit_file, toolkit_git ...).

Small models often send ``{"filename": "a.txt", "content": "hi"}`` to toolkit_file. The tools
document which action each parameter belongs to, at the start of its description:
``"[write/append] the text to write"`` (no tag: every action). So the action can be read off the
arguments: of the actions that take every argument given, the one taking the most of them as its
own. Ties are broken only by a short per-tool table (toolkit_file: a path alone is read, with
content it is written) or, for a call with no arguments at all, by a harmless action (list,
status, show, stats). An action sent under another key (``{"operation": "write"}``) is taken too.

Nothing else is guessed: nothing runs, and the error shows a valid call made of the model's own
arguments, which the loop guard repeats if the model keeps sending the same call.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.registry import ToolSpec

__all__ = ["ActionDoc", "complete_action"]

_TAG = re.compile(r"\[([A-Za-z_]+(?:/[A-Za-z_]+)*)\]")
_ACTION = "action"
# Only for a call with no arguments at all: the first of these that the tool has and that
# changes nothing.
_BARE_CALL = ("list", "status", "show", "stats")
# Never the first suggestion in an example when another action fits as well.
_REMOVING = frozenset(("delete", "remove", "forget", "clear", "undo", "drop", "reset", "purge"))
_EXAMPLE_NEEDS = 2
_SHORT = 40


@dataclass(frozen=True)
class _Hint:
    prefer: tuple[str, ...] = ()  # among actions the arguments fit equally well
    aliases: dict[str, str] = field(default_factory=dict)  # parameter -> the one it stands for


_HINTS = {
    # The tool reads ``path`` as the file name. A file name alone is to be read; with content,
    # to be written: what a call without an action nearly always means.
    "toolkit_file": _Hint(prefer=("read", "write"), aliases={"path": "filename"}),
    # Text without an item number can only be a new item.
    "toolkit_todo": _Hint(prefer=("add",)),
}


@dataclass(frozen=True)
class ActionDoc:
    """What a tool's schema says about its actions."""

    actions: tuple[str, ...]
    uses: dict[str, frozenset[str]]  # parameter -> actions it is documented for (empty: all)
    needs: dict[str, tuple[str, ...]]  # action -> its own parameters documented without a default

    @classmethod
    def of(cls, schema: dict[str, Any]) -> ActionDoc | None:
        """None unless the tool requires an ``action`` from a fixed list."""
        properties: dict[str, Any] = schema.get("properties", {})
        enum = properties.get(_ACTION, {}).get("enum")
        if _ACTION not in schema.get("required", ()) or not isinstance(enum, list) or not enum:
            return None
        actions = tuple(str(action) for action in enum)
        uses = {
            name: _documented_for(str(prop.get("description", "")), actions)
            for name, prop in properties.items()
            if name != _ACTION and isinstance(prop, dict)
        }
        needs = {action: _needs(action, uses, properties) for action in actions}
        return cls(actions, uses, needs)


@dataclass(frozen=True)
class _Call:
    """The arguments of one call, seen against the tool's documentation."""

    doc: ActionDoc
    hint: _Hint
    given: frozenset[str]

    def uses(self, name: str) -> frozenset[str]:
        alias = self.hint.aliases.get(name)
        own = self.doc.uses.get(name, frozenset())
        return (own | self.doc.uses.get(alias, frozenset())) if alias and own else own

    def takes(self, action: str, name: str) -> bool:
        uses = self.uses(name)
        return not uses or action in uses

    def specificity(self, action: str) -> int:
        return sum(1 for name in self.given if action in self.uses(name))


def complete_action(spec: ToolSpec, arguments: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """``arguments`` with the ``action`` filled in when the call left it out and the other
    arguments say which; returns (arguments, the action assumed, or None when it was given).

    Raises:
        ToolError: the action is missing and cannot be told; the message shows a valid call.
    """
    if arguments.get(_ACTION) not in (None, ""):
        return arguments, None
    doc = ActionDoc.of(spec.parameters)
    if doc is None:
        return arguments, None
    rest = {key: value for key, value in arguments.items() if key != _ACTION}
    misplaced = _action_under_another_key(rest, doc, spec.parameters)
    if misplaced is not None:
        key, action = misplaced
        del rest[key]
        return {_ACTION: action, **rest}, action
    known = frozenset(name for name in rest if name in doc.uses and rest[name] is not None)
    call = _Call(doc, _HINTS.get(spec.name, _Hint()), known)
    ranked = _ranked(call, spec, bare=not rest)
    if ranked.chosen is not None:
        return {_ACTION: ranked.chosen, **rest}, ranked.chosen
    raise ToolError(_missing_action_message(spec, call, ranked, rest))


@dataclass(frozen=True)
class _Ranking:
    chosen: str | None  # the one action meant, if the arguments tell
    likely: list[str]  # the actions that fit best, most likely first (for the error)
    fitting: bool  # whether any action takes all the arguments


def _ranked(call: _Call, spec: ToolSpec, bare: bool) -> _Ranking:
    doc = call.doc
    fitting = [a for a in doc.actions if all(call.takes(a, name) for name in call.given)]
    if not fitting:  # the action taking the most of the arguments is the likeliest
        likely = sorted(doc.actions, key=lambda a: -sum(call.takes(a, n) for n in call.given))
        return _Ranking(None, likely, fitting=False)
    best = max(call.specificity(a) for a in fitting)
    top = [a for a in fitting if call.specificity(a) == best]
    likely = sorted(top, key=lambda a: _example_order(a, call.hint, spec))
    if len(top) == 1:
        return _Ranking(top[0], likely, fitting=True)
    if bare:
        harmless = [a for a in _BARE_CALL if a in top and not spec.mutates_with({_ACTION: a})]
        return _Ranking(harmless[0] if harmless else None, likely, fitting=True)
    preferred = [a for a in call.hint.prefer if a in top] if call.given else []
    return _Ranking(preferred[0] if preferred else None, likely, fitting=True)


def _example_order(action: str, hint: _Hint, spec: ToolSpec) -> tuple[int, bool, bool]:
    """The table's choice first; an action that changes or removes something last."""
    rank = hint.prefer.index(action) if action in hint.prefer else len(hint.prefer)
    return rank, spec.mutates_with({_ACTION: action}), action in _REMOVING


def _action_under_another_key(
    rest: dict[str, Any], doc: ActionDoc, schema: dict[str, Any]
) -> tuple[str, str] | None:
    """``{"operation": "write", ...}``: an argument the tool does not have, naming an action."""
    properties = schema.get("properties", {})
    for key, value in rest.items():
        if key not in properties and isinstance(value, str) and value in doc.actions:
            return key, value
    return None


def _documented_for(description: str, actions: tuple[str, ...]) -> frozenset[str]:
    """The actions named in ``[a/b]`` tags of a description; empty when it has none."""
    named: set[str] = set()
    for tag in _TAG.findall(description):
        words = tag.split("/")
        if all(word in actions for word in words):
            named.update(words)
    return frozenset(named)


def _needs(
    action: str, uses: dict[str, frozenset[str]], properties: dict[str, Any]
) -> tuple[str, ...]:
    return tuple(
        name
        for name, actions in uses.items()
        if action in actions and "default" not in str(properties[name].get("description", ""))
    )


def _missing_action_message(
    spec: ToolSpec, call: _Call, ranking: _Ranking, arguments: dict[str, Any]
) -> str:
    actions = ", ".join(call.doc.actions)
    example = _example(spec, call, ranking.likely[0], arguments)
    unknown = sorted(set(arguments) - call.given)
    if not arguments:
        why = "the call has no 'action'"
    elif not call.given:
        why = f"the call has no 'action', and this tool has no parameter {', '.join(unknown)}"
    elif ranking.fitting:
        why = f"the call has no 'action' and its arguments fit {', '.join(ranking.likely)}"
    else:
        given = ", ".join(sorted(call.given))
        why = f"the call has no 'action' and no one action takes all of: {given}"
    return (
        f"{spec.name}: {why}. Send the call again with the action, e.g. {example} "
        f"(actions: {actions})."
    )


def _example(spec: ToolSpec, call: _Call, action: str, arguments: dict[str, Any]) -> str:
    properties: dict[str, Any] = spec.parameters.get("properties", {})
    example: dict[str, Any] = {_ACTION: action}
    for name in sorted(call.given, key=list(arguments).index):
        if call.takes(action, name):
            example[name] = _shortened(arguments[name])
    wanted = [name for name in spec.parameters.get("required", ()) if name != _ACTION]
    if len(example) == 1:  # nothing of the model's fits: show what this action is about
        wanted += call.doc.needs[action][:_EXAMPLE_NEEDS]
    covered = set(example) | {call.hint.aliases.get(name, name) for name in example}
    for name in dict.fromkeys(name for name in wanted if name not in covered):
        example[name] = _placeholder(name, properties.get(name, {}))
    return json.dumps(example, ensure_ascii=False)


def _shortened(value: Any) -> Any:
    if isinstance(value, str) and len(value) > _SHORT:
        return value[: _SHORT - 3] + "..."
    if isinstance(value, (list, dict)) and len(json.dumps(value)) > _SHORT:
        return [] if isinstance(value, list) else {}
    return value


def _placeholder(name: str, prop: dict[str, Any]) -> Any:
    if isinstance(prop.get("enum"), list) and prop["enum"]:
        return prop["enum"][0]
    kind = prop.get("type")
    kind = kind[0] if isinstance(kind, list) and kind else kind
    samples: dict[Any, Any] = {
        "integer": 1,
        "number": 1,
        "boolean": True,
        "array": [],
        "object": {},
    }
    return samples.get(kind, f"<{name}>")
