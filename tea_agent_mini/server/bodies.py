"""Reading request input: JSON bodies (content type, size, syntax, nesting, values), typed field
access, and integers from the path and the query.

Every mistake a client can make here becomes an :class:`ApiError` 4xx naming the field and what
was expected, so no route has to guard against a wrong type reaching the runtime. A parsed body
holds nothing the store or a stream cannot take: no lone surrogates, no integer beyond SQLite's
int64, no NaN or infinity.
"""

from __future__ import annotations

import json
import math
import re
from itertools import accumulate
from typing import Any

from starlette.requests import Request

from .api_errors import ApiError, not_found
from .state import blocking

JSON_BODY_LIMIT = 8 * 1024 * 1024
MAX_DEPTH = 64
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)
# Larger bodies are parsed in a worker thread, so one of them does not stall other requests.
THREAD_PARSE_SIZE = 256 * 1024

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
_SURROGATE = re.compile(r"[\ud800-\udfff]")

_MISSING = object()


def media_type(request: Request) -> str:
    return request.headers.get("content-type", "").split(";", 1)[0].strip().lower()


def is_json_type(value: str) -> bool:
    return value == "application/json" or (
        value.startswith("application/") and value.endswith("+json")
    )


async def read_json(request: Request, *, limit: int = JSON_BODY_LIMIT) -> Fields:
    """The request's JSON object body.

    Raises:
        ApiError: 415 when the content type is not JSON, 413 when the body is over ``limit``,
            400 when it is not valid JSON or not an object.
    """
    if not is_json_type(media_type(request)):
        raise ApiError(415, "expected a JSON body with Content-Type: application/json")
    body = await read_limited(request, limit)
    if not body.strip():
        return Fields({})
    data = await blocking(parse_json, body) if len(body) > THREAD_PARSE_SIZE else parse_json(body)
    if not isinstance(data, dict):
        raise ApiError(400, f"the JSON body must be an object, not {_kind(data)}")
    return Fields(data)


def parse_json(body: bytes) -> Any:
    """The value of a JSON text (UTF-8, or UTF-16/32 as ``json.loads`` detects them), checked by
    :func:`check_values`.

    Raises:
        ApiError: 400 when it does not decode, nests deeper than ``MAX_DEPTH``, is malformed, or
            holds a value :func:`check_values` refuses.
    """
    try:
        # strict, unlike json.loads(bytes): surrogates encoded as bytes are refused here too
        text = body.decode(json.detect_encoding(body))
    except UnicodeDecodeError as exc:
        raise ApiError(400, f"malformed JSON body: {exc}") from exc
    if nested_deeper(text, MAX_DEPTH):
        raise ApiError(400, f"the JSON body nests deeper than {MAX_DEPTH} levels")
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ApiError(400, f"malformed JSON body: {exc}") from exc
    check_values(data)
    return data


def nested_deeper(text: str, limit: int) -> bool:
    """Whether the brackets outside strings nest deeper than ``limit``, found without recursion:
    ``json.loads`` recurses once per level and hits RecursionError on a deep enough text."""
    skeleton = _NOT_BRACKET.sub("", _STRING.sub("", text))
    return any(depth > limit for depth in accumulate(map(_STEP.__getitem__, skeleton)))


def check_values(data: Any) -> None:
    """Refuse what JSON (or YAML) allows but the rest cannot take: nesting deeper than
    ``MAX_DEPTH`` (the YAML writer and other code recurse), lone surrogates (SQLite and the UTF-8
    event streams fail on them), integers outside int64 (SQLite overflows) and NaN / infinity
    (``NaN``, ``Infinity``, ``1e309``; no JSON response can carry them back).

    Raises:
        ApiError: 400 naming the field, e.g. ``messages[0].content``.
    """
    stack: list[tuple[str, Any, int]] = [("", data, 0)]
    while stack:
        where, value, depth = stack.pop()
        if isinstance(value, (dict, list)) and depth >= MAX_DEPTH:
            raise ApiError(400, f"{_field(where)} nests deeper than {MAX_DEPTH} levels")
        if isinstance(value, dict):
            for key, item in value.items():
                path = f"{where}.{key}" if where else str(key)
                if isinstance(key, str) and _SURROGATE.search(key):
                    raise ApiError(400, f"key '{path}' holds a lone surrogate (not valid Unicode)")
                stack.append((path, item, depth + 1))
        elif isinstance(value, list):
            stack.extend((f"{where}[{i}]", item, depth + 1) for i, item in enumerate(value))
        elif isinstance(value, str):
            if _SURROGATE.search(value):
                raise ApiError(400, f"{_field(where)} holds a lone surrogate (not valid Unicode)")
        elif isinstance(value, int):
            if not INT64_MIN <= value <= INT64_MAX:
                raise ApiError(400, f"{_field(where)}: the integer is outside the 64-bit range")
        elif isinstance(value, float) and not math.isfinite(value):
            raise ApiError(400, f"{_field(where)}: expected a finite number, got {value}")


def _field(where: str) -> str:
    return f"field '{where}'" if where else "the JSON body"


async def read_limited(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise ApiError(413, f"the body is larger than {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise ApiError(413, f"the body is larger than {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return names.get(type(value), type(value).__name__)


class Fields:
    """Typed access to a JSON object; ``prefix`` names nested objects in error messages."""

    def __init__(self, data: dict[str, Any], prefix: str = "") -> None:
        self.data = data
        self.prefix = prefix

    def __contains__(self, name: str) -> bool:
        return name in self.data

    def _get(self, name: str, required: bool, expected: str) -> Any:
        value = self.data.get(name, _MISSING)
        if value is _MISSING or value is None:
            if required:
                raise ApiError(400, f"field '{self.prefix}{name}' is required ({expected})")
            return _MISSING
        return value

    def _wrong(self, name: str, expected: str, value: Any) -> ApiError:
        return ApiError(
            400, f"field '{self.prefix}{name}': expected {expected}, got {_kind(value)}"
        )

    def text(
        self, name: str, default: Any = None, *, required: bool = False, max_length: int = 0
    ) -> Any:
        value = self._get(name, required, "a string")
        if value is _MISSING:
            return default
        if not isinstance(value, str):
            raise self._wrong(name, "a string", value)
        if max_length and len(value) > max_length:
            raise ApiError(
                400, f"field '{self.prefix}{name}' is longer than {max_length} characters"
            )
        return value

    def flag(self, name: str, default: bool = False) -> bool:
        value = self._get(name, False, "true or false")
        if value is _MISSING:
            return default
        if not isinstance(value, bool):
            raise self._wrong(name, "true or false", value)
        return value

    def integer(self, name: str, default: Any = None, *, minimum: int | None = None) -> Any:
        value = self._get(name, False, "an integer")
        if value is _MISSING:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            raise self._wrong(name, "an integer", value)
        if minimum is not None and value < minimum:
            raise ApiError(400, f"field '{self.prefix}{name}' must be at least {minimum}")
        return value

    def number(self, name: str, *, minimum: float, maximum: float) -> float | None:
        value = self._get(name, False, "a number")
        if value is _MISSING:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self._wrong(name, "a number", value)
        if not minimum <= value <= maximum:
            raise ApiError(
                400, f"field '{self.prefix}{name}' must be between {minimum:g} and {maximum:g}"
            )
        return float(value)

    def array(self, name: str, *, required: bool = False) -> list[Any]:
        value = self._get(name, required, "an array")
        if value is _MISSING:
            return []
        if not isinstance(value, list):
            raise self._wrong(name, "an array", value)
        return value

    def str_list(self, name: str, *, max_items: int = 100) -> list[str]:
        items = self.array(name)
        if len(items) > max_items:
            raise ApiError(400, f"field '{self.prefix}{name}' has more than {max_items} items")
        for item in items:
            if not isinstance(item, str):
                raise self._wrong(name, "an array of strings", item)
        return items

    def nested(self, name: str, *, required: bool = False) -> Fields:
        value = self._get(name, required, "an object")
        if value is _MISSING:
            return Fields({}, f"{self.prefix}{name}.")
        if not isinstance(value, dict):
            raise self._wrong(name, "an object", value)
        return Fields(value, f"{self.prefix}{name}.")

    def raw(self, name: str, default: Any = None) -> Any:
        return self.data.get(name, default)


def natural(raw: str, maximum: int = INT64_MAX) -> int | None:
    """``raw`` as a whole number from 0 to ``maximum``, or None. ASCII digits only:
    ``str.isdigit`` also takes '²', which ``int`` refuses, as it does more than 4300 digits."""
    text = raw.strip()
    if not (text.isascii() and text.isdigit()) or len(text) > len(str(maximum)):
        return None
    value = int(text)
    return value if value <= maximum else None


def path_id(request: Request, what: str, name: str = "id") -> int:
    """The integer row id in the path; anything else cannot name a row, so it is a 404.

    Raises:
        ApiError: 404 for a non-number or a number beyond SQLite's int64 ids.
    """
    raw = request.path_params[name]
    value = natural(raw)
    if value is None:
        raise not_found(what, raw)
    return value


def query_int(request: Request, name: str, default: int, *, minimum: int = 0, maximum: int) -> int:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise ApiError(400, f"query parameter '{name}': expected an integer, got {raw!r}") from exc
    if not minimum <= value <= maximum:
        raise ApiError(400, f"query parameter '{name}': expected {minimum}-{maximum}, got {value}")
    return value


_TRUE, _FALSE = frozenset({"true", "1", "yes"}), frozenset({"false", "0", "no"})


def query_bool(request: Request, name: str, default: bool | None = None) -> bool | None:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    if raw.lower() in _TRUE:
        return True
    if raw.lower() in _FALSE:
        return False
    raise ApiError(400, f"query parameter '{name}': expected true or false, got {raw!r}")
