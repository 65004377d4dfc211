"""Markdown pipe tables and blockquotes: parsed as blocks, drawn as tables and indented quotes."""

from __future__ import annotations

import re
import zlib
from pathlib import Path

import pytest

from tea_agent_mini.export import PdfDocument, PdfMeta, Span, markdown_to_pdf, parse_markdown
from tea_agent_mini.export.layout import BOLD, CODE, ITALIC, REGULAR
from tea_agent_mini.export.markdown_blocks import (
    CodeBlock,
    ListBlock,
    Paragraph,
    Quote,
    Table,
)
from tea_agent_mini.export.table import column_widths
from tests.export.pdf_helpers import (
    dark_pixels,
    gray_image,
    needs_poppler,
    pages,
    text,
    words,
    write,
)

TABLE = """Intro paragraph.

| Name | Qty | Note |
|:-----|----:|:----:|
| apple | 3 | **fresh** `code` |
| 香蕉 | 12 | a longer note that should wrap inside its cell if the page is narrow |
| escaped \\| pipe | 7 |
"""

QUOTE = """Body text.

> **Reasoning:** the user wants *a table*.
still the same quoted paragraph
>
> - a quoted list
>> nested **deeper**

After.
"""


# -- parsing ----------------------------------------------------------------------------------


def test_pipe_table_parses_with_alignments_and_cells() -> None:
    blocks = parse_markdown(TABLE)
    assert blocks[0] == Paragraph("Intro paragraph.")
    assert blocks[1] == Table(
        ["Name", "Qty", "Note"],
        ["left", "right", "center"],
        [
            ["apple", "3", "**fresh** `code`"],
            ["香蕉", "12", "a longer note that should wrap inside its cell if the page is narrow"],
            ["escaped | pipe", "7", ""],  # a missing cell is empty
        ],
    )


@pytest.mark.parametrize(
    ("markdown", "expected"),
    [
        ("a | b\n--- | ---\n1 | 2", Table(["a", "b"], ["left", "left"], [["1", "2"]])),
        ("text\n|a|b|\n|-|-|\n|1|2|3|", None),  # a table may interrupt a paragraph
        ("| a | b |\n|---|\n| 1 | 2 |", Paragraph("| a | b | |---| | 1 | 2 |")),
        ("a | b is not a table", Paragraph("a | b is not a table")),
    ],
)
def test_what_makes_a_table(markdown: str, expected: object) -> None:
    blocks = parse_markdown(markdown)
    if expected is None:
        assert blocks == [
            Paragraph("text"),
            Table(["a", "b"], ["left", "left"], [["1", "2"]]),  # extra cells are dropped
        ]
    else:
        assert blocks == [expected]


def test_blockquotes_nest_and_hold_blocks() -> None:
    blocks = parse_markdown(QUOTE)
    assert blocks[0] == Paragraph("Body text.")
    assert blocks[2] == Paragraph("After.")
    quote = blocks[1]
    assert isinstance(quote, Quote)
    first, items, nested = quote.blocks
    assert first == Paragraph(
        "**Reasoning:** the user wants *a table*. still the same quoted paragraph"
    )
    assert isinstance(items, ListBlock) and items.items[0].text == "a quoted list"
    assert nested == Quote([Paragraph("nested **deeper**")])


def test_code_in_a_quote_stays_code() -> None:
    assert parse_markdown("> ```\n> # code\n> ```") == [Quote([CodeBlock("# code")])]


@pytest.mark.parametrize(
    ("minimum", "natural", "available", "expected"),
    [
        ([20, 30], [50, 60], 200, [50, 60]),  # everything fits on one line
        ([20, 30], [120, 30], 100, [70, 30]),  # the room goes to what would still grow
        ([300, 20, 20], [900, 20, 20], 120, [80, 20, 20]),  # minimums capped at a fair share
    ],
)
def test_column_widths(minimum, natural, available, expected) -> None:
    widths = column_widths(minimum, natural, available)
    assert widths == pytest.approx(expected)
    assert sum(widths) <= available + 1e-6


# -- rendering --------------------------------------------------------------------------------


@needs_poppler
def test_table_renders_as_columns_without_pipes(tmp_path: Path) -> None:
    path = write(tmp_path, markdown_to_pdf(TABLE, PdfMeta(title="Table")))
    layout = text(path, "-layout")
    assert "|" not in layout.replace("escaped | pipe", "")
    assert "**" not in layout and "`" not in layout and ":---" not in layout
    lines = [line for line in layout.splitlines() if line.strip()]
    header = next(line for line in lines if "Name" in line)
    assert header.split() == ["Name", "Qty", "Note"]
    apple = next(line for line in lines if "apple" in line)
    assert apple.split() == ["apple", "3", "fresh", "code"]
    # Qty is right-aligned: the numbers end in the same column
    banana = next(line for line in lines if "香蕉" in line)
    assert apple.index("3") + 1 == _end_of(banana, "12")
    # the long note wraps inside its cell, all of it kept
    assert "".join(layout.split()).count("alongernotethatshouldwrapinsideitscell") == 1


def _end_of(line: str, token: str) -> int:
    return line.index(token) + len(token)


@needs_poppler
def test_table_cells_have_borders_and_a_shaded_bold_header(tmp_path: Path) -> None:
    data = markdown_to_pdf(TABLE)
    streams = re.findall(rb"stream\n(.*?)\nendstream", data, re.S)
    content = b"".join(zlib.decompress(s) for s in streams)
    assert content.count(b" re") >= 12  # a rectangle per cell (4 rows x 3 columns)
    assert b"0.92 g" in content  # the header's shading
    assert re.search(rb"/F2 [\d.]+ Tf [^T]*Tm \(Name\) Tj", content)  # bold header


@needs_poppler
def test_long_table_breaks_between_rows_and_repeats_its_header(tmp_path: Path) -> None:
    rows = "\n".join(f"| row {i:03d} | {'词' * (i % 7 + 1)} | {i} |" for i in range(120))
    markdown = f"| Key | Words | N |\n|---|---|--:|\n{rows}\n"
    path = write(tmp_path, markdown_to_pdf(markdown))
    found = pages(path, "-layout")
    assert len(found) >= 3
    seen = []
    for page in found:
        lines = [line.split() for line in page.splitlines() if line.strip()]
        assert lines[0] == ["Key", "Words", "N"]  # the header opens every page
        seen += [" ".join(line[:2]) for line in lines if line[0] == "row"]
    assert seen == [f"row {i:03d}" for i in range(120)]  # no row split, lost or repeated


@needs_poppler
def test_a_row_taller_than_a_page_continues_on_the_next(tmp_path: Path) -> None:
    tall = " ".join(f"w{i:04d}" for i in range(2500))
    document = PdfDocument()
    document.table(["a", "b"], [["x", tall], ["y", "z"]])
    path = write(tmp_path, document.to_bytes())
    found = pages(path)
    assert len(found) >= 3
    assert all(page.split()[:2] == ["a", "b"] for page in found)
    assert re.findall(r"w\d{4}", text(path)) == tall.split()


@needs_poppler
def test_quote_is_indented_with_markup_applied(tmp_path: Path) -> None:
    path = write(tmp_path, markdown_to_pdf(QUOTE))
    plain = text(path)
    assert ">" not in plain and "**" not in plain and "*" not in plain
    lines = [line.strip() for line in plain.splitlines()]
    assert "Reasoning: the user wants a table. still the same quoted paragraph" in lines
    x = {word: left for word, left, _ in words(path)}
    assert x["Reasoning:"] > x["Body"] + 10  # indented
    assert x["nested"] > x["Reasoning:"] + 10  # nested deeper
    assert x["After."] == x["Body"]


@needs_poppler
def test_quote_has_a_bar_on_its_left(tmp_path: Path) -> None:
    document = PdfDocument()
    with document.quote():
        document.paragraph("Quoted words in a paragraph of several lines. " * 6)
    width, height, pixels = gray_image(write(tmp_path, document.to_bytes()), tmp_path)
    bar = bytes(pixels[row * width + 59] for row in range(60, 100))  # x 58..60.5, below the top
    assert dark_pixels(bar, 230) == len(bar)  # a solid gray bar ...
    assert dark_pixels(bar, 100) == 0  # ... lighter than text
    margin = bytes(pixels[row * width + 50] for row in range(60, 100))
    assert dark_pixels(margin, 250) == 0


def test_inline_styles_reach_the_quote_and_table_text() -> None:
    from tea_agent_mini.export import parse_inline

    assert parse_inline("**Reasoning:** *why*") == [
        Span("Reasoning:", BOLD),
        Span(" ", REGULAR),
        Span("why", ITALIC),
    ]
    assert parse_inline("`a|b`") == [Span("a|b", CODE)]
