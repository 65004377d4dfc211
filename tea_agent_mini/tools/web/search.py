"""toolkit_search: web search through DuckDuckGo's HTML endpoint, parsed with the stdlib."""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Annotated
from urllib.parse import parse_qs, urljoin, urlsplit

from tea_agent_mini.errors import ToolError
from tea_agent_mini.redact import mask_url
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import tool

# tools.search_url in the config points the tool at another endpoint serving the same markup
# (a proxy, a mirror, a test server).
SEARCH_URL = "https://html.duckduckgo.com/html/"
TIMEOUT = 20.0
MAX_RESULTS = 25
SNIPPET_CHARS = 400
# The HTML endpoint serves a bot check to clients that do not look like a browser.
HEADERS = {
    "User-Agent": "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
    "Accept": "text/html,application/xhtml+xml",
    "Accept-Language": "en-US,en;q=0.8",
    "Referer": "https://html.duckduckgo.com/",
}
# Markers of DuckDuckGo's "are you a robot" page, which comes instead of results.
CHALLENGE_MARKERS = ("anomaly-modal", "challenge-form", "bots use DuckDuckGo too")
_SPACES = re.compile(r"\s+")


@dataclass
class SearchResult:
    title: str
    url: str
    snippet: str = ""


class ResultParser(HTMLParser):
    """Collects results from DuckDuckGo's HTML page, skipping ads.

    A result is a container with class ``result`` holding an ``a.result__a`` (title and link)
    and an element with class ``result__snippet``; ads carry ``result--ad`` on the container.
    """

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.results: list[SearchResult] = []
        self.no_results = False
        self._in_ad = False
        self._capture: str | None = None  # "title" or "snippet"
        self._capture_tag = ""
        self._depth = 0
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._capture is not None:
            if tag == self._capture_tag:
                self._depth += 1
            return
        classes = set((dict(attrs).get("class") or "").split())
        if "result" in classes:
            self._in_ad = "result--ad" in classes
        if "no-results" in classes:
            self.no_results = True
        if self._in_ad:
            return
        if "result__a" in classes:
            href = dict(attrs).get("href") or ""
            self.results.append(SearchResult(title="", url=unwrap_link(href)))
            self._start("title", tag)
        elif "result__snippet" in classes and self.results:
            self._start("snippet", tag)

    def handle_endtag(self, tag: str) -> None:
        if self._capture is None or tag != self._capture_tag:
            return
        if self._depth:
            self._depth -= 1
            return
        text = _SPACES.sub(" ", "".join(self._text)).strip()
        if self._capture == "title":
            self.results[-1].title = text
        else:
            self.results[-1].snippet = text
        self._capture = None

    def handle_data(self, data: str) -> None:
        if self._capture is not None:
            self._text.append(data)

    def _start(self, what: str, tag: str) -> None:
        self._capture, self._capture_tag, self._depth, self._text = what, tag, 0, []


def unwrap_link(href: str) -> str:
    """The target of a DuckDuckGo redirect link (``//duckduckgo.com/l/?uddg=<url>``)."""
    absolute = urljoin("https://duckduckgo.com/", href)
    parts = urlsplit(absolute)
    if parts.netloc.endswith("duckduckgo.com") and parts.path.rstrip("/") == "/l":
        target = parse_qs(parts.query).get("uddg")
        if target:
            return target[0]
    return absolute


def parse_results(html: str) -> tuple[list[SearchResult], bool]:
    """(results, page said "no results"). Raises ToolError for the bot-check page."""
    if any(marker in html for marker in CHALLENGE_MARKERS):
        raise ToolError(
            "DuckDuckGo answered with a bot check (captcha) instead of results, which happens "
            "after many automated searches. Try again later, or fetch a known site directly "
            "with toolkit_web_fetch."
        )
    parser = ResultParser()
    parser.feed(html)
    parser.close()
    results = [r for r in parser.results if r.title and not _is_ad_link(r.url)]
    return results, parser.no_results


def _is_ad_link(url: str) -> bool:
    parts = urlsplit(url)
    return parts.netloc.endswith("duckduckgo.com") and parts.path.startswith("/y.js")


@tool("toolkit_search", requires=("httpx",), concurrency_safe=True)
def toolkit_search(
    ctx: ToolContext,
    query: str,
    max_results: Annotated[int, f"how many results to return, 1-{MAX_RESULTS} (default 8)"] = 8,
    region: str | None = None,
) -> str:
    """Search the web (DuckDuckGo) and get a numbered list of results: title, URL and a short
    snippet each. Use it to find pages, then read the promising ones with toolkit_web_fetch;
    snippets alone can be outdated or partial. Keep queries short and specific.

    Args:
        query: what to search for; search operators such as site:example.com,
            "exact phrase" and -word work
        region: optional DuckDuckGo region code, e.g. us-en, uk-en, cn-zh, de-de
            (default: no region)
    """
    query = query.strip()
    if not query:
        raise ToolError("query is empty")
    if not 1 <= max_results <= MAX_RESULTS:
        raise ToolError(f"max_results must be between 1 and {MAX_RESULTS}, got {max_results}")
    html = _fetch(ctx.tools_config.search_url or SEARCH_URL, query, region)
    results, said_none = parse_results(html)
    if not results:
        if said_none:
            return f"No results for {query!r}."
        raise ToolError(
            "the search page had no results that could be read; DuckDuckGo may have changed "
            "its page layout"
        )
    lines = [f"Search results for {query!r}:"]
    for number, result in enumerate(results[:max_results], start=1):
        lines.append(f"{number}. {result.title}")
        lines.append(f"   {result.url}")
        if result.snippet:
            snippet = result.snippet
            if len(snippet) > SNIPPET_CHARS:
                snippet = snippet[: SNIPPET_CHARS - 1].rstrip() + "…"
            lines.append(f"   {snippet}")
    return "\n".join(lines)


def _fetch(url: str, query: str, region: str | None) -> str:
    import httpx

    form = {"q": query, "b": ""}
    if region:
        form["kl"] = region
    try:
        with httpx.Client(timeout=TIMEOUT, headers=HEADERS, follow_redirects=True) as client:
            response = client.post(url, data=form)
    except httpx.HTTPError as exc:
        shown = mask_url(url)  # tools.search_url may carry a key
        raise ToolError(f"could not reach the search engine at {shown}: {exc}") from exc
    if response.status_code != 200:
        if any(marker in response.text for marker in CHALLENGE_MARKERS):
            parse_results(response.text)  # raises the bot-check error
        raise ToolError(
            f"the search engine answered HTTP {response.status_code}"
            + (" (rate limited; try again later)" if response.status_code in (202, 429) else "")
        )
    return response.text
