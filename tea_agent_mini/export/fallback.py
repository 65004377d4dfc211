"""The fallback glyph: what the PDF shows for text that none of its fonts has (emoji, mostly).

No emoji font is assumed on the reader's side and none is embedded, so each such grapheme cluster
(a character with its variation selectors, skin-tone modifiers, keycap mark and tags, emoji joined
by ZWJ, or a pair of regional indicators) becomes one code of a small Type 3 font drawn here: a
face in a circle for emoji, an empty box for anything else. The font's ToUnicode CMap maps every
code back to its cluster, so the text still copies and extracts as the original characters.
"""

from __future__ import annotations

import unicodedata

from .pdf import PdfWriter, to_unicode_cmap

GLYPH_WIDTH = 1000  # thousandths of an em, like the CJK fonts
_CODES_PER_FONT = 255  # one-byte codes 1..255
_M_WIDTH = 600
_ZWJ = "\u200d"
_PICTOGRAPHIC = ((0x2300, 0x23FF), (0x2600, 0x27BF), (0x2B00, 0x2BFF), (0x1F000, 0x1FAFF))
_REGIONAL = (0x1F1E6, 0x1F1FF)
_MODIFIERS = (0x1F3FB, 0x1F3FF)
_TAGS = (0xE0020, 0xE007F)


def clusters(text: str) -> list[str]:
    """``text`` cut into user-perceived characters, closely enough for emoji and combining marks."""
    found: list[str] = []
    index, end = 0, len(text)
    while index < end:
        stop = index + 1
        if _regional(text[index]) and stop < end and _regional(text[stop]):
            stop += 1  # a flag
        while stop < end:
            char = text[stop]
            if _extends(char):
                stop += 1
            elif char == _ZWJ and stop + 1 < end and _pictographic(text[stop + 1]):
                stop += 2  # a ZWJ sequence: family, profession, ...
            else:
                break
        found.append(text[index:stop])
        index = stop
    return found


def is_emoji(cluster: str) -> bool:
    return "\ufe0f" in cluster or any(_pictographic(c) or _regional(c) for c in cluster)


def _extends(char: str) -> bool:
    code = ord(char)
    return (
        unicodedata.category(char) in ("Mn", "Me", "Mc")
        or _MODIFIERS[0] <= code <= _MODIFIERS[1]
        or _TAGS[0] <= code <= _TAGS[1]
    )


def _pictographic(char: str) -> bool:
    return any(low <= ord(char) <= high for low, high in _PICTOGRAPHIC)


def _regional(char: str) -> bool:
    return _REGIONAL[0] <= ord(char) <= _REGIONAL[1]


class FallbackGlyphs:
    """Codes for the clusters a document shows with the fallback glyph, 255 to a font."""

    def __init__(self) -> None:
        self._index: dict[str, int] = {}

    def code(self, cluster: str) -> tuple[int, int]:
        """(font number counting from 0, one-byte code) for ``cluster``."""
        index = self._index.setdefault(cluster, len(self._index))
        font, code = divmod(index, _CODES_PER_FONT)
        return font, code + 1

    def write(self, writer: PdfWriter) -> list[int]:
        """Writes the fonts; returns their object numbers, font 0 first."""
        if not self._index:
            return []
        procs = {name: writer.add_stream(draw.encode("ascii")) for name, draw in _GLYPHS.items()}
        char_procs = " ".join(f"/{name} {number} 0 R" for name, number in procs.items())
        ordered = sorted(self._index, key=self._index.__getitem__)
        fonts = []
        for start in range(0, len(ordered), _CODES_PER_FONT):
            chunk = ordered[start : start + _CODES_PER_FONT]
            names = " ".join("/emoji" if is_emoji(c) else "/box" for c in chunk)
            cmap = to_unicode_cmap({bytes([code]): c for code, c in enumerate(chunk, start=1)})
            to_unicode = writer.add_stream(cmap.encode("ascii"))
            fonts.append(
                writer.add(
                    "<< /Type /Font /Subtype /Type3 /FontBBox [0 -100 1000 800]"
                    f" /FontMatrix [0.001 0 0 0.001 0 0] /CharProcs << {char_procs} >>"
                    f" /Encoding << /Type /Encoding /Differences [0 /m {names}] >>"
                    f" /FirstChar 0 /LastChar {len(chunk)} /Widths [{_M_WIDTH}"
                    f" {' '.join([str(GLYPH_WIDTH)] * len(chunk))}]"
                    f" /Resources << >> /ToUnicode {to_unicode} 0 R >>"
                )
            )
        return fonts


def _circle(cx: int, cy: int, r: int) -> str:
    k = round(r * 0.5523)
    return (
        f"{cx + r} {cy} m {cx + r} {cy + k} {cx + k} {cy + r} {cx} {cy + r} c"
        f" {cx - k} {cy + r} {cx - r} {cy + k} {cx - r} {cy} c"
        f" {cx - r} {cy - k} {cx - k} {cy - r} {cx} {cy - r} c"
        f" {cx + k} {cy - r} {cx + r} {cy - k} {cx + r} {cy} c h"
    )


# Glyph procedures in text space (1000 units to the em, baseline at 0). "d1" declares them
# uncoloured, so they paint in the current text colour.
_GLYPHS = {
    # Never shown (code 0). Poppler's text extraction guesses the scale of a Type 3 font from the
    # width of a glyph named "m", taken to be 0.6 em (else from any glyph, taken as 0.5 em, which
    # would make the fallback glyphs look twice as big and split them off the line they are on).
    "m": f"{_M_WIDTH} 0 0 0 0 0 d1",
    "box": f"{GLYPH_WIDTH} 0 100 -60 900 720 d1 120 -40 760 740 re 180 20 640 620 re f*",
    "emoji": (
        f"{GLYPH_WIDTH} 0 90 -80 910 740 d1 {_circle(500, 330, 400)} {_circle(500, 330, 345)} f*"
        f" {_circle(365, 420, 50)} f {_circle(635, 420, 50)} f"
        " 50 w 1 J 315 255 m 390 120 610 120 685 255 c S"
    ),
}
