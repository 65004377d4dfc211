"""A small markdown subset turned into blocks, and blocks into a PDF.

Understood: ``#``/``##``/``###`` headings, paragraphs (soft-wrapped lines joined), ``-``/``*``/``+``
and ``1.`` lists (indentation nests them), fenced code (``` or ~~~), ``---`` rules, ``>`` quotes
(nested, holding any of these blocks), pipe tables (a header row, a ``|---|:--:|`` delimiter row
giving the alignments, body rows; ``<br>`` breaks a line in a cell), page breaks (a line holding
only a form feed, or ``<!-- pagebreak -->``), and inline code, bold and italic (see
:mod:`.markdown_inline`). Everything else is shown as the text it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .document import A4, PdfDocument
from .fonts import cjk_script
from .layout import Span
from .markdown_inline import parse_inline
from .pdf import PdfMeta

_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_RULE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})")
_BULLET = re.compile(r"^([ \t]*)[-*+][ \t]+(.*)$")
_NUMBERED = re.compile(r"^([ \t]*)(\d{1,9})[.)][ \t]+(.*)$")
_PAGE_BREAK = re.compile(r"^[ \t]*(?:\f+|<!--\s*pagebreak\s*-->)[ \t]*$", re.IGNORECASE)
_QUOTE = re.compile(r"^ {0,3}> ?")
_DELIMITER_CELL = re.compile(r"^[ \t]*(:?)-+(:?)[ \t]*$")
_CELL_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)
_PIPE = re.compile(r"(?<!\\)\|")


@dataclass
class Heading:
    level: int
    text: str


@dataclass
class Paragraph:
    text: str


@dataclass
class ListItem:
    level: int
    ordered: bool
    number: int
    text: str


@dataclass
class ListBlock:
    items: list[ListItem] = field(default_factory=list)


@dataclass
class CodeBlock:
    text: str


@dataclass
class Rule:
    pass


@dataclass
class PageBreak:
    pass


@dataclass
class Quote:
    blocks: list[Block]


@dataclass
class Table:
    header: list[str]
    aligns: list[str]  # "left", "center" or "right" per column
    rows: list[list[str]]  # each as long as the header


Block = Heading | Paragraph | ListBlock | CodeBlock | Rule | PageBreak | Quote | Table


def markdown_to_pdf(
    markdown_text: str,
    meta: PdfMeta | None = None,
    page_size: tuple[float, float] = A4,
) -> bytes:
    """Render ``markdown_text`` as a PDF document and return its bytes."""
    document = PdfDocument(meta, page_size)
    for block in parse_markdown(markdown_text):
        render_block(document, block)
    return document.to_bytes()


def render_block(document: PdfDocument, block: Block) -> None:
    if isinstance(block, Heading):
        document.heading(parse_inline(block.text), block.level)
    elif isinstance(block, Paragraph):
        document.paragraph(parse_inline(block.text))
    elif isinstance(block, ListBlock):
        _render_list(document, block.items)
    elif isinstance(block, CodeBlock):
        document.code_block(block.text)
    elif isinstance(block, Rule):
        document.rule()
    elif isinstance(block, PageBreak):
        document.page_break()
    elif isinstance(block, Quote):
        with document.quote():
            for inner in block.blocks:
                render_block(document, inner)
    elif isinstance(block, Table):
        document.table(
            [_cell(text) for text in block.header],
            [[_cell(text) for text in row] for row in block.rows],
            block.aligns,
        )


def _cell(text: str) -> list[Span]:
    """Inline markup of a cell, each ``<br>`` a line break."""
    spans: list[Span] = []
    for index, part in enumerate(_CELL_BREAK.split(text)):
        if index:
            spans.append(Span("\n"))
        spans.extend(parse_inline(part.strip()))
    return spans


def _render_list(document: PdfDocument, items: list[ListItem]) -> None:
    """Consecutive items of one level and kind go to the document as one list call."""
    start = 0
    while start < len(items):
        first = items[start]
        end = start + 1
        while end < len(items) and (items[end].level, items[end].ordered) == (
            first.level,
            first.ordered,
        ):
            end += 1
        texts = [parse_inline(item.text) for item in items[start:end]]
        if first.ordered:
            document.numbered_list(texts, start=first.number, level=first.level)
        else:
            document.bullet_list(texts, level=first.level)
        start = end


def parse_markdown(text: str) -> list[Block]:
    return _parse_lines(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))


def _parse_lines(lines: list[str]) -> list[Block]:
    blocks: list[Block] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        if not line.strip(" \t"):
            index += 1
        elif _PAGE_BREAK.match(line):
            blocks.append(PageBreak())
            index += 1
        elif _FENCE.match(line):
            index = _read_fence(lines, index, blocks)
        elif heading := _HEADING.match(line):
            blocks.append(Heading(len(heading.group(1)), (heading.group(2) or "").strip()))
            index += 1
        elif _RULE.match(line):
            blocks.append(Rule())
            index += 1
        elif _QUOTE.match(line):
            index = _read_quote(lines, index, blocks)
        elif _table_aligns(lines, index) is not None:
            index = _read_table(lines, index, blocks)
        elif _list_item(line):
            index = _read_list(lines, index, blocks)
        else:
            index = _read_paragraph(lines, index, blocks)
    return blocks


def _read_quote(lines: list[str], index: int, blocks: list[Block]) -> int:
    """``>`` lines, and lines continuing a quoted paragraph without the ``>`` ("lazy" ones)."""
    inner: list[str] = []
    while index < len(lines):
        line = lines[index]
        if marker := _QUOTE.match(line):
            inner.append(line[marker.end() :])
        elif line.strip() and inner and inner[-1].strip() and not _starts_block(line):
            inner.append(line)
        else:
            break
        index += 1
    blocks.append(Quote(_parse_lines(inner)))
    return index


def _table_aligns(lines: list[str], index: int) -> list[str] | None:
    """The column alignments when a table starts at ``lines[index]``, else None.

    A table is a row with a pipe followed by a delimiter row with as many cells.
    """
    if index + 1 >= len(lines) or "|" not in lines[index] or "|" not in lines[index + 1]:
        return None
    delimiters = _row_cells(lines[index + 1])
    matches = [_DELIMITER_CELL.match(cell) for cell in delimiters]
    if not all(matches) or len(delimiters) != len(_row_cells(lines[index])):
        return None
    kinds = {("", ""): "left", (":", ""): "left", ("", ":"): "right", (":", ":"): "center"}
    return [kinds[m.group(1), m.group(2)] for m in matches if m]


def _read_table(lines: list[str], index: int, blocks: list[Block]) -> int:
    aligns = _table_aligns(lines, index)
    assert aligns is not None
    header = _row_cells(lines[index])
    rows: list[list[str]] = []
    index += 2
    while index < len(lines) and lines[index].strip() and "|" in lines[index]:
        if _starts_block(lines[index]):
            break
        cells = _row_cells(lines[index])[: len(header)]
        rows.append(cells + [""] * (len(header) - len(cells)))
        index += 1
    blocks.append(Table(header, aligns, rows))
    return index


def _row_cells(line: str) -> list[str]:
    """The cells of a table row: split at pipes that are not escaped, outer pipes optional."""
    text = line.strip()
    if text.startswith("|"):
        text = text[1:]
    if text.endswith("|") and not text.endswith("\\|"):
        text = text[:-1]
    return [cell.strip().replace("\\|", "|") for cell in _PIPE.split(text)]


def _read_fence(lines: list[str], index: int, blocks: list[Block]) -> int:
    opening = _FENCE.match(lines[index])
    assert opening is not None
    indent, fence = len(opening.group(1)), opening.group(2)
    body: list[str] = []
    index += 1
    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        if stripped.startswith(fence[0] * len(fence)) and not stripped.strip(fence[0]):
            index += 1
            break
        body.append(_dedent(line, indent))
        index += 1
    blocks.append(CodeBlock("\n".join(body)))
    return index


def _dedent(line: str, count: int) -> str:
    spaces = len(line) - len(line.lstrip(" "))
    return line[min(spaces, count) :]


def _list_item(line: str) -> ListItem | None:
    if match := _NUMBERED.match(line):
        level = _indent_width(match.group(1)) // 2
        return ListItem(min(level, 5), True, int(match.group(2)), match.group(3).strip())
    if match := _BULLET.match(line):
        level = _indent_width(match.group(1)) // 2
        return ListItem(min(level, 5), False, 0, match.group(2).strip())
    return None


def _indent_width(indent: str) -> int:
    return len(indent.expandtabs(4))


def _read_list(lines: list[str], index: int, blocks: list[Block]) -> int:
    block = ListBlock()
    while index < len(lines):
        line = lines[index]
        item = _list_item(line) if not _RULE.match(line) else None
        if item is not None and block.items and _starts_new_list(block.items[0], item):
            break
        if item is not None:
            block.items.append(item)
        elif _starts_block(line):
            break
        elif not line.strip():
            following = lines[index + 1] if index + 1 < len(lines) else ""
            if not (_list_item(following) or following.startswith(("  ", "\t"))):
                break
        elif lines[index - 1].strip() == "" and not line[:1].isspace():
            break
        else:
            last = block.items[-1]
            last.text = _join(last.text, line.strip())
        index += 1
    blocks.append(block)
    return index


def _starts_new_list(first: ListItem, item: ListItem) -> bool:
    return item.level == 0 and item.ordered != first.ordered


def _read_paragraph(lines: list[str], index: int, blocks: list[Block]) -> int:
    text = lines[index].strip()
    index += 1
    while (
        index < len(lines)
        and lines[index].strip()
        and not _starts_block(lines[index])
        and _table_aligns(lines, index) is None
    ):
        text = _join(text, lines[index].strip())
        index += 1
    blocks.append(Paragraph(text))
    return index


def _starts_block(line: str) -> bool:
    return bool(
        _PAGE_BREAK.match(line)
        or _FENCE.match(line)
        or _HEADING.match(line)
        or _RULE.match(line)
        or _QUOTE.match(line)
        or _list_item(line)
    )


def _join(left: str, right: str) -> str:
    """Soft-wrapped lines join with a space, except between two CJK characters."""
    if left and right and cjk_script(left[-1]) and cjk_script(right[0]):
        return left + right
    return f"{left} {right}" if left else right
