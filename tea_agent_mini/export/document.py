"""PdfDocument: a block-level builder (headings, paragraphs, lists, code, rules, page breaks).

Blocks are laid out top to bottom as they are added; a block that does not fit the rest of the page
continues on a new one. Pages keep their drawing operators until :meth:`PdfDocument.to_bytes`, which
adds the "Page N of M" footers (only then is M known) and writes the file.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._version import __version__
from .fonts import CJK_FONTS, COURIER, HELVETICA, HELVETICA_BOLD, FontMetrics, detect_cjk_language
from .layout import BOLD, CODE, Line, Span, TextFlow, spans_of
from .pdf import (
    PdfMeta,
    PdfWriter,
    add_cjk_font,
    add_latin_font,
    cjk_string,
    info_dict,
    latin_string,
)

A4 = (595.28, 841.89)
BODY_SIZE = 10.5
BODY_LEADING = 15.0
HEADING_SIZES = {1: 20.0, 2: 16.0, 3: 13.0}
MINOR_HEADING_SIZE = 11.5
CODE_SIZE = 9.0
CODE_LEADING = 12.0
CODE_PADDING = 6.0
BLOCK_GAP = 7.0
ITEM_GAP = 3.0
LIST_INDENT = 18.0
FOOTER_SIZE = 8.5
_RESOURCE_NAMES = {
    HELVETICA: "F1",
    HELVETICA_BOLD: "F2",
    COURIER: "F3",
    "zh": "C1",
    "ja": "C2",
    "ko": "C3",
}

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
        self._left = margin
        self._width = width - 2 * margin
        self._top = height - margin
        self._bottom = margin
        self._pages: list[list[str]] = []
        self._fonts_used: set[str] = {HELVETICA}
        self._cjk_chars: dict[str, set[str]] = {}
        self._last_block = ""
        self._new_page()

    @property
    def page_count(self) -> int:
        """Pages the PDF will have: an empty last page left by a page break is not written."""
        return len(self._output_pages())

    # -- blocks -------------------------------------------------------------------------------

    def heading(self, text: Text, level: int = 1) -> None:
        size = HEADING_SIZES.get(level, MINOR_HEADING_SIZE)
        leading = round(size * 1.3, 2)
        spans = [s if s.style == CODE else Span(s.text, BOLD) for s in spans_of(text)]
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
        resources = writer.add(self._resources(writer))
        width, height = self.page_size
        kids = []
        pages_out = self._output_pages()
        for number, ops in enumerate(pages_out, start=1):
            content = "\n".join([*ops, self._footer(number, len(pages_out))]) + "\n"
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

    def _resources(self, writer: PdfWriter) -> str:
        fonts = []
        for key, name in _RESOURCE_NAMES.items():
            if key in CJK_FONTS and key in self._cjk_chars:
                number = add_cjk_font(writer, CJK_FONTS[key], self._cjk_chars[key])
            elif key in self._fonts_used:
                number = add_latin_font(writer, key)
            else:
                continue
            fonts.append(f"/{name} {number} 0 R")
        return f"<< /Font << {' '.join(fonts)} >> >>"

    def _output_pages(self) -> list[list[str]]:
        if len(self._pages) > 1 and self._fresh:
            return self._pages[:-1]
        return self._pages

    def _footer(self, number: int, total: int) -> str:
        flow = TextFlow(self._metrics, FOOTER_SIZE)
        line = flow.line([Span(f"Page {number} of {total}")])
        x = self._left + (self._width - line.width) / 2
        return f"0.4 g {self._line_ops(line, x, self._bottom / 2, FOOTER_SIZE)} 0 g"

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
                    self._ops().append(self._line_ops(mark, mark_x, baseline, BODY_SIZE))
        self._last_block = "list"

    def _flow(self, size: float, spans: Sequence[Span]) -> TextFlow:
        language = detect_cjk_language("".join(s.text for s in spans), self._cjk_language)
        return TextFlow(self._metrics, size, language)

    def _text_line(self, line: Line, x: float, size: float, leading: float) -> None:
        self._ensure(leading)
        baseline = self._y - _baseline_drop(size, leading)
        if line.runs:
            self._ops().append(self._line_ops(line, x, baseline, size))
        self._y -= leading
        self._fresh = False

    def _line_ops(self, line: Line, x: float, baseline: float, size: float) -> str:
        ops = ["BT"]
        for run in line.runs:
            ops.append(f"/{_RESOURCE_NAMES[run.font]} {_n(size)} Tf")
            ops.append(f"1 0 0 1 {_n(x + run.x)} {_n(baseline)} Tm")
            if run.font in CJK_FONTS:
                self._cjk_chars.setdefault(run.font, set()).update(run.text)
                shown = cjk_string(run.text)
                if run.bold:
                    # no bold CJK face: fill and stroke the outline to embolden it
                    shown = f"2 Tr {_n(size * 0.035)} w {shown} Tj 0 Tr"
                else:
                    shown += " Tj"
            else:
                self._fonts_used.add(run.font)
                shown = latin_string(run.text) + " Tj"
            ops.append(shown)
        ops.append("ET")
        return " ".join(ops)

    def _stroke_rule(self, y: float, gray: float) -> None:
        right = self._left + self._width
        self._ops().append(f"{gray} G 0.6 w {_n(self._left)} {_n(y)} m {_n(right)} {_n(y)} l S 0 G")
        self._fresh = False

    def _space_before(self, gap: float) -> None:
        if not self._fresh:
            self._y -= gap

    def _ensure(self, height: float) -> None:
        if self._y - height < self._bottom and not self._fresh:
            self._new_page()

    def _new_page(self) -> None:
        self._pages.append([])
        self._y = self._top
        self._fresh = True

    def _ops(self) -> list[str]:
        return self._pages[-1]


def _baseline_drop(size: float, leading: float) -> float:
    """Distance from the top of a line box to the baseline, centring capitals in the box."""
    return leading / 2 + size * 0.33


def _n(value: float) -> str:
    """A compact PDF number."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text
