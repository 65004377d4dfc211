"""Check parsed tool arguments against the tool's JSON schema before the function runs.

Only what models get wrong in practice: missing required parameters, unknown parameters, basic
types and enums. Harmless slips are corrected instead of refused: ``"30"`` for an integer,
``"true"`` for a boolean, ``null`` for an optional parameter (treated as absent).
"""

from __future__ import annotations

import json
from typing import Any

from tea_agent_mini.errors import ToolError

_TYPE_NAMES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "array": "an array",
    "object": "an object",
}


def validate_arguments(tool_name: str, schema: dict[str, Any], arguments: Any) -> dict[str, Any]:
    """Return the arguments, coerced where safe. Raises ToolError naming the bad parameter."""
    if not isinstance(arguments, dict):
        raise ToolError(f"{tool_name}: arguments must be a JSON object, got {_kind(arguments)}")
    properties: dict[str, Any] = schema.get("properties", {})
    required = list(schema.get("required", ()))
    allow_extra = schema.get("additionalProperties") is True
    result: dict[str, Any] = {}
    unexpected = []
    for name, value in arguments.items():
        if name not in properties:
            if allow_extra:
                result[name] = value
            else:
                unexpected.append(name)
            continue
        if value is None and name not in required:
            continue
        result[name] = _check_value(tool_name, name, properties[name], value)
    if unexpected:
        raise ToolError(
            f"{tool_name}: unexpected parameter(s) {', '.join(map(repr, unexpected))}; "
            f"accepted parameters: {', '.join(properties) or '(none)'}"
        )
    missing = [name for name in required if name not in result]
    if missing:
        raise ToolError(
            f"{tool_name}: missing required parameter(s) {', '.join(map(repr, missing))}"
        )
    return result


def _check_value(tool_name: str, name: str, prop: dict[str, Any], value: Any) -> Any:
    expected = prop.get("type")
    types = expected if isinstance(expected, list) else [expected] if expected else []
    if types:
        for type_name in types:
            ok, converted = _coerce(type_name, value)
            if ok:
                value = converted
                break
        else:
            wanted = " or ".join(_TYPE_NAMES.get(t, str(t)) for t in types)
            raise ToolError(
                f"{tool_name}: parameter '{name}' must be {wanted}, got {_kind(value)} "
                f"{_preview(value)}"
            )
    if "enum" in prop and value not in prop["enum"]:
        choices = ", ".join(json.dumps(c, ensure_ascii=False) for c in prop["enum"])
        raise ToolError(
            f"{tool_name}: parameter '{name}' must be one of {choices}, got {_preview(value)}"
        )
    if types == ["array"] and isinstance(prop.get("items"), dict):
        item_type = prop["items"].get("type")
        if isinstance(item_type, str):
            value = [_check_item(tool_name, name, item_type, i, v) for i, v in enumerate(value)]
    return value


def _check_item(tool_name: str, name: str, type_name: str, index: int, value: Any) -> Any:
    ok, converted = _coerce(type_name, value)
    if not ok:
        raise ToolError(
            f"{tool_name}: parameter '{name}' item {index} must be "
            f"{_TYPE_NAMES.get(type_name, type_name)}, got {_kind(value)} {_preview(value)}"
        )
    return converted


def _coerce(type_name: str, value: Any) -> tuple[bool, Any]:
    """(accepted, value) for one JSON-schema type."""
    if type_name == "string":
        return isinstance(value, str), value
    if type_name == "boolean":
        if isinstance(value, bool):
            return True, value
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return True, value.strip().lower() == "true"
        return False, value
    if type_name == "integer":
        return _to_integer(value)
    if type_name == "number":
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return True, value
        if isinstance(value, str):
            try:
                return True, float(value) if any(c in value for c in ".eE") else int(value)
            except ValueError:
                return False, value
        return False, value
    if type_name == "array":
        return isinstance(value, list), value
    if type_name == "object":
        return isinstance(value, dict), value
    if type_name == "null":
        return value is None, value
    return True, value


def _to_integer(value: Any) -> tuple[bool, Any]:
    if isinstance(value, bool):
        return False, value
    if isinstance(value, int):
        return True, value
    if isinstance(value, float) and value.is_integer():
        return True, int(value)
    if isinstance(value, str):
        try:
            return True, int(value.strip())
        except ValueError:
            return False, value
    return False, value


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _preview(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."
