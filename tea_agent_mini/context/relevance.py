"""Which L2 pairs join the context for a new message, and in how much detail.

The score of a pair is the Jaccard similarity of its keyword terms and the new message's
(``terms.py``: words and CJK bigrams), plus a boost for every file both talk about: the files
the pair's tools touched against the paths the message names and the files the current turn
touched. From ``FULL_SCORE`` up a pair is injected whole, from ``EXCERPT_SCORE`` as a short
excerpt, below that not at all, except that the best pair always joins (at least as an excerpt).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..terms import jaccard, keyword_terms
from .pairs import clip
from .records import ToolUse, TurnPair

__all__ = ["InjectedPair", "paths_in_text", "render_pair", "select_pairs", "tool_chain"]

FULL_SCORE = 0.15
EXCERPT_SCORE = 0.05
FILE_BOOST = 0.1  # per shared file
MAX_FILE_BOOST = 0.3
MAX_FULL = 6
MAX_EXCERPTS = 8
FULL_USER_CHARS = 1500
FULL_ANSWER_CHARS = 2500
EXCERPT_USER_CHARS = 160
EXCERPT_ANSWER_CHARS = 240

_PATHLIKE = re.compile(r"[\w.~/\\-]*[\w-]\.[A-Za-z0-9]{1,8}\b|[\w.~-]*/[\w./-]+")


@dataclass(frozen=True)
class InjectedPair:
    """A pair chosen for the context: its score, whether it goes in whole, its rendered text."""

    pair: TurnPair
    score: float
    full: bool

    def text(self, with_thinking: bool = True) -> str:
        return render_pair(self.pair, self.full, with_thinking)


def paths_in_text(text: str) -> set[str]:
    """Things in ``text`` that look like file paths (``src/app.py``, ``notes.md``, ``a/b``)."""
    return {match.strip(".") for match in _PATHLIKE.findall(text) if len(match) <= 260}


def _file_keys(paths: Iterable[str]) -> set[str]:
    keys: set[str] = set()
    for path in paths:
        normal = path.replace("\\", "/").strip().lstrip("./").casefold()
        if normal:
            keys.add(normal)
            keys.add(normal.rsplit("/", 1)[-1])
    return keys


def score_pair(pair: TurnPair, query_terms: set[str], file_keys: set[str]) -> float:
    score = jaccard(query_terms, pair.terms)
    if file_keys and pair.files:
        shared = sum(1 for f in pair.files if _file_keys([f]) & file_keys)
        score += min(MAX_FILE_BOOST, FILE_BOOST * shared)
    return score


def select_pairs(
    pairs: Sequence[TurnPair], query: str, current_files: Iterable[str] = ()
) -> list[InjectedPair]:
    """The pairs to inject for ``query``, oldest first (see the module docstring)."""
    if not pairs:
        return []
    query_terms = keyword_terms(query)
    file_keys = _file_keys([*paths_in_text(query), *current_files])
    ranked = sorted(
        ((score_pair(p, query_terms, file_keys), i) for i, p in enumerate(pairs)),
        key=lambda item: (item[0], item[1]),  # ties: the newer pair first
        reverse=True,
    )
    chosen: list[InjectedPair] = []
    full = excerpts = 0
    for rank, (score, index) in enumerate(ranked):
        if score >= FULL_SCORE and full < MAX_FULL:
            full += 1
            chosen.append(InjectedPair(pairs[index], score, True))
        elif (score >= EXCERPT_SCORE or rank == 0) and excerpts < MAX_EXCERPTS:
            excerpts += 1
            chosen.append(InjectedPair(pairs[index], score, False))
    chosen.sort(key=lambda injected: injected.pair.user_message_id)
    return chosen


def tool_chain(tools: Sequence[ToolUse]) -> str:
    """``toolkit_file ×2 → toolkit_exec (1 failed)``: runs of the same tool folded together."""
    steps: list[list] = []
    for use in tools:
        if steps and steps[-1][0] == use.name:
            steps[-1][1] += 1
            steps[-1][2] += not use.ok
        else:
            steps.append([use.name, 1, int(not use.ok)])
    parts = []
    for name, calls, failed in steps[:12]:
        text = name + (f" ×{calls}" if calls > 1 else "")
        parts.append(text + (f" ({failed} failed)" if failed else ""))
    more = len(steps) - 12
    return " → ".join(parts) + (f" → … ({more} more)" if more > 0 else "")


def render_pair(pair: TurnPair, full: bool, with_thinking: bool = True) -> str:
    if not full:
        user = clip(pair.user_text, EXCERPT_USER_CHARS)
        answer = clip(pair.answer_text, EXCERPT_ANSWER_CHARS)
        return f"- User: {user}\n  Assistant (excerpt): {answer}"
    lines = [
        f"- User: {clip(pair.user_text, FULL_USER_CHARS)}",
        f"  Assistant: {clip(pair.answer_text, FULL_ANSWER_CHARS)}",
    ]
    if with_thinking and pair.thinking:
        lines.append(f"  (thinking: {pair.thinking})")
    if pair.files:
        lines.append(f"  (files: {', '.join(pair.files[:10])})")
    if pair.tools:
        lines.append(f"  (tools: {tool_chain(pair.tools)})")
    return "\n".join(lines)
