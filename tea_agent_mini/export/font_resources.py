"""The fonts a document's pages use: the operators that show a line, and the fonts to write.

Every page shares one resource dictionary, written once the whole document is laid out, when the
characters shown in each CJK font (for their ToUnicode CMaps) and the fallback clusters are known.
"""

from __future__ import annotations

from .fallback import FallbackGlyphs
from .fonts import (
    CJK_FONTS,
    COURIER,
    HELVETICA,
    HELVETICA_BOLD,
    HELVETICA_BOLD_OBLIQUE,
    HELVETICA_OBLIQUE,
)
from .layout import FALLBACK, Line
from .pdf import PdfWriter, add_cjk_font, add_latin_font, cjk_string, latin_string
from .pdf import pdf_number as _n

_RESOURCE_NAMES = {
    HELVETICA: "F1",
    HELVETICA_BOLD: "F2",
    COURIER: "F3",
    HELVETICA_OBLIQUE: "F4",
    HELVETICA_BOLD_OBLIQUE: "F5",
    "zh": "C1",
    "ja": "C2",
    "ko": "C3",
}
_SLANT = 0.2  # the shear that stands in for an italic face where a font has none


class FontResources:
    """Tracks what the content streams show, so that exactly those fonts get written."""

    def __init__(self) -> None:
        self._latin: set[str] = set()
        self._cjk_chars: dict[str, set[str]] = {}
        self._fallback = FallbackGlyphs()

    def show(self, line: Line, x: float, baseline: float, size: float) -> str:
        """A text object drawing ``line`` with its left end at ``x`` on ``baseline``."""
        ops = ["BT"]
        for run in line.runs:
            slant = _SLANT if run.italic and (run.font in CJK_FONTS or run.font == FALLBACK) else 0
            matrix = f"1 0 {_n(slant)} 1 {_n(x + run.x)} {_n(baseline)} Tm"
            if run.font == FALLBACK:
                font, code = self._fallback.code(run.text)
                ops += [f"/E{font + 1} {_n(size)} Tf", matrix, f"<{code:02X}> Tj"]
                continue
            ops += [f"/{_RESOURCE_NAMES[run.font]} {_n(size)} Tf", matrix]
            if run.font in CJK_FONTS:
                self._cjk_chars.setdefault(run.font, set()).update(run.text)
                shown = cjk_string(run.text)
                if run.bold:
                    # no bold CJK face: fill and stroke the outline to embolden it
                    ops.append(f"2 Tr {_n(size * 0.035)} w {shown} Tj 0 Tr")
                else:
                    ops.append(f"{shown} Tj")
            else:
                self._latin.add(run.font)
                ops.append(f"{latin_string(run.text)} Tj")
        ops.append("ET")
        return " ".join(ops)

    def write(self, writer: PdfWriter) -> str:
        """Writes the fonts used; returns the resource dictionary naming them."""
        fonts = []
        for key, name in _RESOURCE_NAMES.items():
            if key in self._cjk_chars:
                number = add_cjk_font(writer, CJK_FONTS[key], self._cjk_chars[key])
            elif key in self._latin:
                number = add_latin_font(writer, key)
            else:
                continue
            fonts.append(f"/{name} {number} 0 R")
        for index, number in enumerate(self._fallback.write(writer), start=1):
            fonts.append(f"/E{index} {number} 0 R")
        return f"<< /Font << {' '.join(fonts)} >> >>"
