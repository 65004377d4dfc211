"""Export: a pure-Python PDF writer for markdown text (standard-14 Latin fonts, Adobe CJK fonts
chosen per character, a drawn fallback glyph for emoji), and sessions as Markdown or PDF.

>>> from tea_agent_mini.export import PdfMeta, markdown_to_pdf
>>> data = markdown_to_pdf("# Report\n\nHello 世界", PdfMeta(title="Report"))
"""

from __future__ import annotations

from .document import PdfDocument
from .layout import Span
from .markdown_blocks import markdown_to_pdf, parse_markdown
from .markdown_inline import parse_inline
from .pdf import PdfMeta

__all__ = ["PdfDocument", "PdfMeta", "Span", "markdown_to_pdf", "parse_inline", "parse_markdown"]
