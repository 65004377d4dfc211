"""HTML to readable plain text with the standard library's html.parser.

The title comes first, headings become ``#`` lines, list items ``-`` lines, links
``text (url)``, ``<pre>`` blocks are kept verbatim in fences; scripts, styles, navigation and
other chrome are dropped and whitespace is collapsed.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urljoin

DROP = frozenset({"script", "style", "noscript", "nav", "template", "svg", "iframe", "head"})
BLOCK = frozenset(
    {"p", "div", "section", "article", "main", "header", "footer", "aside", "form", "table"}
    | {"blockquote", "figure", "figcaption", "dl", "dt", "dd", "address", "details", "summary"}
    | {"ul", "ol", "hr", "tr", "fieldset", "center"}
)
HEADINGS = {f"h{n}": n for n in range(1, 7)}
VOID = frozenset({"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "wbr"})


class _TextBuilder(HTMLParser):
    def __init__(self, base_url: str) -> None:
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.parts: list[str] = []
        self.title = ""
        self._in_title = False
        self._drop_depth = 0
        self._drop_stack: list[str] = []
        self._pre_depth = 0
        self._list_depth = 0
        self._link: str | None = None
        self._link_start = 0

    # -- output helpers --------------------------------------------------------------------
    def _tail(self) -> str:
        return "".join(self.parts[-3:])

    def _newlines(self, count: int) -> None:
        tail = self._tail()
        if not self.parts:
            return
        have = len(tail) - len(tail.rstrip("\n"))
        if have < count:
            self.parts.append("\n" * (count - have))

    def _text(self, text: str) -> None:
        if self._pre_depth:
            self.parts.append(text)
            return
        text = re.sub(r"\s+", " ", text)
        if not text.strip():
            if self.parts and not self._tail().endswith((" ", "\n")):
                self.parts.append(" ")
            return
        if self._tail().endswith(("\n", " ")) or not self.parts:
            text = text.lstrip()
        self.parts.append(text)

    # -- parser callbacks ------------------------------------------------------------------
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title" and not self.title:
            self._in_title = True
            return
        if tag == "body" and self._drop_stack[:1] == ["head"]:
            self._drop_depth, self._drop_stack = 0, []  # <head> was never closed
        if self._drop_depth:
            if tag not in VOID:
                self._drop_stack.append(tag)
                self._drop_depth += tag in DROP
            return
        if tag in DROP:
            self._drop_depth = 1
            self._drop_stack = [tag]
            return
        self._open(tag, dict(attrs))

    def _open(self, tag: str, attrs: dict[str, str | None]) -> None:
        if tag in HEADINGS:
            self._newlines(2)
            self.parts.append("#" * HEADINGS[tag] + " ")
        elif tag == "li":
            self._newlines(1)
            self.parts.append("  " * max(self._list_depth - 1, 0) + "- ")
        elif tag in ("ul", "ol"):
            self._list_depth += 1
            self._newlines(1 if self._list_depth > 1 else 2)
        elif tag == "pre":
            self._newlines(2)
            self.parts.append("```\n")
            self._pre_depth += 1
        elif tag == "br":
            self.parts.append("\n")
        elif tag in ("td", "th"):
            if self.parts and not self._tail().endswith("\n"):
                self.parts.append(" | ")
        elif tag == "a":
            self._link = attrs.get("href")
            self._link_start = len(self.parts)
        elif tag == "img" and attrs.get("alt"):
            self._text(f" [image: {attrs['alt']}] ")
        elif tag in BLOCK:
            self._newlines(2 if tag in ("p", "table", "blockquote") else 1)

    def handle_endtag(self, tag: str) -> None:
        if tag == "title" and self._in_title:
            self._in_title = False
            return
        if self._drop_depth:
            self._close_dropped(tag)
            return
        if tag in HEADINGS:
            self._newlines(2)
        elif tag in ("ul", "ol"):
            self._list_depth = max(self._list_depth - 1, 0)
            self._newlines(2 if self._list_depth == 0 else 1)
        elif tag == "pre" and self._pre_depth:
            self._pre_depth -= 1
            self._newlines(1)
            self.parts.append("```")
            self._newlines(2)
        elif tag == "a":
            self._close_link()
        elif tag in BLOCK or tag == "li":
            self._newlines(2 if tag in ("p", "table", "blockquote") else 1)

    def _close_dropped(self, tag: str) -> None:
        if tag not in self._drop_stack:
            return  # a stray end tag inside dropped content
        while self._drop_stack:
            opened = self._drop_stack.pop()
            self._drop_depth -= opened in DROP
            if opened == tag:
                break
        if not self._drop_stack:
            self._drop_depth = 0

    def _close_link(self) -> None:
        href, self._link = self._link, None
        if not href or href.startswith(("#", "javascript:", "mailto:")):
            return
        url = urljoin(self.base_url, href) if self.base_url else href
        text = "".join(self.parts[self._link_start :]).strip()
        if not text:
            return
        if text != url:
            self.parts.append(f" ({url})")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        elif not self._drop_depth:
            self._text(data)


def html_to_text(html: str, base_url: str = "") -> str:
    """Readable text of an HTML document (title first, as a ``#`` heading)."""
    builder = _TextBuilder(base_url)
    builder.feed(html)
    builder.close()
    body = "".join(builder.parts)
    lines = [line.rstrip() for line in body.split("\n")]
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
    title = re.sub(r"\s+", " ", builder.title).strip()
    if title and not text.startswith(f"# {title}"):
        text = f"# {title}\n\n{text}" if text else f"# {title}"
    return text
