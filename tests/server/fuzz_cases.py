"""Bad requests for every operation of an OpenAPI document: the cases ``test_fuzz_routes`` sends.

Bodies are built as raw JSON text, so they can carry what ``json.dumps`` would never write: lone
surrogate escapes, numbers beyond int64 or float range, nesting 100k deep, broken syntax.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

RAW = "\x00raw\x00"  # where a raw JSON literal goes in a body before it is serialised
DEEP = 100_000
MEGA = 1_000_000

MALFORMED = [
    b"{",
    b'{"a": }',
    b"{'a': 1}",
    b'{"a": 1} trailing',
    b"\xff\xfe\x00{",
    b'{"a": "\xed\xa0\x80"}',  # a surrogate encoded as bytes: not UTF-8
    b"[1, 2]",
    b'"text"',
    b"null",
    b"12345678901234567890123",
    b'{"\\ud800": 1}',
    b'{"a": "\\udfff"}',
    b'{"a": NaN}',
    b'{"a": -Infinity}',
]
DEEP_BODIES = [
    b"[" * DEEP + b"]" * DEEP,
    b'{"a":' * DEEP + b"1" + b"}" * DEEP,
    b"[" * DEEP,
]
HUGE_NUMBERS = [str(2**63), str(-(2**64)), "1e309", "-1e309", "1.7e308", "9" * 5000]
SURROGATES = ['"\\ud800"', '"ok \\udc00 then"', '"\\udbff\\udbff"']
WRONG_TYPES: dict[str, Any] = {
    "string": "fuzz",
    "integer": 7,
    "number": 1.5,
    "boolean": True,
    "array": [1, "two"],
    "object": {"a": 1},
    "null": None,
}
YAML_FILES = [
    b'main_model:\n  model_name: "\\ud800"\n',
    b"agent: " + b"[" * DEEP + b"]" * DEEP,
    b"".join(b" " * i + b"k:\n" for i in range(700)),
    b"agent:\n  max_iterations: " + str(2**70).encode() + b"\n",
    b"main_model:\n  temperature: .inf\n",
    b"1: 2\n? [a, b]\n: c\n",
    b"!!python/object:os.system ls\n",
    b"a: &a [x, x]\nb: &b [*a, *a]\nc: &c [*b, *b]\nd: [*c, *c]\n",
]
PATH_IDS = [
    "0",
    "-1",
    "1.5",
    str(2**63 - 1),
    str(2**63),
    str(2**64),
    str(-(2**63) - 1),
    "9" * 400,
    "1e309",
    "\u00b2",  # a digit to str.isdigit, not to int()
    "%ED%A0%80",
    "%FF%FE",
    "%00",
    "x" * 2000,
    "%2E%2E%2F%2E%2E%2Fetc%2Fpasswd",
    "a%0Ab",
]
QUERY_VALUES = [
    "x",
    "-1",
    str(2**63),
    str(-(2**64)),
    "1e309",
    "9" * 5000,
    "\u00b2",
    "%ED%A0%80",
    "%FF",
    "%00",
    "x" * 8000,
]


@dataclass(frozen=True)
class Case:
    method: str
    url: str
    label: str
    content: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)


def json_case(method: str, url: str, label: str, content: bytes) -> Case:
    return Case(method, url, label, content, {"Content-Type": "application/json"})


class Schemas:
    """Field walking over a document's schemas (``$ref``, ``anyOf``, ``enum``, ``const``)."""

    def __init__(self, document: dict[str, Any]) -> None:
        self.components = document.get("components", {}).get("schemas", {})

    def resolve(self, schema: dict[str, Any]) -> dict[str, Any]:
        while "$ref" in schema:
            schema = self.components[schema["$ref"].rsplit("/", 1)[-1]]
        return schema

    def types(self, schema: dict[str, Any]) -> set[str]:
        schema = self.resolve(schema)
        if "anyOf" in schema:
            return set().union(*(self.types(option) for option in schema["anyOf"]))
        if "type" in schema:
            kind = schema["type"]
            return {kind, "number"} if kind == "integer" else {kind}
        values = schema.get("enum", [schema["const"]] if "const" in schema else [])
        names = {bool: "boolean", int: "integer", float: "number", str: "string"}
        return {names.get(type(v), "null") for v in values} or set(WRONG_TYPES)

    def fields(self, schema: dict[str, Any], path: tuple[Any, ...] = ()) -> Iterator[tuple]:
        """``(path, schema)`` of every declared property, nested objects and arrays included."""
        schema = self.resolve(schema)
        for name, sub in schema.get("properties", {}).items():
            yield (*path, name), sub
            yield from self.fields(sub, (*path, name))
        items = schema.get("items")
        if isinstance(items, dict) and self.resolve(items).get("properties"):
            yield from self.fields(items, (*path, 0))

    def sample(self, schema: dict[str, Any], name: str = "value") -> Any:
        """A plausible value: required properties only, so optional fields start absent."""
        schema = self.resolve(schema)
        if "anyOf" in schema:
            return self.sample(schema["anyOf"][0], name)
        if "enum" in schema or "const" in schema:
            return schema.get("enum", [schema.get("const")])[0]
        kind = schema.get("type")
        if kind == "object":
            props = schema.get("properties", {})
            return {key: self.sample(props[key], key) for key in schema.get("required", [])}
        if kind == "array":
            count = schema.get("minItems", 0)
            return [self.sample(schema.get("items", {}), name) for _ in range(count)]
        return {"integer": 1, "number": 1, "boolean": False}.get(kind or "", f"fuzz_{name}")


def with_value(body: Any, path: tuple[Any, ...], value: Any) -> Any:
    """A copy of ``body`` with ``value`` at ``path`` (missing objects and lists are made)."""
    copy = json.loads(json.dumps(body))
    target = copy
    for key, following in zip(path, path[1:], strict=False):
        empty: Any = [] if isinstance(following, int) else {}
        if isinstance(key, int):
            while len(target) <= key:
                target.append(empty)
        elif not isinstance(target.get(key), (dict, list)):
            target[key] = empty
        target = target[key]
    if isinstance(path[-1], int):
        while len(target) <= path[-1]:
            target.append(None)
    target[path[-1]] = value
    return copy


def raw_body(body: Any, path: tuple[Any, ...], literal: str) -> bytes:
    """``body`` as JSON text with the raw ``literal`` at ``path``."""
    text = json.dumps(with_value(body, path, RAW))
    return text.replace(json.dumps(RAW), literal).encode()


def dotted(path: tuple[Any, ...]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".")


def body_cases(
    schemas: Schemas, method: str, url: str, schema: dict[str, Any], baseline: Any
) -> Iterator[Case]:
    """Malformed and deep JSON, then per declared field: wrong types, huge numbers, lone
    surrogates and (for strings) a 1 MB string, each in an otherwise valid body."""
    for content in MALFORMED:
        yield json_case(method, url, f"malformed {content[:24]!r}", content)
    for content in DEEP_BODIES:
        yield json_case(method, url, f"deep {content[:8]!r}", content)
    yield Case(method, url, "no content type", json.dumps(baseline).encode(), {})
    for path, sub in schemas.fields(schema):
        name = dotted(path)
        accepted = schemas.types(sub)
        literals = [json.dumps(v) for k, v in WRONG_TYPES.items() if k not in accepted]
        literals += HUGE_NUMBERS + SURROGATES
        literals.append("[" * DEEP + "]" * DEEP)
        if "string" in accepted:
            literals.append(json.dumps("x" * MEGA))
        for literal in literals:
            content = raw_body(baseline, path, literal)
            yield json_case(method, url, f"{name} = {literal[:24]}", content)


def multipart(parts: list[tuple[str, bytes]], boundary: str = "fuzzboundary") -> bytes:
    """A multipart body from raw part headers and payloads, byte for byte as given."""
    out = b""
    for disposition, payload in parts:
        head = f"--{boundary}\r\nContent-Disposition: {disposition}\r\n\r\n"
        out += head.encode() + payload + b"\r\n"
    return out + f"--{boundary}--\r\n".encode()


def multipart_cases(method: str, url: str) -> Iterator[Case]:
    """Odd file names and broken framing for a multipart route."""
    kind = "multipart/form-data; boundary=fuzzboundary"
    names = [
        "../../etc/passwd",
        "a\x00b.txt",
        "x" * 5000 + ".txt",
        "\u00e9t\u00e9.yaml",
        "\\ud800.txt",
        "%ED%A0%80.txt",
        "",
        "con.yaml",
    ]
    for name in names:
        for charset in ("", "; charset=raw_unicode_escape", "; charset=no-such-codec"):
            body = multipart(
                [
                    (f'form-data; name="file"; filename="{name}"', b"a: 1\n"),
                    ('form-data; name="name"', name.encode()),
                ]
            )
            yield Case(
                method, url, f"file {name[:20]!r}{charset}", body, {"Content-Type": kind + charset}
            )
    for number, payload in enumerate(YAML_FILES):  # a new name each: no 409 before the save
        body = multipart([(f'form-data; name="file"; filename="fuzz{number}.yaml"', payload)])
        yield Case(method, url, f"file {payload[:24]!r}", body, {"Content-Type": kind})
    broken: list[tuple[str, bytes, str]] = [
        ("no boundary", b"--x\r\n", "multipart/form-data"),
        ("garbage", b"\xff" * 64, kind),
        ("no file", multipart([('form-data; name="other"', b"1")]), kind),
        ("file as field", multipart([('form-data; name="file"', b"text")]), kind),
        ("empty file", multipart([('form-data; name="file"; filename="e.txt"', b"")]), kind),
        ("binary file", multipart([('form-data; name="file"; filename="b"', b"\xff\x00")]), kind),
        ("two files", multipart([('form-data; name="file"; filename="a"', b"1")] * 2), kind),
        ("unterminated", b"--fuzzboundary\r\nContent-Disposition: form-data", kind),
    ]
    for label, body, content_type in broken:
        yield Case(method, url, label, body, {"Content-Type": content_type})


def fill(path: str, values: Mapping[str, str]) -> str:
    """``/a/{id}/b`` with each ``{name}`` replaced by ``values[name]``."""
    out, rest = "", path
    while "{" in rest:
        head, _, tail = rest.partition("{")
        name, _, rest = tail.partition("}")
        out += head + values[name]
    return out + rest
