"""Reading request input: JSON bodies (content type, size, syntax) and typed field access.

Every mistake a client can make here becomes an :class:`ApiError` 4xx naming the field and what
was expected, so no route has to guard against a wrong type reaching the runtime.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request

from .api_errors import ApiError

JSON_BODY_LIMIT = 8 * 1024 * 1024

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
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApiError(400, f"malformed JSON body: {exc}") from exc
    if not isinstance(data, dict):
        raise ApiError(400, f"the JSON body must be an object, not {_kind(data)}")
    return Fields(data)


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

    def str(
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

    def bool(self, name: str, default: bool = False) -> bool:
        value = self._get(name, False, "true or false")
        if value is _MISSING:
            return default
        if not isinstance(value, bool):
            raise self._wrong(name, "true or false", value)
        return value

    def int(self, name: str, default: Any = None, *, minimum: int | None = None) -> Any:
        value = self._get(name, False, "an integer")
        if value is _MISSING:
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            raise self._wrong(name, "an integer", value)
        if minimum is not None and value < minimum:
            raise ApiError(400, f"field '{self.prefix}{name}' must be at least {minimum}")
        return value

    def list(self, name: str, *, required: bool = False) -> list[Any]:
        value = self._get(name, required, "an array")
        if value is _MISSING:
            return []
        if not isinstance(value, list):
            raise self._wrong(name, "an array", value)
        return value

    def str_list(self, name: str, *, max_items: int = 100) -> list[str]:
        items = self.list(name)
        if len(items) > max_items:
            raise ApiError(400, f"field '{self.prefix}{name}' has more than {max_items} items")
        for item in items:
            if not isinstance(item, str):
                raise self._wrong(name, "an array of strings", item)
        return items

    def object(self, name: str, *, required: bool = False) -> Fields:
        value = self._get(name, required, "an object")
        if value is _MISSING:
            return Fields({}, f"{self.prefix}{name}.")
        if not isinstance(value, dict):
            raise self._wrong(name, "an object", value)
        return Fields(value, f"{self.prefix}{name}.")

    def raw(self, name: str, default: Any = None) -> Any:
        return self.data.get(name, default)


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
