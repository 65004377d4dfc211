"""Tool names, schemas and result rendering: how MCP tools look to the model."""

from __future__ import annotations

import re

import pytest

from tea_agent_mini.mcp.client import McpTool
from tea_agent_mini.mcp.content import render_content
from tea_agent_mini.mcp.naming import build_specs, input_schema, tool_name
from tea_agent_mini.toolkit.registry import Toolkit


@pytest.mark.parametrize(
    ("server", "tool", "expected"),
    [
        ("files", "read_file", "mcp_files_read_file"),
        ("my-server", "get.weather", "mcp_my_server_get_weather"),
        ("git hub", "list/issues", "mcp_git_hub_list_issues"),
    ],
)
def test_names_are_prefixed_and_sanitised(server, tool, expected):
    assert tool_name(server, tool) == expected


def test_non_ascii_names_get_a_hash_that_tells_them_apart():
    first, second = tool_name("天气", "查询"), tool_name("天气", "预报")
    assert re.fullmatch(r"mcp_+[0-9a-f]{8}", first)
    assert first != second


def test_long_names_are_cut_to_64_characters_with_a_stable_hash():
    name = tool_name("a-very-long-server-name", "and_an_even_longer_tool_name_" + "x" * 40)
    assert len(name) == 64
    assert re.fullmatch(r"[A-Za-z0-9_]+", name)
    assert name.startswith("mcp_a_very_long_server_name_and_an_even")
    assert name == tool_name("a-very-long-server-name", "and_an_even_longer_tool_name_" + "x" * 40)
    assert name != tool_name("a-very-long-server-name", "and_an_even_longer_tool_name_" + "y" * 40)


def _func_factory(server, tool):
    return lambda ctx, **arguments: (server, tool, arguments)


def test_specs_carry_the_server_schema_and_annotations():
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
    tools = [
        McpTool("add", "Add numbers.", schema),
        McpTool("look", "", {}, title="Look around", annotations={"readOnlyHint": True}),
    ]
    (add, add_name), (look, look_name) = build_specs("calc", tools, _func_factory)
    assert (add.name, add_name) == ("mcp_calc_add", "add")
    assert add.parameters == schema and add.parameters is not schema
    assert add.description.startswith("Add numbers.") and "'calc'" in add.description
    assert add.mutates and not add.concurrency_safe
    assert add.module == "mcp:calc"
    assert add.func(None, a=1) == ("calc", "add", {"a": 1})
    assert look.parameters == {"type": "object", "properties": {}}
    assert look.description.startswith("Look around")
    assert look.concurrency_safe and not look.mutates
    assert look_name == "look"


def test_names_that_collide_after_sanitising_get_distinct_names():
    tools = [McpTool("a.b", "", {}), McpTool("a-b", "", {}), McpTool("a_b", "", {})]
    names = [spec.name for spec, _ in build_specs("s", tools, _func_factory)]
    assert len(set(names)) == 3
    assert names[0] == "mcp_s_a_b"
    toolkit = Toolkit()
    for spec, _ in build_specs("s", tools, _func_factory):
        toolkit.register(spec)  # the registry's own name rules accept them all
    assert len(toolkit.names()) == 3


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({}, {"type": "object", "properties": {}}),
        ({"properties": {"x": {}}}, {"type": "object", "properties": {"x": {}}}),
        ({"type": "object", "required": "x"}, {"type": "object", "properties": {}}),
    ],
)
def test_input_schemas_are_made_object_schemas(schema, expected):
    assert input_schema(schema) == expected


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ([{"type": "text", "text": "hello"}, {"type": "text", "text": "world"}], "hello\nworld"),
        (
            [{"type": "image", "mimeType": "image/png", "data": "AAAA"}],
            "[image image/png, 3 bytes]",
        ),
        (
            [{"type": "audio", "mimeType": "audio/wav", "data": "AAA="}],
            "[audio audio/wav, 2 bytes]",
        ),
        (
            [{"type": "resource", "resource": {"uri": "file:///a.txt", "text": "body"}}],
            "[resource file:///a.txt]\nbody",
        ),
        (
            [
                {
                    "type": "resource",
                    "resource": {"uri": "x:/b", "mimeType": "app/x", "blob": "AA=="},
                }
            ],
            "[resource x:/b (app/x), 1 bytes]",
        ),
        (
            [{"type": "resource_link", "uri": "file:///c", "name": "c"}],
            "[resource link: c file:///c]",
        ),
    ],
)
def test_content_blocks_render_as_text(content, expected):
    assert render_content(content) == expected


def test_structured_content_is_used_when_there_are_no_blocks():
    assert render_content([], {"temperature": 21}) == '{"temperature": 21}'
    assert render_content([{"type": "text", "text": "21"}], {"temperature": 21}) == "21"
