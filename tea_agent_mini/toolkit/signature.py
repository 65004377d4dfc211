"""A tool's description and JSON schema, read from its function's signature and docstring.

A tool declares its parameters once, in Python::

    @tool("toolkit_date_add", concurrency_safe=True)
    def toolkit_date_add(ctx: ToolContext, start: str, days: int = 0,
                         unit: Literal["days", "weeks"] = "days") -> str:
        \"\"\"Add a number of days or weeks to a date.

        Args:
            start: the date to start from, YYYY-MM-DD
            days: how many to add (negative to go back)
            unit: what ``days`` counts
        \"\"\"

The first paragraphs of the docstring become the description (lines joined; a blank line keeps a
paragraph break); the ``Args:`` section gives each parameter's description, continued on
indented lines. Types map to JSON schema: ``str``, ``int``, ``float``, ``bool``, ``list[T]``,
``dict[...]`` (an object), ``Literal[...]`` (an enum), unions of those (a list of types), and
``T | None`` (optional). Parameters without a default are required. ``Annotated[T, "text"]``
gives a description computed in code (it wins over the docstring), and ``Annotated[T, {...}]``
merges extra schema keys such as ``minimum`` or an ``items`` object.
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, Union

from tea_agent_mini.errors import TeaAgentError

_ARGS_HEADER = re.compile(r"^\s*(Args|Arguments|Parameters):\s*$")
_SECTION_HEADER = re.compile(r"^\s*(Returns|Raises|Yields|Examples?|Notes?):\s*$")
_ARG_LINE = re.compile(r"^(\s*)(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s?(.*)$")
_SIMPLE = {str: "string", int: "integer", float: "number", bool: "boolean"}


class SignatureError(TeaAgentError, ValueError):
    """The function cannot be described as a tool (a parameter without type or description)."""


def describe_function(func: Callable[..., Any]) -> tuple[str, dict[str, Any]]:
    """(description, parameters schema) of ``func(ctx, ...)``; the description is empty when
    the function has no docstring. Raises SignatureError."""
    name = getattr(func, "__name__", repr(func))
    summary, documented = parse_docstring(inspect.getdoc(func) or "")
    try:
        hints = typing.get_type_hints(func, include_extras=True)
    except (NameError, TypeError) as exc:
        raise SignatureError(f"{name}: cannot read the type hints: {exc}") from exc
    properties: dict[str, Any] = {}
    required: list[str] = []
    for index, param in enumerate(inspect.signature(func).parameters.values()):
        if index == 0 or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue  # ctx, and **extra (tools that accept unknown arguments)
        if param.name not in hints:
            raise SignatureError(f"{name}: parameter {param.name!r} has no type hint")
        schema = property_schema(hints[param.name])
        schema.setdefault("description", documented.get(param.name, ""))
        if not schema["description"]:
            raise SignatureError(f"{name}: parameter {param.name!r} is not described")
        properties[param.name] = _ordered(schema)
        if param.default is inspect.Parameter.empty:
            required.append(param.name)
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        parameters["required"] = required
    return summary, parameters


def parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """(description, {parameter: description}) from a Google-style docstring."""
    summary: list[str] = []
    arguments: dict[str, str] = {}
    section = "summary"
    current: str | None = None
    indent = 0
    for line in doc.splitlines():
        if _ARGS_HEADER.match(line):
            section, current = "args", None
            continue
        if _SECTION_HEADER.match(line):
            section = "other"
            continue
        if section == "summary":
            summary.append(line)
        elif section == "args":
            current, indent = _argument_line(line, arguments, current, indent)
    return _join_paragraphs(summary), {
        key: " ".join(text.split()) for key, text in arguments.items()
    }


def _argument_line(
    line: str, arguments: dict[str, str], current: str | None, indent: int
) -> tuple[str | None, int]:
    """Read one line of an Args section into ``arguments``; returns the argument it continues."""
    if not line.strip():
        return current, indent
    match = _ARG_LINE.match(line)
    line_indent = len(line) - len(line.lstrip())
    if match and (current is None or line_indent <= indent):
        key = match.group(2).lstrip("*")
        arguments[key] = match.group(3)
        return key, line_indent
    if current is not None:
        arguments[current] += " " + line.strip()
    return current, indent


def _join_paragraphs(lines: list[str]) -> str:
    paragraphs: list[str] = []
    block: list[str] = []
    for line in [*lines, ""]:
        if line.strip():
            block.append(line.strip())
        elif block:
            paragraphs.append(" ".join(block))
            block = []
    return "\n\n".join(paragraphs)


def property_schema(hint: Any) -> dict[str, Any]:
    """The JSON schema of one parameter's type hint. Raises SignatureError."""
    extra: dict[str, Any] = {}
    if typing.get_origin(hint) is typing.Annotated:
        hint, *metadata = typing.get_args(hint)
        for item in metadata:
            if isinstance(item, str):
                extra["description"] = item
            elif isinstance(item, dict):
                extra.update(item)
    schema = _type_schema(hint)
    schema.update(extra)
    return schema


def _type_schema(hint: Any) -> dict[str, Any]:
    if hint in _SIMPLE:
        return {"type": _SIMPLE[hint]}
    if hint is Any:
        return {}
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is Literal:
        return _enum_schema(args)
    if origin in (list, tuple, set, frozenset) or hint in (list, tuple):
        items = _type_schema(args[0]) if args and args[0] is not Ellipsis else {}
        return {"type": "array", "items": items} if items else {"type": "array"}
    if origin is dict or hint is dict:
        return {"type": "object"}
    if origin in (Union, types.UnionType):
        return _union_schema(args)
    raise SignatureError(f"type {hint!r} has no JSON schema here; use Annotated[..., {{...}}]")


def _enum_schema(values: tuple[Any, ...]) -> dict[str, Any]:
    kinds = {_SIMPLE.get(type(value)) for value in values}
    schema: dict[str, Any] = {"enum": list(values)}
    if len(kinds) == 1 and None not in kinds:
        schema = {"type": kinds.pop(), **schema}
    return schema


def _union_schema(args: tuple[Any, ...]) -> dict[str, Any]:
    members = [arg for arg in args if arg is not type(None)]
    if len(members) == 1:
        return _type_schema(members[0])  # Optional[T]: absence is the None
    schemas = [_type_schema(member) for member in members]
    merged: dict[str, Any] = {"type": [schema.get("type") for schema in schemas]}
    for schema in schemas:
        for key, value in schema.items():
            if key != "type" and merged.setdefault(key, value) != value:
                return {"anyOf": schemas}  # two members disagree about a keyword
    if all(isinstance(kind, str) for kind in merged["type"]):
        return merged  # list[str] | str -> {"type": ["array", "string"], "items": ...}
    return {"anyOf": schemas}


def _ordered(schema: dict[str, Any]) -> dict[str, Any]:
    """type first, then enum/items, then the description (the order people write by hand)."""
    order = ("type", "enum", "items")
    head = {key: schema[key] for key in order if key in schema}
    rest = {key: value for key, value in schema.items() if key not in order}
    return {**head, **rest}
