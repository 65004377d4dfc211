"""Checks for self-made tool code: the entry-function convention and the JSON schema.

The convention ``toolkit_save`` enforces. ``<name>.py`` defines one top-level function named
after the tool, and that function is the tool::

    def word_count(ctx, text: str, unique: bool = False):
        \"\"\"Count the words of a text.\"\"\"
        words = text.split()
        return len(set(words)) if unique else len(words)

- a plain ``def`` (not ``async``); its first parameter is ``ctx``, the ToolContext (workspace,
  home, ``resolve(path)``, ``state_get``/``state_set``); the arguments arrive as keywords;
- every other parameter is a property of the ``parameters`` schema and every property is a
  parameter; a parameter without a default must be listed in ``required``. A function taking
  ``**kwargs`` accepts whatever properties the schema declares;
- other top-level functions must start with ``_`` (helpers), so the entry point is unambiguous;
  imports, constants and classes are fine;
- the return value is what the model sees: a string, or anything JSON can encode;
- third-party imports must already be installed: they are reported, never installed.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import keyword
import re
from dataclasses import dataclass
from typing import Any

from tea_agent_mini.errors import ToolError

USER_TOOL_NAME_RE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
RESERVED_PREFIXES = ("toolkit_", "mcp_")
JSON_TYPES = frozenset({"string", "integer", "number", "boolean", "array", "object", "null"})
MAX_CODE_CHARS = 200_000


class UserToolError(ToolError):
    """A self-made tool is invalid, or could not be saved or loaded."""


@dataclass(frozen=True)
class EntryPoint:
    """What the entry function accepts."""

    params: tuple[str, ...]  # keyword parameters after ctx
    no_default: tuple[str, ...]  # the ones the caller must pass
    var_keyword: bool  # takes **kwargs


def check_tool_name(name: str) -> str:
    if not isinstance(name, str) or not USER_TOOL_NAME_RE.match(name):
        raise UserToolError(
            f"tool name {name!r} is not valid: use 1-64 characters a-z, 0-9 and '_', starting "
            "with a letter (it is also the name of the entry function)"
        )
    if keyword.iskeyword(name):
        raise UserToolError(f"tool name {name!r} is a Python keyword")
    if name.startswith(RESERVED_PREFIXES):
        raise UserToolError(
            f"tool name {name!r} uses a prefix reserved for built-in tools "
            f"({', '.join(RESERVED_PREFIXES)}); choose another name"
        )
    return name


def missing_import_message(module: str) -> str:
    return (
        f"module {module!r} is not installed; install it yourself (the package that provides "
        f"it, e.g. `pip install {module}`) and try again - tools never install packages"
    )


def check_schema(parameters: Any) -> dict[str, Any]:
    """The schema, if it is a well-formed JSON-schema object. Raises UserToolError."""
    if not isinstance(parameters, dict) or parameters.get("type") != "object":
        raise UserToolError('parameters must be a JSON schema object: {"type": "object", ...}')
    properties = parameters.get("properties", {})
    if not isinstance(properties, dict):
        raise UserToolError("parameters.properties must be an object mapping names to schemas")
    for prop, schema in properties.items():
        _check_property(prop, schema)
    required = parameters.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise UserToolError("parameters.required must be a list of property names")
    unknown = [r for r in required if r not in properties]
    if unknown:
        raise UserToolError(f"required names {unknown} are not in parameters.properties")
    if len(set(required)) != len(required):
        raise UserToolError("parameters.required lists a name twice")
    extra = parameters.get("additionalProperties", False)
    if not isinstance(extra, (bool, dict)):
        raise UserToolError("parameters.additionalProperties must be true, false or a schema")
    try:
        json.dumps(parameters)
    except (TypeError, ValueError) as exc:
        raise UserToolError(f"parameters are not plain JSON: {exc}") from exc
    return parameters


def _check_property(prop: Any, schema: Any) -> None:
    if not isinstance(prop, str) or not prop.isidentifier() or keyword.iskeyword(prop):
        raise UserToolError(f"property name {prop!r} must be a Python identifier")
    if not isinstance(schema, dict):
        raise UserToolError(f"property {prop!r}: its schema must be an object")
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if kind is not None else []
    bad = [k for k in kinds if k not in JSON_TYPES]
    if bad or (isinstance(kind, list) and not kind):
        raise UserToolError(
            f"property {prop!r}: type must be one of {', '.join(sorted(JSON_TYPES))}"
        )
    if "enum" in schema and (not isinstance(schema["enum"], list) or not schema["enum"]):
        raise UserToolError(f"property {prop!r}: enum must be a non-empty list")
    if "items" in schema and not isinstance(schema["items"], dict):
        raise UserToolError(f"property {prop!r}: items must be a schema object")
    if "description" in schema and not isinstance(schema["description"], str):
        raise UserToolError(f"property {prop!r}: description must be a string")


def parse_code(name: str, code: str) -> ast.Module:
    if not isinstance(code, str) or not code.strip():
        raise UserToolError("code is empty")
    if len(code) > MAX_CODE_CHARS:
        raise UserToolError(f"code is over {MAX_CODE_CHARS:,} characters")
    try:
        return ast.parse(code, filename=f"{name}.py")
    except SyntaxError as exc:
        where = f"line {exc.lineno}" if exc.lineno else "unknown line"
        raise UserToolError(f"syntax error in {name}.py at {where}: {exc.msg}") from exc


def find_entry(name: str, tree: ast.Module) -> EntryPoint:
    """The entry function's signature. Raises UserToolError when the convention is broken."""
    functions = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    entries = [f for f in functions if f.name == name]
    if not entries:
        raise UserToolError(f"the code must define a top-level function `def {name}(ctx, ...)`")
    if len(entries) > 1:
        raise UserToolError(f"function {name!r} is defined more than once")
    others = [f.name for f in functions if f.name != name and not f.name.startswith("_")]
    if others:
        raise UserToolError(
            f"only the entry function {name!r} may be public; rename the other top-level "
            f"functions with a leading underscore: {', '.join(others)}"
        )
    entry = entries[0]
    if isinstance(entry, ast.AsyncFunctionDef):
        raise UserToolError(f"{name!r} must be a plain def, not async def")
    return _signature(name, entry.args)


def _signature(name: str, args: ast.arguments) -> EntryPoint:
    positional = [*args.posonlyargs, *args.args]
    if not positional or positional[0].arg != "ctx":
        raise UserToolError(f"the first parameter of {name!r} must be `ctx` (the ToolContext)")
    if len(args.posonlyargs) > 1:
        raise UserToolError("only `ctx` may be positional-only; arguments arrive as keywords")
    if args.vararg is not None:
        raise UserToolError(f"{name!r} must not take *{args.vararg.arg}: arguments are keywords")
    first_default = len(positional) - len(args.defaults)
    params, no_default = [], []
    for index, arg in enumerate(positional[1:], start=1):
        params.append(arg.arg)
        if index < first_default:
            no_default.append(arg.arg)
    for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        params.append(arg.arg)
        if default is None:
            no_default.append(arg.arg)
    if first_default < 1:
        raise UserToolError("`ctx` must not have a default value")
    return EntryPoint(tuple(params), tuple(no_default), args.kwarg is not None)


def match_schema(name: str, entry: EntryPoint, parameters: dict[str, Any]) -> None:
    """Raises UserToolError unless the schema's properties fit the entry function."""
    properties = set(parameters.get("properties", {}))
    required = set(parameters.get("required", []))
    missing_in_schema = [p for p in entry.params if p not in properties]
    if missing_in_schema:
        raise UserToolError(
            f"schema mismatch: parameters {missing_in_schema} of {name}() are not in "
            "parameters.properties"
        )
    if not entry.var_keyword:
        unknown = sorted(properties - set(entry.params))
        if unknown:
            raise UserToolError(
                f"schema mismatch: properties {unknown} are not parameters of {name}() "
                "(add them to the function, or give it **kwargs)"
            )
        if parameters.get("additionalProperties") is True:
            raise UserToolError(
                f"schema mismatch: additionalProperties is true but {name}() has no **kwargs"
            )
    optional = [p for p in entry.no_default if p not in required]
    if optional:
        raise UserToolError(
            f"schema mismatch: {optional} have no default in {name}() so they must be listed "
            "in parameters.required (or give them a default)"
        )


def missing_imports(tree: ast.Module) -> list[str]:
    """Top-level modules imported at module level (outside try blocks) that are not installed."""
    wanted: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            wanted += [alias.name.split(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            wanted.append(node.module.split(".")[0])
    missing = []
    for module in dict.fromkeys(wanted):
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(module)
    return missing


def validate_tool_code(name: str, code: str, parameters: dict[str, Any]) -> EntryPoint:
    """Everything that can be checked without running the code. Raises UserToolError."""
    tree = parse_code(name, code)
    entry = find_entry(name, tree)
    match_schema(name, entry, parameters)
    missing = missing_imports(tree)
    if missing:
        raise UserToolError(missing_import_message(missing[0]))
    return entry
