"""Fonts the PDF writer knows: the standard-14 Latin fonts and the Adobe CJK collections.

Latin text is measured with the real glyph advances of Helvetica, Helvetica-Bold and Courier, taken
from Adobe's core-font AFM files (Copyright (c) 1985, 1987, 1989, 1990, 1997 Adobe Systems
Incorporated; the AFM licence allows copying for any purpose) and laid out in WinAnsiEncoding order
for the codes 32..255 (0 marks a code WinAnsi leaves undefined); the Oblique faces share the
upright advances. CJK characters go to a non-embedded CID-keyed font and count as one em each,
which is what the font's /DW 1000 says too. Which collection has a character is decided per
character (:func:`cjk_font_for`), so Chinese, kana and Hangul mixed in one line all find a glyph.
What no font here can show (emoji, most other scripts) is drawn as a fallback glyph, see
:mod:`.fallback`.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

HELVETICA = "Helvetica"
HELVETICA_BOLD = "Helvetica-Bold"
HELVETICA_OBLIQUE = "Helvetica-Oblique"
HELVETICA_BOLD_OBLIQUE = "Helvetica-BoldOblique"
COURIER = "Courier"

_FIRST_CODE = 32
_HELVETICA_WIDTHS = (
    "278 278 355 556 556 889 667 191 333 333 389 584 278 333 278 278 556 556 556 556 556 "
    "556 556 556 556 556 278 278 584 584 584 556 1015 667 667 722 722 667 611 778 722 278 "
    "500 667 556 833 722 778 667 778 722 667 611 722 667 944 667 667 611 278 278 278 469 "
    "556 333 556 556 500 556 556 278 556 556 222 222 500 222 833 556 556 556 556 333 500 "
    "278 556 500 722 500 500 500 334 260 334 584 0 556 0 222 556 333 1000 556 556 333 "
    "1000 667 333 1000 0 611 0 0 222 222 333 333 350 556 1000 333 1000 500 333 944 0 500 "
    "667 278 333 556 556 556 556 260 556 333 737 370 556 584 333 737 333 400 584 333 333 "
    "333 556 537 278 333 333 365 556 834 834 834 611 667 667 667 667 667 667 1000 722 667 "
    "667 667 667 278 278 278 278 722 722 778 778 778 778 778 584 778 722 722 722 722 667 "
    "667 611 556 556 556 556 556 556 889 500 556 556 556 556 278 278 278 278 556 556 556 "
    "556 556 556 556 584 611 556 556 556 556 500 556 500"
)
_HELVETICA_BOLD_WIDTHS = (
    "278 333 474 556 556 889 722 238 333 333 389 584 278 333 278 278 556 556 556 556 556 "
    "556 556 556 556 556 333 333 584 584 584 611 975 722 722 722 722 667 611 778 722 278 "
    "556 722 611 833 722 778 667 778 722 667 611 722 667 944 667 667 611 333 278 333 584 "
    "556 333 556 611 556 611 556 333 611 611 278 278 556 278 889 611 611 611 611 389 556 "
    "333 611 556 778 556 556 500 389 280 389 584 0 556 0 278 556 500 1000 556 556 333 "
    "1000 667 333 1000 0 611 0 0 278 278 500 500 350 556 1000 333 1000 556 333 944 0 500 "
    "667 278 333 556 556 556 556 280 556 333 737 370 556 584 333 737 333 400 584 333 333 "
    "333 611 556 278 333 333 365 556 834 834 834 611 722 722 722 722 722 722 1000 722 667 "
    "667 667 667 278 278 278 278 722 722 778 778 778 778 778 584 778 722 722 722 722 667 "
    "667 611 556 556 556 556 556 556 889 556 556 556 556 556 278 278 278 278 611 611 611 "
    "611 611 611 611 584 611 611 611 611 611 556 611 556"
)
_COURIER_WIDTH = 600

# Characters outside WinAnsi that have an obvious ASCII stand-in; everything else falls back to
# its compatibility decomposition (accents dropped) and finally to "?".
_STAND_INS = {
    "\t": " ",
    "\u2010": "-",
    "\u2011": "-",
    "\u2012": "-",
    "\u2212": "-",
    "\u2190": "<-",
    "\u2192": "->",
    "\u2194": "<->",
    "\u21d2": "=>",
    "\u2264": "<=",
    "\u2265": ">=",
    "\u2260": "!=",
    "\u2248": "~",
    "\u2713": "v",
    "\u2714": "v",
    "\u2717": "x",
    "\u2718": "x",
    "\u25cf": "\u2022",
    "\u25e6": "o",
    "\u25aa": "\u2022",
    "\u2023": "\u2022",
    "\u2043": "-",
}
_ZERO_WIDTH = frozenset("\u200b\u200c\u200d\u2060\ufeff\u00ad")
_HALF_WIDTH = re.compile("[\uff61-\uffdc]+")
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class CjkFont:
    """One Adobe CJK character collection with a font every PDF reader is expected to know."""

    script: str
    base_font: str
    ordering: str
    supplement: int
    cmap: str
    bbox: tuple[int, int, int, int]
    cap_height: int
    stem_v: int


CJK_FONTS = {
    "zh": CjkFont("zh", "STSong-Light", "GB1", 5, "UniGB-UTF16-H", (-25, -254, 1000, 880), 880, 93),
    "ja": CjkFont(
        "ja", "KozMinPro-Regular", "Japan1", 7, "UniJIS-UTF16-H", (-195, -272, 1110, 1075), 740, 86
    ),
    "ko": CjkFont(
        "ko", "HYSMyeongJo-Medium", "Korea1", 1, "UniKS-UTF16-H", (-28, -148, 1001, 880), 880, 59
    ),
}

_KANA = ((0x3040, 0x30FF), (0x31F0, 0x31FF), (0xFF65, 0xFF9F))
_HANGUL = ((0x1100, 0x11FF), (0x3130, 0x318F), (0xA960, 0xA97F), (0xAC00, 0xD7FF), (0xFFA0, 0xFFDC))
_OTHER_CJK = (
    (0x2E80, 0x2FFF),  # radicals, Kangxi, ideographic description
    (0x3000, 0x303F),  # CJK symbols and punctuation
    (0x3100, 0x312F),  # Bopomofo
    (0x3190, 0x31EF),  # Kanbun, Bopomofo extended, strokes
    (0x3200, 0x4DBF),  # enclosed, compatibility, extension A
    (0x4E00, 0x9FFF),  # unified ideographs
    (0xF900, 0xFAFF),  # compatibility ideographs
    (0xFE30, 0xFE4F),  # compatibility forms
    (0xFF00, 0xFF64),  # full-width forms
    (0xFFE0, 0xFFE6),
)
# Supplementary-plane ideographs are left out on purpose: poppler reads ToUnicode CMaps of CID
# fonts as two-byte codes only, so their four-byte UTF-16 codes would not extract as text.


def _within(code: int, ranges: tuple[tuple[int, int], ...]) -> bool:
    return any(low <= code <= high for low, high in ranges)


def cjk_script(char: str) -> str | None:
    """'ja' for kana, 'ko' for Hangul, 'han' for other CJK characters, None for the rest.

    Only characters of the Basic Multilingual Plane count: a CJK font gets two-byte codes only.
    """
    code = ord(char)
    if code < 0x1100:
        return None
    if _within(code, _KANA):
        return "ja"
    if _within(code, _HANGUL):
        return "ko"
    if _within(code, _OTHER_CJK):
        return "han"
    return None


# Python's codecs for the national standards behind each collection tell, without shipping any
# table, whether the collection has a character. Checked against poppler-data's Uni*-UTF16-H
# CMaps: GBK = Adobe-GB1 on the unified ideographs (GB1 also has all of Extension A, which GBK
# lacks), JIS X 0208/0212/0213 within Adobe-Japan1, UHC = Adobe-Korea1 on Han and all 11,172
# Hangul syllables. The few characters a codec maps but the CMap does not are listed.
_CODECS = {"zh": ("gbk",), "ja": ("cp932", "euc_jis_2004", "euc_jp"), "ko": ("cp949",)}
_EXTENSION_A = (0x3400, 0x4DB5)
_NOT_IN_CMAP = {
    "ja": frozenset("\u2985\u2986"),
    "ko": frozenset("\u02d0\u2015\u223c\u226a\u226b\u2299"),
}


def cjk_covers(language: str, char: str) -> bool:
    """Whether the CJK font for ``language`` ("zh", "ja", "ko") has a glyph for ``char``."""
    code = ord(char)
    if code < 0xA0 or 0xD800 <= code <= 0xDFFF or unicodedata.category(char) == "Co":
        return False
    if language == "zh" and _EXTENSION_A[0] <= code <= _EXTENSION_A[1]:
        return True
    if char in _NOT_IN_CMAP.get(language, ()):
        return False
    return any(_encodable(char, codec) for codec in _CODECS[language])


def cjk_font_for(char: str, preferred: str = "zh") -> str | None:
    """The CJK font to show ``char`` with: kana in "ja", Hangul in "ko", other characters in
    ``preferred`` when it has them, else in the first of "zh", "ja", "ko" that does; None when
    none has a glyph (the caller draws a fallback glyph)."""
    script = cjk_script(char)
    first = script if script in ("ja", "ko") else preferred
    for language in dict.fromkeys((first, "zh", "ja", "ko")):
        if cjk_covers(language, char):
            return language
    return None


def detect_cjk_language(text: str, default: str = "zh") -> str:
    """The CJK font for the Han characters in ``text``: Japanese next to kana, else ``default``.

    Adobe-GB1 holds every unified ideograph up to U+9FA5, so it is the safe default; Adobe-Japan1
    lacks many simplified forms and Adobe-Korea1 most Han characters, so Hangul changes nothing.
    """
    if any(cjk_script(char) == "ja" for char in text):
        return "ja"
    return default


def normalize_text(text: str) -> str:
    """NFC, with half-width kana and Hangul widened: the CJK fonts set every character 1 em wide.

    Lone surrogates (possible in a str, never in valid UTF-16) become U+FFFD.
    """
    text = _SURROGATE.sub("\ufffd", unicodedata.normalize("NFC", text))
    return _HALF_WIDTH.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)


def to_winansi(char: str) -> str:
    """Text that WinAnsiEncoding can show for ``char`` ("" for invisible characters, else "?")."""
    shown = winansi_form(char)
    return "?" if shown is None else shown


def winansi_form(char: str) -> str | None:
    """Like :func:`to_winansi`, but None where it would give "?" (no stand-in, nothing to fold)."""
    if char in _ZERO_WIDTH:
        return ""
    if char in _STAND_INS:
        return _STAND_INS[char]
    category = unicodedata.category(char)
    if category in ("Cc", "Mn", "Me"):
        return ""  # a combining mark left over after NFC: its base is shown without it
    if _encodable(char):
        return char
    if category[0] == "Z":
        return " "
    folded = "".join(c for c in unicodedata.normalize("NFKD", char) if _encodable(c))
    return folded if folded.strip() else None


def _encodable(char: str, codec: str = "cp1252") -> bool:
    try:
        char.encode(codec)
    except UnicodeEncodeError:
        return False
    return True


class FontMetrics:
    """Advance widths in thousandths of an em for the Latin fonts."""

    def __init__(self) -> None:
        regular = [int(w) for w in _HELVETICA_WIDTHS.split()]
        bold = [int(w) for w in _HELVETICA_BOLD_WIDTHS.split()]
        self._widths = {
            HELVETICA: regular,
            HELVETICA_BOLD: bold,
            HELVETICA_OBLIQUE: regular,
            HELVETICA_BOLD_OBLIQUE: bold,
        }

    def char_width(self, char: str, font: str) -> int:
        """Width of one WinAnsi-encodable character (as returned by :func:`to_winansi`)."""
        if font == COURIER:
            return _COURIER_WIDTH
        code = char.encode("cp1252")[0] - _FIRST_CODE
        if 0 <= code < len(self._widths[font]):
            return self._widths[font][code]
        return 0

    def text_width(self, text: str, font: str, size: float) -> float:
        """Width in points of WinAnsi-encodable ``text`` set in ``font`` at ``size``."""
        return sum(self.char_width(c, font) for c in text) * size / 1000.0
