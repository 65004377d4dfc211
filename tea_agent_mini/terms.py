"""Keyword terms of a text (words and CJK bigrams), their Jaccard similarity, content hashes.

The same terms feed the FTS index, keyword relevance and duplicate detection, so a memory that
keyword search finds is also one that dedup compares against.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Collection

__all__ = [
    "content_hash",
    "fact_markers",
    "jaccard",
    "keyword_terms",
    "lost_facts",
    "normalise_text",
]

# Kana, CJK extension A, CJK unified ideographs, compatibility ideographs, Hangul syllables.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_TOKENS = re.compile(f"([{_CJK}]+)|([^\\W_{_CJK}]+)")
_SPACES = re.compile(r"\s+")
_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*")
_DOTTED = re.compile(r"[^\W_]+(?:[.:][^\W_]+)+")  # hosts, versions, host:port

# Words so common that two unrelated English sentences would share them; without this list
# "I like tea" and "I like cats" would pass the 0.3 merge threshold.
_STOPWORD_TEXT = """
a an the and or but if so of to in on at by for from with about as into than then
is are am was were be been being do does did has have had will would can could should
shall may might must it its this that these those there here i me my mine we us our
you your yours he him his she her they them their what which who whom when where why how
not no yes all any some very just also too please user users
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def normalise_text(text: str) -> str:
    """NFKC, case-folded, whitespace collapsed: equal for texts that differ only cosmetically."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return _SPACES.sub(" ", folded).strip()


def content_hash(text: str) -> str:
    """SHA-256 (hex) of :func:`normalise_text`; the exact-duplicate key of a memory."""
    return hashlib.sha256(normalise_text(text).encode("utf-8")).hexdigest()


def keyword_terms(text: str) -> set[str]:
    """Case-folded words (minus stopwords, plural -s dropped) plus CJK bigrams; a lone CJK
    character stands for itself."""
    terms: set[str] = set()
    for cjk, word in _TOKENS.findall(unicodedata.normalize("NFKC", text).casefold()):
        if cjk:
            if len(cjk) == 1:
                terms.add(cjk)
            else:
                terms.update(cjk[i : i + 2] for i in range(len(cjk) - 1))
        elif word not in STOPWORDS:
            terms.add(_singular(word))
    return terms


def _singular(word: str) -> str:
    # "editors" should meet "editor"; a crude fold is enough for matching, it is never shown
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def jaccard(a: Collection[str], b: Collection[str]) -> float:
    """|a ∩ b| / |a ∪ b|; 0.0 when both are empty."""
    if not a or not b:
        return 0.0
    small, large = (a, b) if len(a) <= len(b) else (b, a)
    large_set = large if isinstance(large, (set, frozenset)) else set(large)
    shared = sum(1 for term in set(small) if term in large_set)
    return shared / (len(set(a)) + len(set(b)) - shared)


def fact_markers(text: str) -> set[str]:
    """What tells one fact from a similar one: numbers, hosts and versions, and names
    (capitalised words that are not stopwords), case-folded."""
    text = unicodedata.normalize("NFKC", text)
    markers = set(_NUMBER.findall(text)) | {
        d.casefold() for d in _DOTTED.findall(text) if _host_like(d)
    }
    for _cjk, word in _TOKENS.findall(text):
        folded = word.casefold()
        if word != folded and folded not in STOPWORDS:
            markers.add(_singular(folded))
    return markers


def lost_facts(dropped: str, kept: str) -> set[str]:
    """The markers of ``dropped`` that ``kept`` does not mention: what a merge keeping only
    ``kept`` would lose ("10.0.0.5" against "10.0.0.9", "Hermes" against "Apollo")."""
    return fact_markers(dropped) - _vocabulary(kept)


def _vocabulary(text: str) -> set[str]:
    text = unicodedata.normalize("NFKC", text)
    words = {_singular(cjk or word) for cjk, word in _TOKENS.findall(text.casefold())}
    dotted = {d.casefold() for d in _DOTTED.findall(text)}
    return words | dotted | set(_NUMBER.findall(text))


def _host_like(dotted: str) -> bool:
    # "e.g" and "i.e" are abbreviations, not hosts or versions
    return any(c.isdigit() for c in dotted) or len(re.split(r"[.:]", dotted)[-1]) >= 2
