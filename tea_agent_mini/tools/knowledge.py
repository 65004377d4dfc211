"""toolkit_kb: a personal knowledge base of Markdown notes under ``<home>/kb/``.

Each entry is ``<slug>.md`` with front matter (title, tags, created, updated), so the notes stay
readable and editable by hand. Search scores keyword terms (words and CJK bigrams) found in the
title, the tags and the body, and shows a snippet around the first hit.
"""

from __future__ import annotations

import datetime as dt
import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from tea_agent_mini.errors import ToolError
from tea_agent_mini.terms import keyword_terms, normalise_text
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import tool
from tea_agent_mini.tools.mdfiles import read_document, slugify, string_list, write_document

Action = Literal["add", "get", "search", "list", "delete"]
ACTIONS: tuple[str, ...] = get_args(Action)
MAX_CONTENT = 256 * 1024
SNIPPET = 160
TITLE_WEIGHT, TAG_WEIGHT, PHRASE_BONUS = 5.0, 3.0, 4.0


@dataclass
class Entry:
    slug: str
    title: str
    tags: list[str]
    body: str
    created: str
    updated: str


def kb_dir(home: Path) -> Path:
    return home / "kb"


def load_entries(home: Path) -> list[Entry]:
    folder = kb_dir(home)
    if not folder.is_dir():
        return []
    entries = []
    for path in sorted(folder.glob("*.md")):
        try:
            meta, body = read_document(path)
        except ToolError:
            meta, body = {}, path.read_text(encoding="utf-8", errors="replace")
        entries.append(
            Entry(
                slug=path.stem,
                title=str(meta.get("title") or path.stem),
                tags=string_list(meta.get("tags")),
                body=body.strip(),
                created=str(meta.get("created") or ""),
                updated=str(meta.get("updated") or meta.get("created") or ""),
            )
        )
    return entries


def score_entry(entry: Entry, query: str, terms: set[str]) -> float:
    """Keyword relevance of ``entry`` for ``query`` (0 when nothing matches)."""
    title_terms = keyword_terms(entry.title)
    tag_terms = keyword_terms(" ".join(entry.tags))
    body_terms = keyword_terms(entry.body)
    body_folded = normalise_text(entry.body)
    score = 0.0
    matched = 0
    for term in terms:
        hit = False
        if term in title_terms:
            score, hit = score + TITLE_WEIGHT, True
        if term in tag_terms:
            score, hit = score + TAG_WEIGHT, True
        if term in body_terms:
            repeats = min(body_folded.count(term), 5)
            score, hit = score + 1.0 + 0.25 * max(repeats - 1, 0), True
        matched += hit
    if not matched:
        return 0.0
    phrase = normalise_text(query)
    if len(terms) > 1 and (phrase in normalise_text(entry.title) or phrase in body_folded):
        score += PHRASE_BONUS
    return score + 2.0 * matched / len(terms)


def search_entries(home: Path, query: str, limit: int = 5) -> list[tuple[float, Entry]]:
    terms = keyword_terms(query)
    if not terms:
        raise ToolError("the query has no searchable words; give a few keywords")
    scored = [(score_entry(entry, query, terms), entry) for entry in load_entries(home)]
    ranked = sorted((pair for pair in scored if pair[0] > 0), key=lambda p: (-p[0], p[1].slug))
    return ranked[: max(1, limit)]


def snippet(body: str, query: str) -> str:
    """About SNIPPET characters of ``body`` around the first query word found in it."""
    flat = " ".join(body.split())
    folded = flat.casefold()
    words = [w for w in query.casefold().split() if w] or [query.casefold()]
    hits = [folded.find(w) for w in words if folded.find(w) >= 0]
    start = max(min(hits) - SNIPPET // 3, 0) if hits else 0
    piece = flat[start : start + SNIPPET]
    prefix = "…" if start > 0 else ""
    suffix = "…" if start + SNIPPET < len(flat) else ""
    return prefix + piece + suffix


@tool("toolkit_kb", mutates=True, mutating_actions=("add", "delete"))
def toolkit_kb(
    ctx: ToolContext,
    action: Action,
    title: str | None = None,
    content: str | None = None,
    tags: list[str] | None = None,
    query: str | None = None,
    limit: int = 5,
) -> str:
    """The user's knowledge base: Markdown notes kept across conversations (how-tos,
    decisions, facts about projects). search finds notes by keywords and shows snippets; get
    reads one; add stores a note (adding with an existing title updates it); list shows all
    notes.

    Args:
        action: add (or update) a note, get one, search by keywords, list all (optionally by
            tags), or delete one
        title: [add/get/delete] the note's title
        content: [add] the note, in Markdown
        tags: [add] topic words / [list] only notes carrying all of these
        query: [search] keywords
        limit: [search] at most this many (default 5)
    """
    if action == "add":
        return _add(ctx.home, title, content, tags)
    if action == "search":
        return _search(ctx.home, query or "", limit)
    if action == "list":
        return _list(ctx.home, tags)
    if action in ("get", "delete"):
        entry = _find(ctx.home, title)
        if action == "get":
            tag_text = f"tags: {', '.join(entry.tags)}\n" if entry.tags else ""
            return f"# {entry.title}\n{tag_text}updated: {entry.updated}\n\n{entry.body}"
        (kb_dir(ctx.home) / f"{entry.slug}.md").unlink(missing_ok=True)
        return f"Deleted the note '{entry.title}'."
    raise ToolError(f"unknown action {action!r}; use {', '.join(ACTIONS)}")


def _add(home: Path, title: str | None, content: str | None, tags: list[str] | None) -> str:
    title = " ".join((title or "").split())
    if not title:
        raise ToolError("add needs 'title'")
    if not content or not content.strip():
        raise ToolError("add needs 'content' (the note's text)")
    if len(content) > MAX_CONTENT:
        raise ToolError(f"the note is too long (limit {MAX_CONTENT // 1024} KiB); split it")
    slug = slugify(title)
    if not slug:
        raise ToolError("the title needs at least one letter or digit")
    path = kb_dir(home) / f"{slug}.md"
    now = dt.datetime.now().astimezone().isoformat(timespec="seconds")
    created = now
    existed = path.exists()
    if existed:
        meta, _ = read_document(path)
        created = str(meta.get("created") or now)
    meta = {"title": title, "tags": _clean_tags(tags), "created": created, "updated": now}
    write_document(path, meta, content)
    verb = "Updated" if existed else "Added"
    return f"{verb} the note '{title}' ({path})."


def _clean_tags(tags: list[str] | None) -> list[str]:
    seen: dict[str, None] = {}
    for tag in tags or []:
        cleaned = " ".join(str(tag).split()).lower()
        if cleaned:
            seen.setdefault(cleaned, None)
    return list(seen)


def _find(home: Path, title: str | None) -> Entry:
    wanted = " ".join((title or "").split())
    if not wanted:
        raise ToolError("give the note's 'title'")
    entries = load_entries(home)
    slug = slugify(wanted)
    for entry in entries:
        if entry.slug == slug or entry.title.casefold() == wanted.casefold():
            return entry
    close = difflib.get_close_matches(wanted, [e.title for e in entries], n=3, cutoff=0.5)
    hint = f" Did you mean: {', '.join(close)}?" if close else " Use action 'search'."
    raise ToolError(f"no note titled {wanted!r}.{hint}")


def _search(home: Path, query: str, limit: int) -> str:
    results = search_entries(home, query, limit)
    if not results:
        return f"No note matches {query!r}."
    lines = [f"{len(results)} note(s) for {query!r}, best first:"]
    for rank, (score, entry) in enumerate(results, 1):
        tags = f"  [{', '.join(entry.tags)}]" if entry.tags else ""
        lines.append(f"{rank}. {entry.title}{tags}  (score {score:.1f})")
        lines.append(f"   {snippet(entry.body, query)}")
    return "\n".join(lines)


def _list(home: Path, tags: list[str] | None) -> str:
    wanted = set(_clean_tags(tags))
    entries = [e for e in load_entries(home) if wanted <= set(e.tags)]
    if not entries:
        where = f" tagged {', '.join(sorted(wanted))}" if wanted else ""
        return f"The knowledge base has no notes{where}."
    entries.sort(key=lambda e: e.updated, reverse=True)
    lines = [f"{len(entries)} note(s), most recently updated first:"]
    for entry in entries:
        tag_text = f"  [{', '.join(entry.tags)}]" if entry.tags else ""
        lines.append(f"- {entry.title}{tag_text}  (updated {entry.updated[:16]})")
    return "\n".join(lines)
