"""toolkit_publish_doc: write a standalone document (Markdown or HTML) into ``<workspace>/docs/``.

HTML is built from the Markdown subset the PDF exporter understands (headings, paragraphs,
nested lists, fenced code, rules, quotes, pipe tables, ``**bold**``, ``*italic*``, ```code```)
plus ``[links](https://...)``;
every piece of text is escaped, and the page carries its own small stylesheet (no network).
"""

from __future__ import annotations

import html
import re
from typing import Any, Literal

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import tool
from tea_agent_mini.tools.mdfiles import slugify, write_text_atomic

DOCS_DIR = "docs"
MAX_CONTENT = 2 * 1024 * 1024
_LINK = re.compile(r"\[([^\]\n]+)\]\(([^)\s]+)\)")
_CELL_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)
_SAFE_URL = re.compile(r"^(?:https?://|mailto:|#|/|\./|\.\./|[\w.-]+(?:[/#?]|$))", re.IGNORECASE)

STYLESHEET = """\
body{max-width:46rem;margin:2rem auto;padding:0 1rem;font:16px/1.6 system-ui,-apple-system,
"Segoe UI",Roboto,"Noto Sans","PingFang SC","Microsoft YaHei",sans-serif;color:#1f2328;
background:#fff}
h1,h2,h3,h4{line-height:1.25;margin:1.6em 0 .6em}h1{border-bottom:1px solid #d0d7de;
padding-bottom:.3em}
code{font:.9em ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#f6f8fa;
padding:.1em .3em;border-radius:4px}
pre{background:#f6f8fa;padding:1em;overflow:auto;border-radius:6px}pre code{padding:0}
hr{border:0;border-top:1px solid #d0d7de;margin:2em 0}a{color:#0969da}
.pagebreak{break-after:page;border:0;margin:0}
blockquote{margin:1em 0;padding:0 1em;color:#59636e;border-left:.25em solid #d0d7de}
table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #d0d7de;padding:.3em .7em}
th{background:#f6f8fa}
@media (prefers-color-scheme:dark){body{background:#0d1117;color:#e6edf3}
code,pre,th{background:#161b22}a{color:#4493f8}h1{border-color:#30363d}}
"""


def markdown_to_html(text: str) -> str:
    """The HTML body for a Markdown text (the subset described in the module docstring)."""
    from tea_agent_mini.export.markdown_blocks import parse_markdown

    return _blocks_html(parse_markdown(text))


def _blocks_html(blocks: list[Any]) -> str:
    from tea_agent_mini.export.markdown_blocks import (
        CodeBlock,
        Heading,
        ListBlock,
        PageBreak,
        Paragraph,
        Quote,
        Table,
    )

    parts = []
    for block in blocks:
        if isinstance(block, Quote):
            parts.append(f"<blockquote>\n{_blocks_html(block.blocks)}\n</blockquote>")
        elif isinstance(block, Table):
            parts.append(_table_html(block))
        elif isinstance(block, Heading):
            level = min(max(block.level, 1), 6)
            parts.append(f"<h{level}>{inline_html(block.text)}</h{level}>")
        elif isinstance(block, Paragraph):
            parts.append(f"<p>{inline_html(block.text)}</p>")
        elif isinstance(block, ListBlock):
            parts.append(_list_html(block.items))
        elif isinstance(block, CodeBlock):
            parts.append(f"<pre><code>{html.escape(block.text, quote=False)}</code></pre>")
        elif isinstance(block, PageBreak):
            parts.append('<hr class="pagebreak">')
        else:
            parts.append("<hr>")
    return "\n".join(parts)


def _table_html(table: Any) -> str:
    def row(cells: list[str], tag: str) -> str:
        return (
            "<tr>"
            + "".join(
                f'<{tag} style="text-align:{align}">{_cell_html(cell)}</{tag}>'
                for cell, align in zip(cells, table.aligns, strict=False)
            )
            + "</tr>"
        )

    body = "".join(row(cells, "td") for cells in table.rows)
    return f"<table><thead>{row(table.header, 'th')}</thead><tbody>{body}</tbody></table>"


def _cell_html(text: str) -> str:
    return "<br>".join(inline_html(part.strip()) for part in _CELL_BREAK.split(text))


def inline_html(text: str) -> str:
    from tea_agent_mini.export.layout import BOLD, BOLD_ITALIC, CODE, ITALIC
    from tea_agent_mini.export.markdown_inline import parse_inline

    out = []
    for span in parse_inline(text):
        if span.style == CODE:
            out.append(f"<code>{html.escape(span.text, quote=False)}</code>")
        elif span.style == BOLD:
            out.append(f"<strong>{_links(span.text)}</strong>")
        elif span.style == ITALIC:
            out.append(f"<em>{_links(span.text)}</em>")
        elif span.style == BOLD_ITALIC:
            out.append(f"<strong><em>{_links(span.text)}</em></strong>")
        else:
            out.append(_links(span.text))
    return "".join(out)


def _links(text: str) -> str:
    """Escaped text with ``[label](url)`` turned into links when the URL is harmless."""
    out, position = [], 0
    for match in _LINK.finditer(text):
        label, url = match.group(1), match.group(2)
        if not _SAFE_URL.match(url):
            continue  # javascript: and other schemes stay visible as plain text
        out.append(html.escape(text[position : match.start()], quote=False))
        out.append(f'<a href="{html.escape(url)}">{html.escape(label, quote=False)}</a>')
        position = match.end()
    out.append(html.escape(text[position:], quote=False))
    return "".join(out)


def _list_html(items: list[Any]) -> str:
    out: list[str] = []
    stack: list[tuple[int, str]] = []  # open lists: (level, tag)
    for item in items:
        tag = "ol" if item.ordered else "ul"
        while stack and stack[-1][0] > item.level:
            out.append(f"</li></{stack.pop()[1]}>")
        if stack and stack[-1][0] == item.level:
            if stack[-1][1] == tag:
                out.append("</li>")
            else:
                out.append(f"</li></{stack.pop()[1]}>")
        if not stack or stack[-1][0] < item.level:
            start = f' start="{item.number}"' if item.ordered and item.number != 1 else ""
            out.append(f"<{tag}{start}>")
            stack.append((item.level, tag))
        out.append(f"<li>{inline_html(item.text)}")
    while stack:
        out.append(f"</li></{stack.pop()[1]}>")
    return "".join(out)


def html_page(title: str, body: str) -> str:
    return (
        "<!DOCTYPE html>\n"
        '<html>\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{html.escape(title, quote=False)}</title>\n"
        f"<style>\n{STYLESHEET}</style>\n</head>\n<body>\n{body}\n</body>\n</html>\n"
    )


def _starts_with_title(content: str, title: str) -> bool:
    first = content.lstrip().split("\n", 1)[0].strip()
    return first.startswith("# ") and first[2:].strip() == title


@tool("toolkit_publish_doc", mutates=True)
def toolkit_publish_doc(
    ctx: ToolContext,
    title: str,
    content: str,
    format: Literal["md", "html"] = "md",  # the name the model sees, though it shadows a builtin
    filename: str | None = None,
) -> str:
    """Publish a finished document (report, guide, notes) as a file in the workspace's docs/
    folder: Markdown as written, or a standalone HTML page converted from the Markdown
    (headings, lists, code blocks, bold, links). Replaces a file of the same name.

    Args:
        title: the document's title
        content: the body, in Markdown
        format: default md
        filename: file name inside docs/ (default: made from the title)
    """
    title = " ".join(title.split())
    if not title:
        raise ToolError("the document needs a title")
    if format not in ("md", "html"):
        raise ToolError("format must be 'md' or 'html'")
    if len(content) > MAX_CONTENT:
        raise ToolError(f"the content is too long (limit {MAX_CONTENT // (1024 * 1024)} MiB)")
    name = _file_name(filename, title, format)
    target = ctx.resolve(f"{DOCS_DIR}/{name}")
    markdown = content if _starts_with_title(content, title) else f"# {title}\n\n{content}"
    text = html_page(title, markdown_to_html(markdown)) if format == "html" else markdown
    existed = target.exists()
    write_text_atomic(target, text.rstrip("\n") + "\n")
    verb = "Replaced" if existed else "Published"
    return f"{verb} {ctx.relative(target)} ({len(text.encode('utf-8'))} bytes, {format})."


def _file_name(filename: str | None, title: str, format: str) -> str:
    suffix = ".html" if format == "html" else ".md"
    if filename:
        name = filename.strip()
        if "/" in name or "\\" in name or name.startswith(".") or not name:
            raise ToolError("'filename' must be a plain file name inside docs/, without folders")
        return name if "." in name else name + suffix
    return (slugify(title) or "document") + suffix
