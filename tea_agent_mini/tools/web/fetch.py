"""toolkit_web_fetch: download a page and return it as readable text."""

from __future__ import annotations

import codecs
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import tool
from tea_agent_mini.tools.web.htmltext import html_to_text
from tea_agent_mini.tools.web.netguard import FetchPolicy

if TYPE_CHECKING:
    import httpx

MAX_BODY_BYTES = 2 * 1024 * 1024
MAX_REDIRECTS = 5
MAX_CHARS_LIMIT = 200_000
USER_AGENT = "Mozilla/5.0 (compatible; tea_agent_mini web_fetch)"
TEXT_TYPES = frozenset(
    {"application/xml", "application/javascript", "application/x-yaml", "application/yaml"}
    | {"application/x-sh", "application/sql", "application/toml", "application/csv"}
)


@dataclass(frozen=True)
class Download:
    url: str
    status: int
    reason: str
    content_type: str
    charset: str | None
    body: bytes
    capped: bool


def download(
    url: str, timeout: float, max_bytes: int = MAX_BODY_BYTES, policy: FetchPolicy | None = None
) -> Download:
    """GET ``url`` following up to MAX_REDIRECTS redirects, each hop checked against ``policy``
    (public addresses only, by default); stop reading after ``max_bytes``."""
    import httpx

    policy = policy or FetchPolicy()
    try:
        with httpx.Client(
            timeout=timeout, headers={"User-Agent": USER_AGENT, "Accept": "text/html,*/*;q=0.8"}
        ) as client:
            for _ in range(MAX_REDIRECTS + 1):
                response = policy.send(client, url)
                try:
                    location = response.headers.get("location") if response.is_redirect else None
                    if location is None:
                        return _read(response, url, max_bytes)
                finally:
                    response.close()
                url = _redirect_target(url, location)
    except httpx.TimeoutException as exc:
        raise ToolError(f"timed out after {timeout:g}s fetching {url}") from exc
    except httpx.HTTPError as exc:
        raise ToolError(f"fetching {url} failed: {type(exc).__name__}: {exc}") from exc
    raise ToolError(f"too many redirects (more than {MAX_REDIRECTS}) fetching {url}")


def _redirect_target(url: str, location: str) -> str:
    target = urljoin(url, location.strip())
    if urlsplit(target).scheme.lower() not in ("http", "https"):
        raise ToolError(f"{url} redirects to {target!r}, which is not an http(s) URL")
    return target


def _read(response: httpx.Response, url: str, max_bytes: int) -> Download:
    chunks: list[bytes] = []
    size = 0
    capped = False
    for chunk in response.iter_bytes():
        if size + len(chunk) > max_bytes:
            chunks.append(chunk[: max_bytes - size])
            capped = True
            break
        chunks.append(chunk)
        size += len(chunk)
    return Download(
        url=url,  # as asked for: the request itself may go to the checked address
        status=response.status_code,
        reason=response.reason_phrase,
        content_type=response.headers.get("content-type", ""),
        charset=response.charset_encoding,
        body=b"".join(chunks),
        capped=capped,
    )


def render(download: Download) -> str:
    """The body as text for the model: HTML converted, JSON and text passed through."""
    mime = download.content_type.split(";", 1)[0].strip().lower()
    body = download.body
    if not _is_textual(mime, body):
        return f"({mime or 'unknown'} content, {len(body):,} bytes: not text, so not shown)"
    text = body.decode(_charset(download.charset, body), errors="replace")
    if mime in ("text/html", "application/xhtml+xml") or (not mime and _looks_html(text)):
        return html_to_text(text, download.url)
    if (mime == "application/json" or mime.endswith("+json")) and not download.capped:
        try:
            return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
        except ValueError:
            return text
    return text


def _is_textual(mime: str, body: bytes) -> bool:
    if mime.startswith("text/") or mime in TEXT_TYPES:
        return True
    if mime.endswith(("+xml", "+json")) or mime in ("application/json", "application/xhtml+xml"):
        return True
    return not mime and b"\x00" not in body[:4096]


def _looks_html(text: str) -> bool:
    head = text[:1024].lstrip().lower()
    return head.startswith(("<!doctype html", "<html")) or "<body" in head


def _charset(declared: str | None, body: bytes) -> str:
    candidates = [declared]
    match = re.search(rb"""charset=["']?([A-Za-z0-9_.:-]+)""", body[:4096])
    if match:
        candidates.append(match.group(1).decode("ascii"))
    for name in candidates:
        if name:
            try:
                return codecs.lookup(name).name
            except LookupError:
                continue
    return "utf-8"


@tool("toolkit_web_fetch", requires=("httpx",), concurrency_safe=True)
def toolkit_web_fetch(
    ctx: ToolContext, url: str, max_chars: int = 20000, timeout: float = 20
) -> str:
    """Fetch a web page or file over HTTP(S) and return it as text: HTML is turned into
    readable text (title first, headings as #, list items as -, links as 'text (url)', scripts
    and navigation removed); JSON and plain text are returned as they are; other content types
    (images, PDFs, archives) are only described. Redirects are followed (up to 5). Long
    results are cut at max_chars with a note. Addresses of this machine and private networks
    are refused unless the user allowed them.

    Args:
        url: http:// or https:// URL to fetch
        max_chars: return at most this many characters of text (default 20000)
        timeout: seconds to wait (default 20)
    """
    url = url.strip()
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise ToolError(f"only http:// and https:// URLs can be fetched, not {url!r}")
    if not 0 < timeout <= 300:
        raise ToolError("timeout must be between 0 and 300 seconds")
    limit = min(max(max_chars, 100), MAX_CHARS_LIMIT)
    fetched = download(url, timeout, policy=FetchPolicy(allow_private=ctx.allow_private_fetch))
    text = render(fetched)
    if fetched.status >= 400:
        snippet = text[:500].strip()
        raise ToolError(
            f"HTTP {fetched.status} {fetched.reason} from {fetched.url}"
            + (f": {snippet}" if snippet else "")
        )
    header = [f"URL: {fetched.url}"]
    if fetched.url != url:
        header.append(f"(redirected from {url})")
    header.append(f"Status: {fetched.status} {fetched.reason}".rstrip())
    if fetched.content_type:
        header.append(f"Content-Type: {fetched.content_type}")
    notes = []
    if fetched.capped:
        notes.append(f"[the body is larger than {MAX_BODY_BYTES:,} bytes; only that much was read]")
    if len(text) > limit:
        notes.append(f"[truncated: showing {limit:,} of {len(text):,} characters]")
        text = text[:limit]
    return "\n".join(header) + "\n\n" + text + ("\n\n" + "\n".join(notes) if notes else "")
