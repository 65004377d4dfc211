"""PdfDocument: a block-level builder (headings, paragraphs, lists, code, tables, quotes, rules,
page breaks).

Blocks are laid out top to bottom as they are added; a block that does not fit the rest of the page
continues on a new one. Pages keep their drawing operators until :meth:`PdfDocument.to_bytes`, which
adds the "Page N of M" footers (only then is M known) and writes the file.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from .._version import __version__
from .font_resources import FontResources
from .fonts import CJK_FONTS, FontMetrics, detect_cjk_language
from .layout import CODE, Line, Span, TextFlow, emboldened, spans_of
from .pdf import PdfMeta, PdfWriter, info_dict
from .pdf import pdf_number as _n
from .table import CELL_PADDING, CENTER, RIGHT, TableLayout, layout_table, row_height

A4 = (595.28, 841.89)
BODY_SIZE = 10.5
BODY_LEADING = 15.0
HEADING_SIZES = {1: 20.0, 2: 16.0, 3: 13.0}
MINOR_HEADING_SIZE = 11.5
CODE_SIZE = 9.0
CODE_LEADING = 12.0
CODE_PADDING = 6.0
TABLE_SIZE = 9.5
TABLE_LEADING = 13.0
QUOTE_INDENT = 14.0
QUOTE_GRAY = 0.3
BLOCK_GAP = 7.0
ITEM_GAP = 3.0
LIST_INDENT = 18.0
FOOTER_SIZE = 8.5

Text = str | Sequence[Span]


class PdfDocument:
    """Builds a PDF page by page; text arguments are plain strings or sequences of Span."""

    def __init__(
        self,
        meta: PdfMeta | None = None,
        page_size: tuple[float, float] = A4,
        *,
        margin: float = 56.0,
        cjk_language: str = "zh",
    ) -> None:
        width, height = page_size
        if width - 2 * margin < 100 or height - 2 * margin < 100:
            raise ValueError(f"page size {page_size} leaves no room inside {margin}pt margins")
        if cjk_language not in CJK_FONTS:
            raise ValueError(f"cjk_language must be one of {sorted(CJK_FONTS)}")
        self.meta = meta or PdfMeta()
        self.page_size = (float(width), float(height))
        self._metrics = FontMetrics()
        self._cjk_language = cjk_language
        self._page_left = self._left = margin
        self._page_width = self._width = width - 2 * margin
        self._top = height - margin
        self._bottom = margin
        self._pages: list[list[str]] = []
        self._fonts = FontResources()
        self._quotes: list[float] = []  # where each open quote's bar starts on this page
        self._gap_taken = False
        self._last_block = ""
        self._y = self._top
        self._fresh = True
        self._new_page()

    @property
    def page_count(self) -> int:
        """Pages the PDF will have: an empty last page left by a page break is not written."""
        return len(self._output_pages())

    # -- blocks -------------------------------------------------------------------------------

    def heading(self, text: Text, level: int = 1) -> None:
        size = HEADING_SIZES.get(level, MINOR_HEADING_SIZE)
        leading = round(size * 1.3, 2)
        spans = emboldened(spans_of(text))
        lines = self._flow(size, spans).wrap(spans, self._width)
        self._space_before(size * 0.8)
        # keep the heading with the first lines of what follows it
        self._ensure(len(lines) * leading + 2 * BODY_LEADING)
        for line in lines:
            self._text_line(line, self._left, size, leading)
        if level == 1:
            self._stroke_rule(self._y - 2.0, 0.6)
            self._y -= 4.0
        self._last_block = "heading"

    def paragraph(self, text: Text) -> None:
        spans = spans_of(text)
        lines = self._flow(BODY_SIZE, spans).wrap(spans, self._width)
        self._space_before(BLOCK_GAP)
        for line in lines:
            self._text_line(line, self._left, BODY_SIZE, BODY_LEADING)
        self._last_block = "paragraph"

    def bullet_list(self, items: Sequence[Text], *, level: int = 0) -> None:
        self._list(items, ["\u2022"] * len(items), level)

    def numbered_list(self, items: Sequence[Text], *, start: int = 1, level: int = 0) -> None:
        self._list(items, [f"{start + i}." for i in range(len(items))], level)

    def code_block(self, text: str) -> None:
        flow = self._flow(CODE_SIZE, [Span(text, CODE)])
        inner = self._width - 2 * CODE_PADDING
        raw_lines = text.replace("\r\n", "\n").expandtabs(4).rstrip("\n").split("\n")
        lines = [line for raw in raw_lines for line in flow.wrap_code(raw, inner)]
        self._space_before(BLOCK_GAP)
        done = 0
        while done < len(lines):
            self._ensure(2 * CODE_PADDING + CODE_LEADING)
            room = int((self._y - self._bottom - 2 * CODE_PADDING) // CODE_LEADING)
            chunk = lines[done : done + max(1, room)]
            height = 2 * CODE_PADDING + len(chunk) * CODE_LEADING
            box = f"{_n(self._left)} {_n(self._y - height)} {_n(self._width)} {_n(height)}"
            self._ops().append(f"0.95 g {box} re f 0 g")
            self._y -= CODE_PADDING
            for line in chunk:
                self._text_line(line, self._left + CODE_PADDING, CODE_SIZE, CODE_LEADING)
            self._y -= CODE_PADDING
            done += len(chunk)
            if done < len(lines):
                self._new_page()
        self._last_block = "code"

    def table(
        self, header: Sequence[Text], rows: Sequence[Sequence[Text]], aligns: Sequence[str] = ()
    ) -> None:
        """A table with a bold header row, repeated at the top of every page the table reaches.

        ``aligns`` holds "left", "center" or "right" per column (left when missing). Columns get
        widths from their content; cells wrap, and a newline in a cell starts a new line in it.
        """
        layout = layout_table(
            [emboldened(spans_of(cell)) for cell in header],
            rows,
            aligns,
            self._width,
            lambda spans: self._flow(TABLE_SIZE, spans),
        )
        self._space_before(BLOCK_GAP)
        first = row_height(layout.header, TABLE_LEADING)
        if layout.rows:  # keep the header with (the first lines of) the first row
            first += row_height([lines[:3] for lines in layout.rows[0]], TABLE_LEADING)
        self._ensure(first)
        self._table_row(layout, layout.header, header=True)
        only_header = True  # nothing but the header on this page yet: a row must start here
        for cells in layout.rows:
            rest: list[list[Line]] = cells
            while rest:
                if not only_header and self._y - row_height(rest, TABLE_LEADING) < self._bottom:
                    self._new_page()
                    self._table_row(layout, layout.header, header=True)
                rest = self._table_row(layout, rest, header=False)
                only_header = False
                if rest:  # a row taller than the page continues on the next one
                    self._new_page()
                    self._table_row(layout, layout.header, header=True)
                    only_header = True
        self._last_block = "table"

    @contextmanager
    def quote(self) -> Iterator[None]:
        """Blocks added inside the ``with`` are a quotation: indented, in gray, with a bar on
        their left. Quotes nest."""
        self._space_before(BLOCK_GAP)
        indent = QUOTE_INDENT if self._width - QUOTE_INDENT >= self._page_width / 2 else 0.0
        self._quotes.append(self._y)
        self._left += indent
        self._width -= indent
        self._gap_taken = True
        try:
            yield
        finally:
            self._left -= indent
            self._width += indent
            self._quote_bar(len(self._quotes) - 1, self._quotes.pop())
            self._gap_taken = False
            self._last_block = "quote"

    def rule(self) -> None:
        self._space_before(BLOCK_GAP)
        self._ensure(10.0)
        self._stroke_rule(self._y - 5.0, 0.75)
        self._y -= 10.0
        self._last_block = "rule"

    def page_break(self) -> None:
        """Start a new page, unless the current one is still empty."""
        if not self._fresh:
            self._new_page()

    # -- output -------------------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        writer = PdfWriter()
        catalog, pages = writer.reserve(), writer.reserve()
        width, height = self.page_size
        pages_out = self._output_pages()
        contents = [
            "\n".join([*ops, self._footer(number, len(pages_out))]) + "\n"
            for number, ops in enumerate(pages_out, start=1)
        ]
        resources = writer.add(self._fonts.write(writer))  # after the footers: they use fonts
        kids = []
        for content in contents:
            stream = writer.add_stream(content.encode("latin-1"))
            kids.append(
                writer.add(
                    f"<< /Type /Page /Parent {pages} 0 R /MediaBox [0 0 {_n(width)} {_n(height)}]"
                    f" /Resources {resources} 0 R /Contents {stream} 0 R >>"
                )
            )
        refs = " ".join(f"{kid} 0 R" for kid in kids)
        writer.set(pages, f"<< /Type /Pages /Kids [{refs}] /Count {len(kids)} >>")
        writer.set(
            catalog,
            f"<< /Type /Catalog /Pages {pages} 0 R"
            " /ViewerPreferences << /DisplayDocTitle true >> >>",
        )
        info = writer.add(info_dict(self.meta, f"tea_agent_mini {__version__}"))
        return writer.to_bytes(catalog, info)

    def _output_pages(self) -> list[list[str]]:
        if len(self._pages) > 1 and self._fresh:
            return self._pages[:-1]
        return self._pages

    def _footer(self, number: int, total: int) -> str:
        flow = TextFlow(self._metrics, FOOTER_SIZE)
        line = flow.line([Span(f"Page {number} of {total}")])
        x = self._page_left + (self._page_width - line.width) / 2
        return f"0.4 g {self._fonts.show(line, x, self._bottom / 2, FOOTER_SIZE)} 0 g"

    # -- layout helpers -----------------------------------------------------------------------

    def _list(self, items: Sequence[Text], markers: list[str], level: int) -> None:
        body = TextFlow(self._metrics, BODY_SIZE)
        marker_box = max([LIST_INDENT] + [body.width(m) + 6.0 for m in markers])
        text_x = self._left + min(max(level, 0) * LIST_INDENT + marker_box, self._width / 2)
        self._space_before(ITEM_GAP if self._last_block == "list" else BLOCK_GAP)
        for index, (item, marker) in enumerate(zip(items, markers, strict=True)):
            spans = spans_of(item)
            lines = self._flow(BODY_SIZE, spans).wrap(spans, self._left + self._width - text_x)
            if index:
                self._space_before(ITEM_GAP)
            mark = body.line([Span(marker)])
            for number, line in enumerate(lines):
                self._text_line(line, text_x, BODY_SIZE, BODY_LEADING)
                if number == 0:
                    baseline = self._y + BODY_LEADING - _baseline_drop(BODY_SIZE, BODY_LEADING)
                    mark_x = text_x - 5.0 - mark.width
                    self._ops().append(self._show(mark, mark_x, baseline, BODY_SIZE))
        self._last_block = "list"

    def _table_row(
        self, layout: TableLayout, cells: list[list[Line]], *, header: bool
    ) -> list[list[Line]]:
        """Draws as many lines of the row as fit on the page (one at least); returns the rest."""
        fit = int((self._y - self._bottom - 2 * CELL_PADDING) // TABLE_LEADING)
        fit = max(1, min(fit, max(len(lines) for lines in cells)))
        height = 2 * CELL_PADDING + fit * TABLE_LEADING
        top, bottom, ops = self._y, self._y - height, self._ops()
        if header:
            ops.append(
                f"0.92 g {_n(self._left)} {_n(bottom)} {_n(layout.width)} {_n(height)} re f 0 g"
            )
        x = self._left
        rects = []
        for lines, width, align in zip(cells, layout.widths, layout.aligns, strict=True):
            for number, line in enumerate(lines[:fit]):
                offset = CELL_PADDING
                if align == RIGHT:
                    offset = width - CELL_PADDING - line.width
                elif align == CENTER:
                    offset = (width - line.width) / 2
                baseline = top - CELL_PADDING - number * TABLE_LEADING
                baseline -= _baseline_drop(TABLE_SIZE, TABLE_LEADING)
                ops.append(self._show(line, x + offset, baseline, TABLE_SIZE))
            rects.append(f"{_n(x)} {_n(bottom)} {_n(width)} {_n(height)} re")
            x += width
        ops.append(f"0.6 G 0.5 w {' '.join(rects)} S 0 G")
        self._y = bottom
        self._fresh = False
        rest = [lines[fit:] for lines in cells]
        return rest if any(rest) else []

    def _flow(self, size: float, spans: Sequence[Span]) -> TextFlow:
        language = detect_cjk_language("".join(s.text for s in spans), self._cjk_language)
        return TextFlow(self._metrics, size, language)

    def _text_line(self, line: Line, x: float, size: float, leading: float) -> None:
        self._ensure(leading)
        baseline = self._y - _baseline_drop(size, leading)
        if line.runs:
            self._ops().append(self._show(line, x, baseline, size))
        self._y -= leading
        self._fresh = False

    def _show(self, line: Line, x: float, baseline: float, size: float) -> str:
        ops = self._fonts.show(line, x, baseline, size)
        return f"{QUOTE_GRAY} g {ops} 0 g" if self._quotes else ops

    def _quote_bar(self, depth: int, start: float) -> None:
        """The bar of the quote ``depth`` levels deep, from ``start`` down to the current line."""
        if start - self._y < 1.0:
            return
        x = self._page_left + min(depth * QUOTE_INDENT, self._page_width / 2) + 2.0
        self._ops().append(f"0.75 g {_n(x)} {_n(self._y)} 2.5 {_n(start - self._y)} re f 0 g")

    def _stroke_rule(self, y: float, gray: float) -> None:
        right = self._left + self._width
        self._ops().append(f"{gray} G 0.6 w {_n(self._left)} {_n(y)} m {_n(right)} {_n(y)} l S 0 G")
        self._fresh = False

    def _space_before(self, gap: float) -> None:
        if not self._fresh and not self._gap_taken:
            self._y -= gap
        self._gap_taken = False

    def _ensure(self, height: float) -> None:
        if self._y - height < self._bottom and not self._fresh:
            self._new_page()

    def _new_page(self) -> None:
        for depth, start in enumerate(self._quotes):  # open quotes: end their bars on this page
            self._quote_bar(depth, start)
            self._quotes[depth] = self._top
        self._pages.append([])
        self._y = self._top
        self._fresh = True

    def _ops(self) -> list[str]:
        return self._pages[-1]


def _baseline_drop(size: float, leading: float) -> float:
    """Distance from the top of a line box to the baseline, centring capitals in the box."""
    return leading / 2 + size * 0.33
