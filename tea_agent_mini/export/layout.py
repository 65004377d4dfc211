"""Text flow: styled spans -> font runs -> lines that fit a width.

Latin words break at spaces, CJK text may break between any two characters except before closing
punctuation or after opening punctuation, and a word wider than the line is cut where it overflows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .fallback import GLYPH_WIDTH, clusters
from .fonts import (
    COURIER,
    HELVETICA,
    HELVETICA_BOLD,
    HELVETICA_BOLD_OBLIQUE,
    HELVETICA_OBLIQUE,
    FontMetrics,
    cjk_font_for,
    cjk_script,
    normalize_text,
    winansi_form,
)

REGULAR = "regular"
BOLD = "bold"
ITALIC = "italic"
BOLD_ITALIC = "bold-italic"
CODE = "code"
FALLBACK = "fallback"  # the font key of the fallback glyph (see fallback.py)
_LATIN_FONT = {
    REGULAR: HELVETICA,
    BOLD: HELVETICA_BOLD,
    ITALIC: HELVETICA_OBLIQUE,
    BOLD_ITALIC: HELVETICA_BOLD_OBLIQUE,
    CODE: COURIER,
}

# Line-breaking rules for CJK text ("kinsoku"): never start a line with the first set, never end
# one with the second.
_NO_BREAK_BEFORE = frozenset(
    "、。，．：；？！）」』】〕〉》〗〙〛｝］ー々～・ぁぃぅぇぉっゃゅょゎァィゥェォッャュョヮヵヶ"
    ",.:;?!)]}%\u201d\u2019\u2026"
)
_NO_BREAK_AFTER = frozenset("（「『【〔〈《〖〘〚｛［([{\u201c\u2018")


@dataclass(frozen=True)
class Span:
    """A piece of text in one inline style: REGULAR, BOLD, ITALIC, BOLD_ITALIC or CODE."""

    text: str
    style: str = REGULAR


@dataclass(frozen=True)
class Run:
    """Consecutive glyphs in one font, placed ``x`` points from the start of their line.

    ``font`` is a Latin font name, a CJK language key ("zh", "ja", "ko") or FALLBACK (then
    ``text`` is one cluster). Latin text is already WinAnsi-safe. CJK fonts have no bold or italic
    face, so ``bold`` and ``italic`` ask the renderer to embolden or slant them.
    """

    text: str
    font: str
    bold: bool
    x: float
    width: float
    italic: bool = False


@dataclass(frozen=True)
class Line:
    runs: tuple[Run, ...]
    width: float

    @property
    def text(self) -> str:
        return "".join(run.text for run in self.runs)


@dataclass(frozen=True)
class _Glyph:
    text: str
    font: str
    bold: bool
    italic: bool
    width: float
    kind: str  # "space", "cjk" (may break before or after it) or "latin"


def spans_of(text: str | Sequence[Span], style: str = REGULAR) -> list[Span]:
    """Plain text becomes one span in ``style``; a span sequence is taken as it is."""
    if isinstance(text, str):
        return [Span(text, style)]
    return list(text)


def emboldened(spans: Sequence[Span]) -> list[Span]:
    """The spans in bold (italic ones in bold italic), code left as it is: headings, table heads."""
    bolder = {REGULAR: BOLD, ITALIC: BOLD_ITALIC}
    return [Span(s.text, bolder.get(s.style, s.style)) for s in spans]


class TextFlow:
    """Measures and wraps text at one font size."""

    def __init__(self, metrics: FontMetrics, size: float, cjk_language: str = "zh") -> None:
        self.metrics = metrics
        self.size = size
        self.cjk_language = cjk_language

    def wrap(self, spans: Iterable[Span], max_width: float) -> list[Line]:
        """Lines of flowing text: runs of white space collapse to one space."""
        glyphs = self._glyphs(spans, collapse=True)
        lines: list[list[_Glyph]] = [[]]
        width = 0.0
        for atom in _atoms(glyphs):
            body = [g for g in atom if g.kind != "space"]
            if lines[-1] and width + sum(g.width for g in body) > max_width:
                _drop_trailing_spaces(lines[-1])
                lines.append([])
                width = 0.0
            for glyph in atom:
                # only a word wider than the whole line gets here with too little room: cut it
                if glyph.kind != "space" and lines[-1] and width + glyph.width > max_width:
                    lines.append([])
                    width = 0.0
                lines[-1].append(glyph)
                width += glyph.width
        _drop_trailing_spaces(lines[-1])
        return [_line(glyphs) for glyphs in lines if glyphs] or [Line((), 0.0)]

    def wrap_code(self, text: str, max_width: float) -> list[Line]:
        """Lines of one code line: spaces kept, broken after a space or mid-word when too long.

        Continuation lines repeat the original indentation so the structure stays readable.
        """
        glyphs = self._glyphs([Span(text, CODE)], collapse=False)
        indent_len = next((i for i, g in enumerate(glyphs) if g.kind != "space"), len(glyphs))
        indent = glyphs[:indent_len]
        if sum(g.width for g in indent) > max_width / 2:
            indent = []
        lines: list[Line] = []
        rest = glyphs
        while True:
            fit, width = 0, 0.0
            while fit < len(rest) and (fit == 0 or width + rest[fit].width <= max_width):
                width += rest[fit].width
                fit += 1
            if fit == len(rest):
                lines.append(_line(rest))
                return lines
            prefix = indent_len if not lines else len(indent)
            cut = max(_last_space_break(rest, fit, prefix), 1 if not lines else prefix + 1)
            lines.append(_line(rest[:cut]))
            rest = indent + rest[cut:]

    def width(self, text: str, style: str = REGULAR) -> float:
        return sum(g.width for g in self._glyphs([Span(text, style)], collapse=False))

    def extent(self, spans: Iterable[Span]) -> tuple[float, float]:
        """(widest piece that cannot be broken, width of it all on one line) for flowing text."""
        glyphs = self._glyphs(spans, collapse=True)
        _drop_trailing_spaces(glyphs)
        pieces = [sum(g.width for g in atom if g.kind != "space") for atom in _atoms(glyphs)]
        return max(pieces, default=0.0), sum(g.width for g in glyphs)

    def line(self, spans: Iterable[Span]) -> Line:
        """One unwrapped line, e.g. a list marker or a page footer."""
        return _line(self._glyphs(spans, collapse=False))

    def _glyphs(self, spans: Iterable[Span], collapse: bool) -> list[_Glyph]:
        glyphs: list[_Glyph] = []
        for span in spans:
            latin = _LATIN_FONT.get(span.style, HELVETICA)
            bold = span.style in (BOLD, BOLD_ITALIC)
            italic = span.style in (ITALIC, BOLD_ITALIC)
            for cluster in clusters(normalize_text(span.text)):
                char = " " if cluster in "\n\r" else cluster[0]
                script = cjk_script(char)
                shown = winansi_form(char) if script is None else None
                if shown is None:
                    # neither WinAnsi nor a stand-in: a CJK font if one has it, else the fallback
                    font = cjk_font_for(char, self.cjk_language)
                    kind = "cjk" if script is not None else "latin"
                    width = self.size  # CJK fonts set every character 1 em wide
                    if font is None:
                        font, char = FALLBACK, cluster
                        width = self.size * GLYPH_WIDTH / 1000
                    glyphs.append(_Glyph(char, font, bold, italic, width, kind))
                    continue
                if not shown:
                    continue
                if shown.isspace():
                    if collapse and (not glyphs or glyphs[-1].kind == "space"):
                        continue
                    shown = " " * len(shown)
                width = self.metrics.text_width(shown, latin, self.size)
                kind = "space" if shown.isspace() else "latin"
                glyphs.append(_Glyph(shown, latin, bold, italic, width, kind))
        return glyphs


def _atoms(glyphs: list[_Glyph]) -> list[list[_Glyph]]:
    """Unbreakable groups: non-space glyphs followed by the spaces after them."""
    atoms: list[list[_Glyph]] = []
    for index, glyph in enumerate(glyphs):
        if not atoms or _break_before(glyphs, index):
            atoms.append([])
        atoms[-1].append(glyph)
    return atoms


def _break_before(glyphs: list[_Glyph], index: int) -> bool:
    current, previous = glyphs[index], glyphs[index - 1]
    if current.kind == "space":
        return False
    if previous.kind == "space":
        return True
    if current.kind != "cjk" and previous.kind != "cjk":
        return False
    return current.text not in _NO_BREAK_BEFORE and previous.text not in _NO_BREAK_AFTER


def _last_space_break(glyphs: list[_Glyph], fit: int, start: int) -> int:
    """Index just after the last space before ``fit`` (past the indentation), else ``fit``."""
    for index in range(fit - 1, start, -1):
        if glyphs[index].kind == "space" and glyphs[index - 1].kind != "space":
            return index + 1
    return fit


def _drop_trailing_spaces(glyphs: list[_Glyph]) -> None:
    while glyphs and glyphs[-1].kind == "space":
        glyphs.pop()


def _line(glyphs: Sequence[_Glyph]) -> Line:
    runs: list[Run] = []
    x = 0.0
    for glyph in glyphs:
        last = runs[-1] if runs else None
        if (
            last
            and (last.font, last.bold, last.italic) == (glyph.font, glyph.bold, glyph.italic)
            and glyph.font != FALLBACK  # one cluster per fallback run: each has its own code
        ):
            width = last.width + glyph.width
            runs[-1] = Run(last.text + glyph.text, last.font, last.bold, last.x, width, last.italic)
        else:
            runs.append(Run(glyph.text, glyph.font, glyph.bold, x, glyph.width, glyph.italic))
        x += glyph.width
    return Line(tuple(runs), x)
