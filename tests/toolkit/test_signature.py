"""A tool's schema and description come from its signature and docstring."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pytest

from tea_agent_mini.toolkit.registry import tool
from tea_agent_mini.toolkit.signature import (
    SignatureError,
    describe_function,
    parse_docstring,
    property_schema,
)

LIMIT = 50


def search(
    ctx: Any,
    query: str,
    limit: Annotated[int, {"minimum": 1}, f"at most this many results (up to {LIMIT})"] = 10,
    kind: Literal["file", "dir"] = "file",
    tags: list[str] | None = None,
    exact: bool = False,
    weight: float | None = None,
    payload: dict[str, Any] | str = "",
) -> str:
    """Find things in the workspace.

    Matches are ranked
    by name.

    Args:
        query: what to look for; words
            on a second line continue the description
        limit: overridden by the Annotated text
        kind: what kind of entry
        tags: labels an entry must carry
        exact: match the whole name
        weight: a score to start from
        payload: extra data, as an object or JSON text

    Returns:
        the matches, one per line (not part of any parameter)
    """
    return query


def test_description_joins_lines_and_keeps_paragraphs() -> None:
    description, _ = describe_function(search)
    assert description == "Find things in the workspace.\n\nMatches are ranked by name."


def test_types_defaults_and_descriptions_become_the_schema() -> None:
    _, schema = describe_function(search)
    properties = schema["properties"]
    assert list(properties) == ["query", "limit", "kind", "tags", "exact", "weight", "payload"]
    assert schema["required"] == ["query"]
    assert properties["query"] == {
        "type": "string",
        "description": "what to look for; words on a second line continue the description",
    }
    assert properties["limit"] == {
        "type": "integer",
        "minimum": 1,
        "description": "at most this many results (up to 50)",
    }
    assert properties["kind"]["type"] == "string"
    assert properties["kind"]["enum"] == ["file", "dir"]
    assert properties["tags"]["items"] == {"type": "string"}
    assert properties["exact"]["type"] == "boolean"
    assert properties["weight"]["type"] == "number"
    assert properties["payload"]["type"] == ["object", "string"]
    assert "Returns" not in str(schema)


def test_the_decorator_fills_in_what_it_is_not_given() -> None:
    decorated = tool("toolkit_search_test")(search)
    spec = decorated.tool_spec
    assert spec.description.startswith("Find things")
    assert spec.parameters["required"] == ["query"]

    def other(ctx: Any, text: str) -> str:
        """Echo.

        Args:
            text: what to echo
        """
        return text

    given = tool("toolkit_other_test", "Given text.")(other).tool_spec
    assert given.description == "Given text."
    assert given.parameters["properties"]["text"]["description"] == "what to echo"


def test_an_undescribed_parameter_is_refused() -> None:
    def vague(ctx: Any, text: str) -> str:
        """Does something."""
        return text

    with pytest.raises(SignatureError, match="'text' is not described"):
        describe_function(vague)


def test_a_tool_without_any_description_is_refused() -> None:
    def silent(ctx: Any) -> str:
        return ""

    with pytest.raises(ValueError, match="needs a description"):
        tool("toolkit_silent_test")(silent)


def test_a_parameter_without_a_type_is_refused() -> None:
    def untyped(ctx, text):  # type: ignore[no-untyped-def]
        """Untyped.

        Args:
            text: anything
        """

    with pytest.raises(SignatureError, match="no type hint"):
        describe_function(untyped)


def test_an_unmappable_type_names_the_way_out() -> None:
    with pytest.raises(SignatureError, match="Annotated"):
        property_schema(complex)


def test_unions_merge_their_types_unless_keywords_clash_and_literal_ints_keep_their_type() -> None:
    assert property_schema(list[str] | str) == {
        "type": ["array", "string"],
        "items": {"type": "string"},
    }
    assert property_schema(list[str] | list[int]) == {
        "anyOf": [
            {"type": "array", "items": {"type": "string"}},
            {"type": "array", "items": {"type": "integer"}},
        ]
    }
    assert property_schema(Literal[1, 2]) == {"type": "integer", "enum": [1, 2]}


def test_docstring_sections_other_than_args_are_left_out() -> None:
    summary, arguments = parse_docstring(
        "Do it.\n\nArgs:\n    a: first\n    b (int): second\n\nRaises:\n    ToolError: never"
    )
    assert summary == "Do it."
    assert arguments == {"a": "first", "b": "second"}


def test_every_shipped_tool_declares_its_parameters_once() -> None:
    """The schema a shipped tool sends is the one its signature and docstring give: no tool
    keeps a second, hand-written copy that could drift from the function."""
    from tea_agent_mini.toolkit.registry import Toolkit

    toolkit = Toolkit.load()
    assert not toolkit.load_errors
    for spec in toolkit.specs():
        description, parameters = describe_function(spec.func)
        assert (description, parameters) == (spec.description, spec.parameters), spec.name
