"""One YAML value checked against a config field's type hint, for the loader in ``config``."""

from __future__ import annotations

import types
import typing
from typing import Any

from .errors import ConfigError


def coerce(value: Any, hint: Any, label: str, *, secret: bool = False) -> Any:
    """``value`` as the type ``hint`` asks for; None means the type's default. A ``secret``
    value is never repeated in the error.

    Raises:
        ConfigError: ``label``: what was expected and what was found.
    """
    options = typing.get_args(hint) if _is_union(hint) else (hint,)
    if value is None:
        if type(None) in options:
            return None
        return _default_for(options[0])
    for option in options:
        origin = typing.get_origin(option) or option
        if origin is bool and isinstance(value, bool):
            return value
        if origin is int and isinstance(value, int) and not isinstance(value, bool):
            return value
        if origin is float and isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if origin is str and isinstance(value, (str, int, float)) and not isinstance(value, bool):
            return str(value)
        if origin is list and isinstance(value, list):
            return [str(v) for v in value]
        if origin is dict and isinstance(value, dict):
            return {str(k): str(v) for k, v in value.items()}
    expected = " or ".join(_type_name(o) for o in options if o is not type(None))
    shown = "a secret" if secret else repr(value)
    raise ConfigError(f"{label}: expected {expected}, got {type(value).__name__} {shown}")


def _is_union(hint: Any) -> bool:
    return typing.get_origin(hint) is typing.Union or isinstance(hint, types.UnionType)


def _default_for(hint: Any) -> Any:
    origin = typing.get_origin(hint) or hint
    return {str: "", int: 0, float: 0.0, bool: False, list: [], dict: {}}.get(origin)


def _type_name(hint: Any) -> str:
    origin = typing.get_origin(hint) or hint
    names = {str: "a string", int: "an integer", float: "a number", bool: "true or false"}
    names.update({list: "a list", dict: "a mapping"})
    return names.get(origin, str(hint))
