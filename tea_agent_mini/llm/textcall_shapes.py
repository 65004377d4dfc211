"""What one tool call printed as text looks like, once it has been found (see textcalls.py).

Accepted objects: ``{"name", "arguments" | "parameters" | "args" | "input"}``, ``{"tool", "args"}``,
OpenAI's ``{"type": "function", "function": {...}}``, and for a known tool the arguments spread
over the object itself (``{"name": "toolkit_exec", "command": "ls"}``); a ``functions.`` prefix is
dropped. The body of a ``<function=name>`` tag is a JSON object or ``<parameter=k>v</parameter>``
pairs.

A name that is not a tool but close to one (``file``, ``bash``) is kept as the model wrote it:
the executor then answers with the names it probably meant, and nothing runs on a guess. Such a
call needs explicit call syntax (a tag, or an arguments key), so a data object that merely has a
``name`` field is not taken for one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from ..types import ToolCall
from .assemble import new_call_id
from .repair import JSONRepairError, repair_json
from .toolnames import close_tool_names

__all__ = ["ToolNames", "calls_from_value", "function_tag_call", "tool_call_tag_calls"]

FUNCTION_TAG = re.compile(r"<function=([\w.\-]+)>\s*(.*?)\s*(?:</function>|\Z)", re.S)
_PARAMETER = re.compile(r"<parameter=([\w.\-]+)>\n?(.*?)\n?</parameter>", re.S)
_NAME_KEYS = ("name", "tool", "tool_name")
_ARGUMENT_KEYS = ("arguments", "parameters", "args", "input", "tool_input")
_CALL_KEYS = frozenset((*_NAME_KEYS, *_ARGUMENT_KEYS, "type", "id", "function"))


@dataclass(frozen=True)
class ToolNames:
    """The tools a call may name."""

    known: Collection[str]

    def accepts(self, name: str, explicit: bool) -> bool:
        """A known name; or, in explicit call syntax, a name close to one (kept as written)."""
        if name in self.known:
            return True
        return explicit and bool(close_tool_names(name, self.known, limit=1))


def calls_from_value(value: Any, names: ToolNames, *, in_tag: bool = False) -> list[ToolCall]:
    """The calls when ``value`` is a call or a list of calls; none when any item is not one."""
    items = value if isinstance(value, list) else [value]
    calls = [_call_from_object(item, names, in_tag) for item in items]
    if not calls or any(call is None for call in calls):
        return []
    return [call for call in calls if call is not None]


def tool_call_tag_calls(body: str, names: ToolNames) -> list[ToolCall]:
    """The inside of a ``<tool_call>`` tag: JSON, or a ``<function=...>`` block."""
    tag = FUNCTION_TAG.search(body)
    if tag:
        call = function_tag_call(tag.group(1), tag.group(2), names)
        return [call] if call else []
    try:
        return calls_from_value(repair_json(body), names, in_tag=True)
    except JSONRepairError:
        return []


def function_tag_call(name: str, body: str, names: ToolNames) -> ToolCall | None:
    """``<function=name>`` followed by a JSON object or ``<parameter=...>`` pairs."""
    if not names.accepts(name, explicit=True):
        return None
    parameters = _PARAMETER.findall(body)
    if parameters:
        arguments = {key: _parameter_value(value) for key, value in parameters}
        return ToolCall(new_call_id(), name, json.dumps(arguments, ensure_ascii=False))
    body = body.strip()
    if not body:
        return ToolCall(new_call_id(), name, "{}")
    try:
        value = repair_json(body)
    except JSONRepairError:
        return None
    if not isinstance(value, dict):
        return None
    return ToolCall(new_call_id(), name, json.dumps(value, ensure_ascii=False))


def _call_from_object(obj: Any, names: ToolNames, in_tag: bool) -> ToolCall | None:
    if not isinstance(obj, dict):
        return None
    function = obj.get("function")
    if isinstance(function, dict):  # OpenAI's own shape, printed as text
        obj = function
    name = next((obj[key] for key in _NAME_KEYS if isinstance(obj.get(key), str)), None)
    if name is None and isinstance(function, str):
        name = function
    if name is None:
        return None
    name = name.strip().removeprefix("functions.")
    argument_key = next((key for key in _ARGUMENT_KEYS if key in obj), None)
    explicit = in_tag or argument_key is not None or isinstance(function, dict)
    if not names.accepts(name, explicit):
        return None
    if argument_key is not None:
        arguments = obj[argument_key]
    else:
        arguments = {key: value for key, value in obj.items() if key not in _CALL_KEYS}
    return ToolCall(id=new_call_id(), name=name, arguments=_arguments_text(arguments))


def _arguments_text(arguments: Any) -> str:
    if isinstance(arguments, str):
        return arguments.strip() or "{}"
    if arguments is None:
        return "{}"
    return json.dumps(arguments, ensure_ascii=False)


def _parameter_value(raw: str) -> Any:
    """Parameter text stays text, except a JSON object or array, which is decoded."""
    text = raw.strip()
    if text.startswith(("{", "[")):
        try:
            return json.loads(text)
        except ValueError:
            pass
    return raw
