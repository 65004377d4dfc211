"""The fallback TOML reader (for Python 3.10), checked against known values and tomllib."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

import pytest

from tea_agent_mini.tools.dev.tomlreader import TomlDecodeError, load_toml, loads

ROOT = Path(__file__).resolve().parents[2]

SAMPLE = r'''
# a comment
title = "TOML \"sample\" \u00e9\tend"   # trailing comment
literal = 'C:\Users\path'
"quoted key" = 1
dotted.key.here = true
empty = ""
multi = """
first line
  second \
    continued"""
multi_literal = \'''
raw \n stays
\'''
quotes = """she said "hi"""""
ints = [1_000, -7, +3, 0xff, 0o17, 0b101]
floats = [3.14, -0.5e3, 6E-2, inf, -inf]
bools = [true, false]
nested = [[1, 2], ["a", 'b'], []]
trailing = [
    "x",  # comment inside
    "y",
]
inline = { name = "tea", version.major = 1, list = [1, 2] }
day = 1979-05-27
moment = 1979-05-27T07:32:00Z
local = 1979-05-27 07:32:00.123456789
clock = 07:32:00

[project]
name = "demo"
dependencies = ["httpx>=0.24", "PyYAML"]

[project.optional-dependencies]
test = ["pytest"]

[[servers]]
name = "alpha"
[servers.limits]
cpu = 2

[[servers]]
name = "beta"

[tool."quoted.table"]
ok = true
'''.replace("\\'''", "'''")  # a raw ''' string cannot hold ''' itself


def test_fallback_reads_the_sample():
    data = loads(SAMPLE)
    assert data["title"] == 'TOML "sample" é\tend'
    assert data["literal"] == r"C:\Users\path"
    assert data["quoted key"] == 1
    assert data["dotted"] == {"key": {"here": True}}
    assert data["empty"] == ""
    assert data["multi"] == "first line\n  second continued"
    assert data["multi_literal"] == "raw \\n stays\n"
    assert data["quotes"] == 'she said "hi""'
    assert data["ints"] == [1000, -7, 3, 255, 15, 5]
    assert data["floats"][:3] == [3.14, -500.0, 0.06] and data["floats"][3:] == [
        float("inf"),
        float("-inf"),
    ]
    assert data["nested"] == [[1, 2], ["a", "b"], []]
    assert data["trailing"] == ["x", "y"]
    assert data["inline"] == {"name": "tea", "version": {"major": 1}, "list": [1, 2]}
    assert data["day"] == dt.date(1979, 5, 27)
    assert data["moment"] == dt.datetime(1979, 5, 27, 7, 32, tzinfo=dt.timezone.utc)
    assert data["local"] == dt.datetime(1979, 5, 27, 7, 32, 0, 123456)
    assert data["clock"] == dt.time(7, 32)
    assert data["project"]["optional-dependencies"] == {"test": ["pytest"]}
    assert data["servers"] == [{"name": "alpha", "limits": {"cpu": 2}}, {"name": "beta"}]
    assert data["tool"] == {"quoted.table": {"ok": True}}


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib is stdlib from 3.11")
@pytest.mark.parametrize("text", [SAMPLE, None])
def test_fallback_agrees_with_tomllib(text):
    import tomllib

    if text is None:
        text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert loads(text) == tomllib.loads(text)


def test_load_toml_picks_the_parser():
    data, parser = load_toml(ROOT / "pyproject.toml")
    assert parser == ("tomllib" if sys.version_info >= (3, 11) else "fallback")
    assert data["project"]["name"] == "tea_agent_mini"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('a = "open\nb = 1', r"unterminated string \(line 1\)"),
        ("a = 1\na = 2", r"defined twice \(line 2\)"),
        ("[t]\n[t]", "defined twice"),
        ("a = [1, 2", "expected"),
        ("a = 1 b", "unexpected 'b'"),
        ("a = nope", "expected a value"),
        ('a = "bad \\q escape"', "invalid escape"),
        ("a = 1\n[a]", "already a value"),
    ],
)
def test_errors_name_the_line(text, message):
    with pytest.raises(TomlDecodeError, match=message):
        loads(text)
