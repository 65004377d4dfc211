"""Low-level PDF 1.7 writing: numbered objects, streams, fonts, the xref table and the trailer."""

from __future__ import annotations

import hashlib
import zlib
from dataclasses import dataclass
from datetime import datetime, timezone

from .fonts import CjkFont

_HEADER = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"
_LITERAL_ESCAPES = {ord("\\"): "\\\\", ord("("): "\\(", ord(")"): "\\)", 13: "\\r", 10: "\\n"}


@dataclass
class PdfMeta:
    """Document information written to the PDF's Info dictionary."""

    title: str = ""
    author: str = ""
    subject: str = ""
    creator: str = "tea_agent_mini"
    created: datetime | None = None  # None: the time the PDF is written


class PdfWriter:
    """Collects numbered indirect objects and serialises them with a byte-exact xref table."""

    def __init__(self) -> None:
        self._bodies: list[bytes | None] = []

    def reserve(self) -> int:
        """Number an object whose body comes later (it may refer to objects made after it)."""
        self._bodies.append(None)
        return len(self._bodies)

    def set(self, number: int, body: str | bytes) -> int:
        self._bodies[number - 1] = body.encode("latin-1") if isinstance(body, str) else body
        return number

    def add(self, body: str | bytes) -> int:
        return self.set(self.reserve(), body)

    def add_stream(self, data: bytes, entries: str = "", compress: bool = True) -> int:
        if compress:
            data = zlib.compress(data, 9)
            entries = f"{entries} /Filter /FlateDecode"
        head = f"<< /Length {len(data)}{entries} >>\nstream\n".encode("latin-1")
        return self.add(head + data + b"\nendstream")

    def to_bytes(self, root: int, info: int) -> bytes:
        out = bytearray(_HEADER)
        offsets = []
        for number, body in enumerate(self._bodies, start=1):
            if body is None:
                raise ValueError(f"PDF object {number} was reserved but never written")
            offsets.append(len(out))
            out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
        xref_at = len(out)
        count = len(self._bodies) + 1
        out += b"xref\n0 %d\n0000000000 65535 f \n" % count
        for offset in offsets:
            out += b"%010d 00000 n \n" % offset
        file_id = hashlib.md5(bytes(out), usedforsecurity=False).hexdigest().encode("ascii")
        out += b"trailer\n<< /Size %d /Root %d 0 R /Info %d 0 R /ID [<%s> <%s>] >>\n" % (
            count,
            root,
            info,
            file_id,
            file_id,
        )
        out += b"startxref\n%d\n%%%%EOF\n" % xref_at
        return bytes(out)


def text_string(text: str) -> str:
    """A PDF text string: a literal when ASCII, else UTF-16BE with a byte-order mark.

    Control characters are dropped and lone surrogates become U+FFFD, so any str is accepted.
    """
    text = "".join(_clean_char(c) for c in text)
    if text.isascii():
        return "(" + text.translate(_LITERAL_ESCAPES) + ")"
    return "<FEFF" + text.encode("utf-16-be").hex().upper() + ">"


def _clean_char(char: str) -> str:
    if 0xD800 <= ord(char) <= 0xDFFF:
        return "\ufffd"
    if ord(char) < 32 or 0x7F <= ord(char) < 0xA0:
        return " " if char in "\t\n\r" else ""
    return char


def latin_string(text: str) -> str:
    """A literal string of WinAnsi codes, with bytes outside ASCII written as octal escapes."""
    parts = []
    for byte in text.encode("cp1252"):
        if byte in _LITERAL_ESCAPES:
            parts.append(_LITERAL_ESCAPES[byte])
        elif 32 <= byte < 127:
            parts.append(chr(byte))
        else:
            parts.append(f"\\{byte:03o}")
    return "(" + "".join(parts) + ")"


def cjk_string(text: str) -> str:
    """A hex string of UTF-16BE codes, the encoding of the Uni*-UTF16-H CMaps."""
    return "<" + text.encode("utf-16-be").hex().upper() + ">"


def pdf_number(value: float) -> str:
    """A compact PDF number: at most two decimals, no trailing zeros."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def pdf_date(moment: datetime) -> str:
    """D:YYYYMMDDHHmmSS+HH'mm' (naive datetimes are taken as UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    offset = moment.utcoffset()
    minutes = int(offset.total_seconds() // 60) if offset else 0
    sign = "+" if minutes >= 0 else "-"
    hours, mins = divmod(abs(minutes), 60)
    return moment.strftime("D:%Y%m%d%H%M%S") + f"{sign}{hours:02d}'{mins:02d}'"


def info_dict(meta: PdfMeta, producer: str) -> str:
    created = pdf_date(meta.created or datetime.now(timezone.utc))
    entries = [("Title", meta.title), ("Author", meta.author), ("Subject", meta.subject)]
    entries += [("Creator", meta.creator), ("Producer", producer)]
    body = "".join(f" /{key} {text_string(value)}" for key, value in entries if value)
    return f"<<{body} /CreationDate {text_string(created)} /ModDate {text_string(created)} >>"


def add_latin_font(writer: PdfWriter, base_font: str) -> int:
    """A standard-14 font: readers carry its glyphs and metrics, so nothing is embedded."""
    return writer.add(
        f"<< /Type /Font /Subtype /Type1 /BaseFont /{base_font} /Encoding /WinAnsiEncoding >>"
    )


def add_cjk_font(writer: PdfWriter, font: CjkFont, used: set[str]) -> int:
    """A non-embedded Type0 font on an Adobe CJK collection, with a ToUnicode CMap for ``used``."""
    bbox = " ".join(str(v) for v in font.bbox)
    descriptor = writer.add(
        f"<< /Type /FontDescriptor /FontName /{font.base_font} /Flags 6 /FontBBox [{bbox}]"
        f" /ItalicAngle 0 /Ascent {font.bbox[3]} /Descent {font.bbox[1]}"
        f" /CapHeight {font.cap_height} /StemV {font.stem_v} >>"
    )
    descendant = writer.add(
        f"<< /Type /Font /Subtype /CIDFontType0 /BaseFont /{font.base_font}"
        f" /CIDSystemInfo << /Registry (Adobe) /Ordering ({font.ordering})"
        f" /Supplement {font.supplement} >> /FontDescriptor {descriptor} 0 R /DW 1000 >>"
    )
    cmap = to_unicode_cmap({c.encode("utf-16-be"): c for c in used})
    to_unicode = writer.add_stream(cmap.encode("ascii"))
    return writer.add(
        f"<< /Type /Font /Subtype /Type0 /BaseFont /{font.base_font}-{font.cmap}"
        f" /Encoding /{font.cmap} /DescendantFonts [{descendant} 0 R]"
        f" /ToUnicode {to_unicode} 0 R >>"
    )


def to_unicode_cmap(mapping: dict[bytes, str]) -> str:
    """A ToUnicode CMap from character codes (all one or all two bytes long) to the text each
    stands for, which may be several characters (an emoji sequence, say)."""
    size = len(next(iter(mapping), b"\0\0"))
    lines = [
        "/CIDInit /ProcSet findresource begin",
        "12 dict begin",
        "begincmap",
        "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def",
        "/CMapName /Adobe-Identity-UCS def",
        "/CMapType 2 def",
        "1 begincodespacerange",
        f"<{'00' * size}> <{'FF' * size}>",
        "endcodespacerange",
    ]
    pairs = sorted(mapping.items())
    for start in range(0, len(pairs), 100):
        chunk = pairs[start : start + 100]
        lines.append(f"{len(chunk)} beginbfchar")
        for code, text in chunk:
            lines.append(f"<{code.hex().upper()}> <{text.encode('utf-16-be').hex().upper()}>")
        lines.append("endbfchar")
    lines += ["endcmap", "CMapName currentdict /CMap defineresource pop", "end", "end"]
    return "\n".join(lines) + "\n"
