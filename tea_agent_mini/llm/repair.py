"""Tolerant parsing of the JSON that models write as tool-call arguments.

Strict JSON is tried first. Otherwise a lenient parser accepts what models commonly get wrong:
markdown fences, prose around the object, single quotes, trailing commas, raw newlines and control
characters inside strings, Python's True/False/None, comments, unquoted keys, and a truncated end
(open strings, arrays and objects are closed). When even that fails, the error says where and what,
so the model can send the call again.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..errors import LLMError, ToolError

__all__ = [
    "JSONRepairError",
    "ToolArgumentsError",
    "parse_tool_arguments",
    "read_json_value",
    "repair_json",
]

_FENCE = re.compile(
    r"```[ \t]*(?:json5?|javascript|js|python)?[ \t]*\r?\n?(.*?)(?:```|\Z)", re.S | re.I
)
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_LITERALS = {
    "true": True, "True": True, "false": False, "False": False,
    "null": None, "None": None, "undefined": None,
}  # fmt: skip
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "/": "/", "\\": "\\"}
_VALUE_END = ",}]:"
_KINDS = {list: "an array", str: "a string", int: "a number", float: "a number", bool: "a boolean"}
_KEY = re.compile(r"[A-Za-z_$][\w$-]*")
_BARE_WORD = re.compile(r"[^,}\]\n:]*")


class JSONRepairError(LLMError, ValueError):
    """The text could not be read as JSON even leniently; ``pos`` is where reading stopped."""

    def __init__(self, message: str, text: str, pos: int) -> None:
        super().__init__(message)
        self.text = text
        self.pos = pos


class ToolArgumentsError(ToolError):
    """Tool-call arguments that are not a JSON object; the message tells the model what to fix."""


def repair_json(text: str) -> Any:
    """Parse ``text`` as JSON, repairing common model mistakes; an empty text is ``{}``.

    Raises:
        JSONRepairError: nothing JSON-like could be read.
    """
    stripped = text.strip()
    if not stripped:
        return {}
    try:
        return _unwrap(json.loads(stripped))
    except (ValueError, RecursionError):
        pass
    fenced = _FENCE.search(stripped)
    if fenced:
        stripped = fenced.group(1).strip() or stripped
    start = _first_container(stripped)
    if start is not None:
        candidates = [stripped[start:], stripped]
    elif ":" in stripped:
        candidates = ["{" + stripped + "}", stripped]  # bare "key": value pairs
    else:
        candidates = [stripped]
    error: JSONRepairError | None = None
    for candidate in candidates:
        try:
            return _unwrap(_Lenient(candidate).parse())
        except JSONRepairError as exc:
            error = error or exc
    assert error is not None
    raise error


def read_json_value(text: str, start: int = 0) -> tuple[Any, int]:
    """The JSON value that starts at ``text[start]`` and where it ends: strict JSON, else read
    leniently (a value cut off at the end of the text is closed there).

    Raises:
        JSONRepairError: no value could be read there.
    """
    try:
        return json.JSONDecoder().raw_decode(text, start)
    except (ValueError, RecursionError):
        pass
    reader = _Lenient(text)
    reader.pos = start
    return reader.parse(), reader.pos


def parse_tool_arguments(raw: str) -> dict[str, Any]:
    """The arguments of one tool call as a dict.

    Raises:
        ToolArgumentsError: the arguments are unreadable or not a JSON object; the message says
            where the problem is, with a snippet, so the model can correct itself.
    """
    if isinstance(raw, dict):
        return raw
    try:
        value = repair_json(raw if isinstance(raw, str) else json.dumps(raw))
    except JSONRepairError as exc:
        raise ToolArgumentsError(_describe(raw, exc)) from exc
    if value is None:
        return {}
    if not isinstance(value, dict):
        kind = _KINDS.get(type(value), type(value).__name__)
        raise ToolArgumentsError(
            f"Invalid tool arguments: arguments must be a JSON object such as "
            f'{{"name": "value"}}, not {kind}: {_snippet(raw, 0)}'
        )
    return value


def _unwrap(value: Any) -> Any:
    """Decode a double-encoded object: ``"{\\"a\\": 1}"`` -> ``{"a": 1}``."""
    for _ in range(2):
        if not isinstance(value, str) or not value.strip().startswith(("{", "[")):
            return value
        try:
            value = json.loads(value)
        except ValueError:
            try:
                value = _Lenient(value.strip()).parse()
            except JSONRepairError:
                return value
    return value


def _first_container(text: str) -> int | None:
    positions = [pos for pos in (text.find("{"), text.find("[")) if pos >= 0]
    return min(positions) if positions else None


def _snippet(text: str, pos: int, width: int = 30) -> str:
    start = max(0, pos - width)
    piece = text[start : pos + width]
    return ("…" if start else "") + repr(piece) + ("…" if pos + width < len(text) else "")


def _describe(raw: str, exc: JSONRepairError) -> str:
    detail, pos = str(exc), exc.pos
    try:
        json.loads(raw)
    except json.JSONDecodeError as strict:  # the strict parser's account is the clearest
        detail, pos = strict.msg, strict.pos
    except (ValueError, RecursionError):
        pass
    line = raw.count("\n", 0, pos) + 1
    column = pos - (raw.rfind("\n", 0, pos) + 1) + 1
    return (
        f"Invalid tool arguments: {detail} at line {line} column {column} (char {pos}), "
        f"near {_snippet(raw, pos)}. The arguments must be a JSON object with double-quoted "
        f'keys and strings, e.g. {{"path": "notes.txt"}}. Send the call again with valid JSON.'
    )


class _Lenient:
    """A forgiving recursive-descent JSON reader; stops quietly at the end of the text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def parse(self) -> Any:
        self._skip()
        if self.pos >= len(self.text):
            raise JSONRepairError("no JSON value found", self.text, self.pos)
        return self._value(depth=0)

    def _fail(self, message: str) -> JSONRepairError:
        return JSONRepairError(message, self.text, self.pos)

    def _skip(self) -> None:
        text, n = self.text, len(self.text)
        while self.pos < n:
            ch = text[self.pos]
            if ch.isspace():
                self.pos += 1
            elif text.startswith("//", self.pos) or ch == "#":
                end = text.find("\n", self.pos)
                self.pos = n if end < 0 else end + 1
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                self.pos = n if end < 0 else end + 2
            else:
                return

    def _value(self, depth: int) -> Any:
        if depth > 200:
            raise self._fail("nesting too deep")
        self._skip()
        if self.pos >= len(self.text):
            return None  # truncated right after a key or comma
        ch = self.text[self.pos]
        if ch == "{":
            return self._object(depth)
        if ch == "[":
            return self._array(depth)
        if ch in "\"'":
            return self._string(ch)
        if ch in ",}]":
            return None  # a missing value: {"a": , "b": 1}
        match = _NUMBER.match(self.text, self.pos)
        if match and (ch.isdigit() or ch in "+-."):
            self.pos = match.end()
            number = match.group().lstrip("+")
            try:
                return json.loads(number)
            except ValueError:
                return float(number)
        return self._bare_word()

    def _bare_word(self) -> Any:
        match = _BARE_WORD.match(self.text, self.pos)
        word = match.group().strip() if match else ""
        if not word:
            raise self._fail(f"unexpected character {self.text[self.pos]!r}")
        self.pos = match.end() if match else self.pos
        return _LITERALS.get(word, word)

    def _object(self, depth: int) -> dict[str, Any]:
        self.pos += 1
        result: dict[str, Any] = {}
        while True:
            self._skip()
            if self.pos >= len(self.text):
                return result
            ch = self.text[self.pos]
            if ch == "}":
                self.pos += 1
                return result
            if ch == ",":
                self.pos += 1
                continue
            key = self._key()
            self._skip()
            if self.text.startswith(":", self.pos) or self.text.startswith("=", self.pos):
                self.pos += 1
            elif self.pos < len(self.text):
                raise self._fail(f"expected ':' after the key {key!r}")
            result[key] = self._value(depth + 1)

    def _key(self) -> str:
        ch = self.text[self.pos]
        if ch in "\"'":
            return self._string(ch, key=True)
        match = _KEY.match(self.text, self.pos)
        if not match:
            raise self._fail(f"expected a key, found {ch!r}")
        self.pos = match.end()
        return match.group()

    def _array(self, depth: int) -> list[Any]:
        self.pos += 1
        result: list[Any] = []
        while True:
            self._skip()
            if self.pos >= len(self.text):
                return result
            ch = self.text[self.pos]
            if ch == "]":
                self.pos += 1
                return result
            if ch == ",":
                self.pos += 1
                continue
            if ch == "}":
                raise self._fail("'}' where ']' or a value was expected")
            result.append(self._value(depth + 1))

    def _string(self, quote: str, *, key: bool = False) -> str:
        text, n = self.text, len(self.text)
        self.pos += 1
        out: list[str] = []
        while self.pos < n:
            ch = text[self.pos]
            if ch == "\\" and self.pos + 1 < n:
                self.pos += self._escape(out)
                continue
            if ch == quote and (key or self._closes_string()):
                self.pos += 1
                return "".join(out)
            out.append(ch)
            self.pos += 1
        return "".join(out)  # unterminated: the text was cut off

    def _closes_string(self) -> bool:
        """A quote ends a string value when what follows can follow a value; otherwise it is an
        unescaped quote inside the text, e.g. ``"say "hi" twice"``. (Keys end at any quote.)"""
        rest = self.text[self.pos + 1 :].lstrip()
        return not rest or rest[0] in _VALUE_END or rest.startswith(("//", "/*"))

    def _escape(self, out: list[str]) -> int:
        code = self.text[self.pos + 1]
        if code == "u":
            digits = self.text[self.pos + 2 : self.pos + 6]
            if re.fullmatch(r"[0-9a-fA-F]{4}", digits):
                point = int(digits, 16)
                low = self.text[self.pos + 6 : self.pos + 12]
                if 0xD800 <= point < 0xDC00 and re.fullmatch(r"\\u[dD][c-fC-F][0-9a-fA-F]{2}", low):
                    point = 0x10000 + ((point - 0xD800) << 10) + (int(low[2:], 16) - 0xDC00)
                    out.append(chr(point))
                    return 12
                out.append(chr(point))
                return 6
        out.append(_ESCAPES.get(code, code if code in "\"'" else "\\" + code))
        return 2
