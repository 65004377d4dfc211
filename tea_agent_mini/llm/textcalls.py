"""Tool calls that a model wrote into its text instead of the ``tool_calls`` field.

Local models behind servers that do not parse their chat template print calls as text. Recognised:

- Hermes/Qwen: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``
- Llama / Qwen3-Coder: ``<function=name>{...}</function>`` or with ``<parameter=k>v</parameter>``
- a fenced ```json block or a bare JSON object (or list of them) naming a known tool, as
  ``{"name", "arguments" | "parameters"}``, ``{"tool", "args"}`` or OpenAI's ``{"function": {...}}``

Only names in ``tool_names`` count; anything else stays in the text untouched.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any

from ..types import ToolCall
from .assemble import new_call_id
from .repair import JSONRepairError, repair_json

__all__ = ["extract_text_tool_calls"]

_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|\Z)", re.S)
_FUNCTION_TAG = re.compile(r"<function=([\w.\-]+)>\s*(.*?)\s*(?:</function>|\Z)", re.S)
_PARAMETER = re.compile(r"<parameter=([\w.\-]+)>\n?(.*?)\n?</parameter>", re.S)
_FENCE = re.compile(r"```[ \t]*(?:json|tool_call|tool_code)?[ \t]*\r?\n(.*?)```", re.S)
_NAME_KEYS = ("name", "tool", "tool_name")
_ARGUMENT_KEYS = ("arguments", "parameters", "args", "input", "tool_input")

_Span = tuple[int, int, list[ToolCall]]


def extract_text_tool_calls(
    content: str, tool_names: Collection[str]
) -> tuple[str, list[ToolCall]]:
    """Split ``content`` into (the text without the calls, the calls found, in order)."""
    known = set(tool_names)
    if not content or not known:
        return content, []
    spans: list[_Span] = []
    for match in _TOOL_CALL.finditer(content):
        _add(spans, match.start(), match.end(), _calls_in_body(match.group(1), known))
    for match in _FUNCTION_TAG.finditer(content):
        call = _function_tag_call(match.group(1), match.group(2), known)
        _add(spans, match.start(), match.end(), [call] if call else [])
    for match in _FENCE.finditer(content):
        _add(spans, match.start(), match.end(), _calls_in_json(match.group(1), known))
    _find_bare_objects(content, known, spans)
    if not spans:
        return content, []
    spans.sort(key=lambda span: span[0])
    pieces, calls, cursor = [], [], 0
    for start, end, found in spans:
        pieces.append(content[cursor:start].rstrip(" \t"))
        calls.extend(found)
        cursor = end
    pieces.append(content[cursor:])
    remaining = re.sub(r"\n{3,}", "\n\n", "".join(pieces)).strip()
    return remaining, calls


def _add(spans: list[_Span], start: int, end: int, calls: list[ToolCall]) -> None:
    if calls and not any(start < s_end and s_start < end for s_start, s_end, _ in spans):
        spans.append((start, end, calls))


def _calls_in_body(body: str, known: set[str]) -> list[ToolCall]:
    """The inside of a ``<tool_call>`` tag: JSON, or a ``<function=...>`` block."""
    tag = _FUNCTION_TAG.search(body)
    if tag:
        call = _function_tag_call(tag.group(1), tag.group(2), known)
        return [call] if call else []
    try:
        return _calls_from_value(repair_json(body), known)
    except JSONRepairError:
        return []


def _calls_in_json(text: str, known: set[str]) -> list[ToolCall]:
    try:
        value = json.loads(text)
    except ValueError:
        return []
    return _calls_from_value(value, known)


def _calls_from_value(value: Any, known: set[str]) -> list[ToolCall]:
    """All calls when ``value`` is a call or a list of calls; nothing if any item is not one."""
    items = value if isinstance(value, list) else [value]
    calls = [_as_call(item, known) for item in items]
    if not calls or any(call is None for call in calls):
        return []
    return [call for call in calls if call is not None]


def _as_call(obj: Any, known: set[str]) -> ToolCall | None:
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
    if name not in known:
        return None
    arguments = next((obj[key] for key in _ARGUMENT_KEYS if key in obj), {})
    return ToolCall(id=new_call_id(), name=name, arguments=_arguments_text(arguments))


def _arguments_text(arguments: Any) -> str:
    if isinstance(arguments, str):
        return arguments.strip() or "{}"
    if arguments is None:
        return "{}"
    return json.dumps(arguments, ensure_ascii=False)


def _function_tag_call(name: str, body: str, known: set[str]) -> ToolCall | None:
    if name not in known:
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


def _parameter_value(raw: str) -> Any:
    """Parameter text stays text, except a JSON object or array, which is decoded."""
    text = raw.strip()
    if text.startswith(("{", "[")):
        try:
            return json.loads(text)
        except ValueError:
            pass
    return raw


def _find_bare_objects(content: str, known: set[str], spans: list[_Span]) -> None:
    decoder = json.JSONDecoder()
    pos = content.find("{")
    while pos >= 0:
        inside = next((end for start, end, _ in spans if start <= pos < end), None)
        if inside is not None:
            pos = content.find("{", inside)
            continue
        starts = [pos - 1, pos] if pos > 0 and content[pos - 1] == "[" else [pos]
        for start in starts:  # a list of calls, else the object alone
            try:
                value, end = decoder.raw_decode(content, start)
            except ValueError:
                continue
            _add(spans, start, end, _calls_from_value(value, known))
            pos = content.find("{", end)
            break
        else:
            pos = content.find("{", pos + 1)
