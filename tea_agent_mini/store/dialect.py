"""The repositories' SQL (SQLite's) as PostgreSQL's: a small textual translation, cached.

It relies on how the repositories write SQL: keywords and type names in capitals, identifiers
in lower case, strings in single quotes, ``?`` placeholders. String literals and quoted names
are never touched. What changes:

- ``?`` becomes ``$1``, ``$2`` ...;
- ``LIKE`` becomes ``ILIKE`` (SQLite's LIKE ignores the case of ASCII letters, PostgreSQL's
  does not); ``x = ? COLLATE NOCASE`` becomes ``lower(x) = lower(?)``;
- ``MAX(a, b)`` / ``MIN(a, b)`` of two values become ``GREATEST`` / ``LEAST``, ``IFNULL``
  ``COALESCE``; SQLite's planner hints (``INDEXED BY``, a unary ``+``) are dropped;
- a subquery in FROM without a name gets one (PostgreSQL before 16 requires it);
- ``INSERT OR IGNORE`` becomes ``... ON CONFLICT DO NOTHING``;
- in DDL: ``INTEGER`` → ``BIGINT`` (SQLite's integers are 64-bit), ``REAL`` → ``DOUBLE
  PRECISION``, ``BLOB`` → ``BYTEA``; ``INTEGER PRIMARY KEY [AUTOINCREMENT]`` → an identity
  column; ``WITHOUT ROWID`` dropped, and a table that would have an implicit rowid gets a
  ``rowid`` identity column (queries order by it); ``UNIQUE COLLATE NOCASE`` → a unique index on
  ``lower(column)``; an FTS5 table → a table of ``rowid``, its columns and ``lexemes``
  (a ``tsvector`` of the space-separated terms, taken as they are: the repositories store
  precomputed terms) with a GIN index. Its MATCH queries are the one thing a repository writes
  per backend (``memory_keywords.py``).

Refused with a pointer to what to use instead: ``PRAGMA`` and ``sqlite_master`` (the
:class:`~.database.Database` methods), ``INSERT OR REPLACE`` (``ON CONFLICT (...) DO UPDATE``).
"""

from __future__ import annotations

import functools
import re

from ..errors import StoreError

__all__ = ["translate"]

_QUOTED = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"")
_HELD = re.compile("\x00(\\d+)\x00")
_TYPES = [
    (re.compile(r"\bINTEGER\b"), "BIGINT"),
    (re.compile(r"\bREAL\b"), "DOUBLE PRECISION"),
    (re.compile(r"\bBLOB\b"), "BYTEA"),
]
_EXPRESSIONS = [
    (re.compile(r"\bINDEXED BY \w+\s*"), ""),
    (re.compile(r"(?<=[\s(,])\+(?=[A-Za-z_])"), ""),  # unary plus, not a sum
    (re.compile(r"([\w.]+) = \? COLLATE NOCASE\b"), r"lower(\1) = lower(?)"),
    (re.compile(r"\bLIKE\b"), "ILIKE"),
    (re.compile(r"\bMAX\(([^(),]+),([^(),]+)\)"), r"GREATEST(\1,\2)"),
    (re.compile(r"\bMIN\(([^(),]+),([^(),]+)\)"), r"LEAST(\1,\2)"),
    (re.compile(r"\bIFNULL\("), "COALESCE("),
]
_SUBQUERY = re.compile(r"\b(?:FROM|JOIN)\s*\(")
_NAMED = re.compile(r"\s*(?:AS\b|[a-z_])")
_INTEGER_KEY = re.compile(r"^(\w+) INTEGER PRIMARY KEY(?: AUTOINCREMENT)?\b")
_CREATE_TABLE = re.compile(r"^\s*CREATE TABLE (IF NOT EXISTS )?(\w+)\s*\(")
_VIRTUAL = re.compile(r"^\s*CREATE VIRTUAL TABLE (IF NOT EXISTS )?(\w+) USING fts5\s*\(")
_DDL = re.compile(r"^\s*(?:CREATE|ALTER|DROP)\b")
_TABLE_CONSTRAINT = re.compile(r"^(?:PRIMARY KEY|UNIQUE|CHECK|FOREIGN KEY|CONSTRAINT)\b")


@functools.lru_cache(maxsize=4096)
def translate(sql: str) -> tuple[str, ...]:
    """PostgreSQL statements doing what the SQLite statement ``sql`` does (DDL may need more
    than one; the others need exactly one).

    Raises:
        StoreError: ``sql`` uses something PostgreSQL has no counterpart for.
    """
    held: list[str] = []

    def hold(match: re.Match[str]) -> str:
        held.append(match.group(0))
        return f"\x00{len(held) - 1}\x00"

    text = _QUOTED.sub(hold, sql)
    _refuse(text)
    if (virtual := _VIRTUAL.match(text)) is not None:
        statements = _fts_table(virtual, text)
    elif (table := _CREATE_TABLE.match(text)) is not None:
        statements = _create_table(table, text)
    else:
        statements = [_expressions(text)]
    if _DDL.match(text):
        statements = [_types(statement) for statement in statements]
    return tuple(_HELD.sub(lambda m: held[int(m.group(1))], s) for s in statements)


def is_ddl(sql: str) -> bool:
    return _DDL.match(sql) is not None


def _refuse(text: str) -> None:
    start = text.lstrip().upper()
    if start.startswith("PRAGMA"):
        raise StoreError(
            f"{text.strip()!r} is SQLite's; on PostgreSQL use the Database methods "
            "(data_version, schema_version, tables)"
        )
    if "sqlite_master" in text or "sqlite_schema" in text:
        raise StoreError("sqlite_master is SQLite's; use Database.tables()")
    if re.search(r"\bINSERT OR REPLACE\b|\bREPLACE INTO\b", text):
        raise StoreError(
            "INSERT OR REPLACE has no PostgreSQL counterpart; write "
            "INSERT ... ON CONFLICT (columns) DO UPDATE SET ..."
        )


def _expressions(text: str) -> str:
    for pattern, replacement in _EXPRESSIONS:
        text = pattern.sub(replacement, text)
    if re.match(r"\s*INSERT OR IGNORE\b", text):
        text = re.sub(r"\bINSERT OR IGNORE\b", "INSERT", text, count=1)
        text += " ON CONFLICT DO NOTHING"
    text = _name_subqueries(text)
    numbers = iter(range(1, text.count("?") + 1))
    return re.sub(r"\?", lambda _: f"${next(numbers)}", text)


def _name_subqueries(text: str) -> str:
    """``FROM (SELECT ...)`` -> ``FROM (SELECT ...) AS _q1`` where the subquery has no name."""
    count = 0
    position = 0
    while (found := _SUBQUERY.search(text, position)) is not None:
        end = _closing(text, found.end() - 1)
        position = found.end()
        if end < 0 or _NAMED.match(text, end + 1):
            continue
        count += 1
        text = f"{text[: end + 1]} AS _q{count}{text[end + 1 :]}"
    return text


def _closing(text: str, start: int) -> int:
    """The index of the parenthesis closing the one at ``start`` (-1: none)."""
    depth = 0
    for index in range(start, len(text)):
        if text[index] == "(":
            depth += 1
        elif text[index] == ")":
            depth -= 1
            if depth == 0:
                return index
    return -1


def _types(text: str) -> str:
    for pattern, replacement in _TYPES:
        text = pattern.sub(replacement, text)
    return text


def _body(match: re.Match[str], text: str) -> tuple[list[str], str]:
    """The top-level comma-separated items between the parentheses that ``match`` opens, and
    what follows the closing one."""
    end = _closing(text, match.end() - 1)
    if end < 0:
        raise StoreError(f"cannot translate unbalanced DDL: {text[:80]!r}")
    items, depth, start = [], 0, match.end()
    for index in range(match.end(), end):
        char = text[index]
        depth += (char == "(") - (char == ")")
        if char == "," and depth == 0:
            items.append(text[start:index].strip())
            start = index + 1
    items.append(text[start:end].strip())
    return [item for item in items if item], text[end + 1 :]


def _create_table(match: re.Match[str], text: str) -> list[str]:
    exists, table = match.group(1) or "", match.group(2)
    items, tail = _body(match, text)
    columns: list[str] = []
    extra: list[str] = []
    integer_key = False
    for item in items:
        if (key := _INTEGER_KEY.match(item)) is not None:
            integer_key = True
            identity = "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"
            item = f"{key.group(1)} {identity}{item[key.end() :]}"
        elif "COLLATE NOCASE" in item and not _TABLE_CONSTRAINT.match(item):
            name = item.split()[0]
            unique = re.search(r"\bUNIQUE\b", item) is not None
            item = re.sub(r"\s*\bUNIQUE\b|\s*\bCOLLATE NOCASE\b", "", item)
            if unique:
                extra.append(
                    f"CREATE UNIQUE INDEX {exists}{table}_{name}_nocase ON {table} (lower({name}))"
                )
        columns.append(_expressions(item))
    without_rowid = re.search(r"\bWITHOUT ROWID\b", tail) is not None
    if not integer_key and not without_rowid:
        # SQLite gives such a table an implicit rowid, in insertion order; queries may use it
        columns.append("rowid BIGINT GENERATED ALWAYS AS IDENTITY")
    tail = re.sub(r"\s*\bWITHOUT ROWID\b", "", tail)
    body = ",\n    ".join(columns)
    return [f"CREATE TABLE {exists}{table} (\n    {body}\n){tail}", *extra]


def _fts_table(match: re.Match[str], text: str) -> list[str]:
    exists, table = match.group(1) or "", match.group(2)
    items, _ = _body(match, text)
    columns = [item.split()[0] for item in items if "=" not in item]
    if not columns:
        raise StoreError(f"an FTS5 table without columns: {text[:80]!r}")
    joined = " || ' ' || ".join(columns)
    definitions = ", ".join(f"{name} TEXT NOT NULL DEFAULT ''" for name in columns)
    lexemes = f"array_to_tsvector(array_remove(string_to_array({joined}, ' '), ''))"
    return [
        f"CREATE TABLE {exists}{table} (rowid BIGINT PRIMARY KEY, {definitions}, "
        f"lexemes TSVECTOR GENERATED ALWAYS AS ({lexemes}) STORED)",
        f"CREATE INDEX {exists}{table}_lexemes ON {table} USING GIN (lexemes)",
    ]
