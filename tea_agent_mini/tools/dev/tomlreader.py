"""Read TOML: ``tomllib`` on Python 3.11+, and on 3.10 a small parser of our own.

The fallback covers what pyproject.toml files use: tables, arrays of tables, dotted and quoted
keys, basic/literal/multi-line strings, integers (also hex/octal/binary), floats, booleans,
dates and times, arrays and inline tables. It is lenient where TOML is strict about style
(leading zeros, newlines inside inline tables) and strict where a mistake would change values
(duplicate keys, unterminated strings).
"""

from __future__ import annotations

import datetime as dt
import re
import sys
from pathlib import Path
from typing import Any

from tea_agent_mini.errors import ToolError

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_NUMBER = re.compile(
    r"[+-]?(?:0x[0-9A-Fa-f_]+|0o[0-7_]+|0b[01_]+|inf|nan"
    r"|\d[\d_]*(?:\.\d[\d_]*)?(?:[eE][+-]?\d[\d_]*)?)"
)
_DATETIME = re.compile(
    r"(\d{4}-\d{2}-\d{2})(?:[Tt ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|z|[+-]\d{2}:\d{2})?)?"
)
_TIME = re.compile(r"\d{2}:\d{2}:\d{2}(?:\.\d+)?")
_ESCAPES = {
    "b": "\b",
    "t": "\t",
    "n": "\n",
    "f": "\f",
    "r": "\r",
    '"': '"',
    "\\": "\\",
    "e": "\x1b",
}


class TomlDecodeError(ToolError, ValueError):
    """The text is not TOML this reader understands (the message names the line)."""


def load_toml(path: Path) -> tuple[dict[str, Any], str]:
    """(data, parser name) for a TOML file: ``tomllib`` when the stdlib has it."""
    data = path.read_bytes().decode("utf-8")
    if sys.version_info >= (3, 11):
        import tomllib

        try:
            return tomllib.loads(data), "tomllib"
        except tomllib.TOMLDecodeError as exc:
            raise TomlDecodeError(str(exc)) from exc
    return loads(data), "fallback"


def loads(text: str) -> dict[str, Any]:
    """Parse TOML text with the fallback parser."""
    return _Parser(text).parse()


class _Parser:
    def __init__(self, text: str) -> None:
        self.s = text.replace("\r\n", "\n")
        self.i = 0
        self.root: dict[str, Any] = {}
        self.current = self.root
        self.explicit: set[tuple[str, ...]] = set()
        self.array_tables: set[int] = set()  # id() of the lists made by [[...]]

    def error(self, message: str) -> TomlDecodeError:
        line = self.s.count("\n", 0, self.i) + 1
        return TomlDecodeError(f"{message} (line {line})")

    def parse(self) -> dict[str, Any]:
        while True:
            self.skip_blank_lines()
            if self.i >= len(self.s):
                return self.root
            if self.s.startswith("[[", self.i):
                self.array_table()
            elif self.s[self.i] == "[":
                self.table()
            else:
                self.key_value(self.current)
            self.end_of_line()

    # ---- layout -------------------------------------------------------------------------

    def skip_ws(self) -> None:
        while self.i < len(self.s) and self.s[self.i] in " \t":
            self.i += 1

    def skip_comment(self) -> None:
        if self.s.startswith("#", self.i):
            end = self.s.find("\n", self.i)
            self.i = len(self.s) if end < 0 else end

    def skip_blank_lines(self) -> None:
        while True:
            self.skip_ws()
            self.skip_comment()
            if self.s.startswith("\n", self.i):
                self.i += 1
            else:
                return

    def end_of_line(self) -> None:
        self.skip_ws()
        self.skip_comment()
        if self.i < len(self.s) and self.s[self.i] != "\n":
            raise self.error(f"unexpected {self.s[self.i]!r} after a value")

    def expect(self, token: str) -> None:
        if not self.s.startswith(token, self.i):
            raise self.error(f"expected {token!r}")
        self.i += len(token)

    # ---- keys and tables ----------------------------------------------------------------

    def key(self) -> list[str]:
        parts = []
        while True:
            self.skip_ws()
            char = self.s[self.i : self.i + 1]
            if char == '"':
                parts.append(self.basic_string())
            elif char == "'":
                parts.append(self.literal_string())
            else:
                match = _BARE_KEY.match(self.s, self.i)
                if not match:
                    raise self.error("expected a key")
                parts.append(match.group())
                self.i = match.end()
            self.skip_ws()
            if not self.s.startswith(".", self.i):
                return parts
            self.i += 1

    def descend(self, table: dict[str, Any], parts: list[str]) -> dict[str, Any]:
        for part in parts:
            value = table.setdefault(part, {})
            if isinstance(value, list) and id(value) in self.array_tables:
                value = value[-1]
            if not isinstance(value, dict):
                raise self.error(f"key {part!r} is already a value, not a table")
            table = value
        return table

    def table(self) -> None:
        self.i += 1
        parts = self.key()
        self.expect("]")
        if tuple(parts) in self.explicit:
            raise self.error(f"table [{'.'.join(parts)}] is defined twice")
        self.explicit.add(tuple(parts))
        self.current = self.descend(self.root, parts)

    def array_table(self) -> None:
        self.i += 2
        parts = self.key()
        self.expect("]]")
        parent = self.descend(self.root, parts[:-1])
        items = parent.setdefault(parts[-1], [])
        if not isinstance(items, list) or (items and id(items) not in self.array_tables):
            raise self.error(f"[[{'.'.join(parts)}]] conflicts with an earlier value")
        self.array_tables.add(id(items))
        self.current = {}
        items.append(self.current)

    def key_value(self, table: dict[str, Any]) -> None:
        parts = self.key()
        self.expect("=")
        self.skip_ws()
        value = self.value()
        target = self.descend(table, parts[:-1])
        if parts[-1] in target:
            raise self.error(f"key {'.'.join(parts)!r} is defined twice")
        target[parts[-1]] = value

    # ---- values -------------------------------------------------------------------------

    def value(self) -> Any:
        s, i = self.s, self.i
        if s.startswith('"""', i):
            return self.multiline('"""')
        if s.startswith("'''", i):
            return self.multiline("'''")
        char = s[i : i + 1]
        if char == '"':
            return self.basic_string()
        if char == "'":
            return self.literal_string()
        if char == "[":
            return self.array()
        if char == "{":
            return self.inline_table()
        for word, result in (("true", True), ("false", False)):
            if s.startswith(word, i) and not _BARE_KEY.match(s, i + len(word)):
                self.i += len(word)
                return result
        return self.scalar()

    def basic_string(self) -> str:
        self.i += 1
        out: list[str] = []
        while True:
            char = self.s[self.i : self.i + 1]
            if char in ("", "\n"):
                raise self.error("unterminated string")
            self.i += 1
            if char == '"':
                return "".join(out)
            out.append(self.escape() if char == "\\" else char)

    def escape(self) -> str:
        char = self.s[self.i : self.i + 1]
        self.i += 1
        if char in _ESCAPES:
            return _ESCAPES[char]
        width = {"u": 4, "U": 8, "x": 2}.get(char)
        digits = self.s[self.i : self.i + (width or 0)]
        if not width or not re.fullmatch(r"[0-9A-Fa-f]+", digits) or len(digits) != width:
            raise self.error(f"invalid escape \\{char}")
        self.i += width
        return chr(int(digits, 16))

    def literal_string(self) -> str:
        end = self.s.find("'", self.i + 1)
        newline = self.s.find("\n", self.i + 1)
        if end < 0 or 0 <= newline < end:
            raise self.error("unterminated string")
        text = self.s[self.i + 1 : end]
        self.i = end + 1
        return text

    def multiline(self, quotes: str) -> str:
        self.i += 3
        if self.s.startswith("\n", self.i):
            self.i += 1  # a newline right after the opening quotes is not content
        out = []
        while True:
            if self.i >= len(self.s):
                raise self.error("unterminated multi-line string")
            if self.s.startswith(quotes, self.i):
                run = len(self.s[self.i :]) - len(self.s[self.i :].lstrip(quotes[0]))
                run = min(run, 5)  # up to two quotes may end the content
                out.append(quotes[0] * (run - 3))
                self.i += run
                return "".join(out)
            char = self.s[self.i]
            self.i += 1
            if char == "\\" and quotes == '"""':
                if re.match(r"[ \t]*\n", self.s[self.i :]):
                    while self.i < len(self.s) and self.s[self.i] in " \t\n":
                        self.i += 1  # line-ending backslash: trim to the next content
                else:
                    out.append(self.escape())
            else:
                out.append(char)

    def array(self) -> list[Any]:
        self.i += 1
        items: list[Any] = []
        while True:
            self.skip_blank_lines()
            if self.s.startswith("]", self.i):
                self.i += 1
                return items
            items.append(self.value())
            self.skip_blank_lines()
            if self.s.startswith(",", self.i):
                self.i += 1
            elif not self.s.startswith("]", self.i):
                raise self.error("expected ',' or ']' in an array")

    def inline_table(self) -> dict[str, Any]:
        self.i += 1
        table: dict[str, Any] = {}
        while True:
            self.skip_blank_lines()
            if self.s.startswith("}", self.i):
                self.i += 1
                return table
            self.key_value(table)
            self.skip_blank_lines()
            if self.s.startswith(",", self.i):
                self.i += 1
            elif not self.s.startswith("}", self.i):
                raise self.error("expected ',' or '}' in an inline table")

    def scalar(self) -> Any:
        match = _DATETIME.match(self.s, self.i)
        if match:
            self.i = match.end()
            return _datetime(*match.groups())
        match = _TIME.match(self.s, self.i)
        if match:
            self.i = match.end()
            return dt.time.fromisoformat(_trim_fraction(match.group()))
        match = _NUMBER.match(self.s, self.i)
        if not match or _BARE_KEY.match(self.s, match.end()):
            raise self.error("expected a value (string, number, boolean, array or table)")
        self.i = match.end()
        return _number(match.group())


def _number(text: str) -> int | float:
    clean = text.replace("_", "")
    sign = -1 if clean.startswith("-") else 1
    body = clean.lstrip("+-")
    if body[:2] in ("0x", "0o", "0b"):
        return sign * int(body[2:], {"0x": 16, "0o": 8, "0b": 2}[body[:2]])
    if body in ("inf", "nan") or any(c in body for c in ".eE"):
        return float(clean)
    return int(clean)


def _trim_fraction(text: str) -> str:
    """fromisoformat on 3.10 takes at most 6 fractional digits."""
    return re.sub(r"(\.\d{6})\d+", r"\1", text)


def _datetime(day: str, time: str | None, offset: str | None) -> dt.date | dt.datetime:
    if time is None:
        return dt.date.fromisoformat(day)
    if len(time) == 5:
        time += ":00"
    zone = "+00:00" if offset in ("Z", "z") else (offset or "")
    return dt.datetime.fromisoformat(f"{day}T{_trim_fraction(time)}{zone}")
