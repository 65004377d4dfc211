"""Which tools a request offers: a small core, the conversation's own tools, relevant extras.

Sending all 59 schemas costs ~12k tokens per request, more than a small local model's window. So a
request offers the :data:`CORE_TOOLS`, then the topic's tool set (tools it used, enabled through
``toolkit_find_tools`` or chose by relevance in an earlier turn), then tools relevant to the new
message, within a token budget. The topic's set only grows by appending, and the list is
rendered in that order, so consecutive requests share their prefix (servers reuse cached
prompt tokens only for an identical prefix). Any installed tool stays callable: the model finds
the others with ``toolkit_find_tools``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..llm.tokens import estimate_tools_tokens
from ..store.state import topic_scope
from ..terms import keyword_terms
from .schemas import Detail, render_schema

if TYPE_CHECKING:
    from ..store import Store
    from .registry import Toolkit, ToolSpec

__all__ = [
    "CORE_TOOLS",
    "FINDER",
    "ToolChoice",
    "ToolIndex",
    "ToolMenu",
    "enable_tools",
    "tool_names",
    "with_tools",
    "topic_tools",
]

FINDER = "toolkit_find_tools"
CORE_TOOLS = (
    "toolkit_file",
    "toolkit_edit",
    "toolkit_exec",
    "toolkit_grep",
    "toolkit_glob",
    FINDER,
)
STATE_KEY = "tools"
MAX_TOPIC_TOOLS = 24  # beyond this the oldest additions leave the set
RELEVANT_LIMIT = 4  # tools added for one message at most
MIN_SCORE = 5.0  # a tool must match a distinctive word of the message, or several weak ones
RELATIVE_FLOOR = 0.5
SINGLE_WORD_SCORE = 8.0  # what one matching word must score alone ("weather", "email")
STEM = 5
_NAME_WEIGHT = 3.0
_PARAM_WEIGHT = 0.5  # parameter names and enum values: the verbs a tool offers
# Words in every schema ("file", "path", ...) match everything; idf weighting makes them cheap,
# and these say nothing about which tool a message needs.
_NOISE = frozenset(
    {"toolkit", "default", "action", "relative", "return", "given", "use", "e.g"}
    # file extensions name what a file is, not which tool it needs
    | {"py", "txt", "md", "json", "csv", "yaml", "yml", "js", "ts", "html", "toml", "log"}
)


@dataclass(frozen=True)
class ToolMatch:
    name: str
    score: float


class ToolIndex:
    """Keyword terms of each tool (name, description, parameter names and enum values) with
    inverse document frequencies, so a word that many tools mention counts little."""

    def __init__(self, specs: Iterable[ToolSpec]) -> None:
        self.terms: dict[str, dict[str, float]] = {}
        for spec in specs:
            self.terms[spec.name] = _weighted_terms(spec)
        count = max(1, len(self.terms))
        frequency: dict[str, int] = {}
        for weights in self.terms.values():
            for term in weights:
                frequency[term] = frequency.get(term, 0) + 1
        self.idf = {term: math.log(1 + count / n) for term, n in frequency.items()}

    def rank(self, text: str, limit: int = 5, min_score: float = MIN_SCORE) -> list[ToolMatch]:
        """Tools matching the words of ``text``, best first: at least ``min_score``, and at
        least half the best score (a clear winner leaves the weak matches out)."""
        query = _stems(text)
        matches = []
        for name, weights in self.terms.items():
            hits = [weights[t] * self.idf[t] for t in query if t in weights]
            score = sum(hits)
            # one shared word ("code", "read") is a coincidence unless it is a rare name word
            if score >= min_score and (len(hits) > 1 or score >= SINGLE_WORD_SCORE):
                matches.append(ToolMatch(name, round(score, 3)))
        matches.sort(key=lambda m: (-m.score, m.name))
        floor = matches[0].score * RELATIVE_FLOOR if matches else 0.0
        return [m for m in matches if m.score >= floor][: max(0, limit)]


def _weighted_terms(spec: ToolSpec) -> dict[str, float]:
    weights: dict[str, float] = {}

    def add(text: str, weight: float) -> None:
        for term in _stems(text):
            weights[term] = max(weights.get(term, 0.0), weight)

    add(spec.description, 1.0)
    properties = spec.parameters.get("properties", {})
    for key, schema in properties.items():
        add(key.replace("_", " "), _PARAM_WEIGHT)
        if isinstance(schema, dict):
            for value in schema.get("enum", ()):
                add(str(value).replace("_", " "), _PARAM_WEIGHT * 2)
    add(re.sub(r"^toolkit_|^mcp_", "", spec.name).replace("_", " "), _NAME_WEIGHT)
    add(spec.keywords, _NAME_WEIGHT)
    return weights


def _stems(text: str) -> set[str]:
    # a crude stem is enough to meet "schedule" with "scheduler" and "memory" with "memories"
    return {t[:STEM] if t.isascii() else t for t in keyword_terms(text) - _NOISE}


def topic_tools(store: Store, topic_id: str) -> list[str]:
    """The topic's tool set, in the order its tools joined."""
    return tool_names(store.state.get(topic_scope(topic_id), STATE_KEY, []))


def tool_names(value: Any) -> list[str]:
    """A stored tool set as a list of names (anything else in it is ignored)."""
    return [name for name in value if isinstance(name, str)] if isinstance(value, list) else []


def with_tools(current: Sequence[str], names: Sequence[str]) -> list[str]:
    """``current`` with ``names`` appended (those not yet in it, nor in the core), capped."""
    added = [n for n in dict.fromkeys(names) if n not in current and n not in CORE_TOOLS]
    return [*current, *added][-MAX_TOPIC_TOOLS:]


def enable_tools(store: Store, topic_id: str, names: Sequence[str]) -> list[str]:
    """Append ``names`` to the topic's tool set; returns the set."""
    current = topic_tools(store, topic_id)
    updated = with_tools(current, names)
    if updated != current:
        store.state.put(topic_scope(topic_id), STATE_KEY, updated)
    return updated


def used_tools(history: Iterable[Any]) -> list[str]:
    """Names of the tools called in ``history`` (stored messages), first use first."""
    names: dict[str, None] = {}
    for message in history:
        for call in getattr(message, "tool_calls", ()):
            names.setdefault(call.name, None)
    return list(names)


@dataclass(frozen=True)
class ToolChoice:
    """The tools one turn offers, in request order, and what they cost."""

    names: tuple[str, ...]
    tokens: int
    added: tuple[str, ...] = ()  # joined the topic's set this turn


class ToolMenu:
    """Selects and renders the tools of a request. Rendered schemas, their token estimates and
    the keyword index are cached until the toolkit changes (``Toolkit.version``)."""

    def __init__(self, toolkit: Toolkit, detail: Detail = "compact") -> None:
        self.toolkit = toolkit
        self.detail: Detail = detail
        self._version = -1
        self._index: ToolIndex | None = None
        self._schemas: dict[str, tuple[dict[str, Any], int]] = {}

    def _fresh(self) -> None:
        if self._version != self.toolkit.version:
            self._version = self.toolkit.version
            self._index = None
            self._schemas = {}

    @property
    def index(self) -> ToolIndex:
        self._fresh()
        if self._index is None:
            self._index = ToolIndex(self.toolkit.specs())
        return self._index

    def _entry(self, name: str) -> tuple[dict[str, Any], int] | None:
        self._fresh()
        entry = self._schemas.get(name)
        if entry is None:
            spec = self.toolkit.get(name)
            if spec is None:
                return None
            schema = render_schema(spec, self.detail)
            entry = self._schemas[name] = (schema, estimate_tools_tokens([schema]))
        return entry

    def schemas(self, names: Iterable[str]) -> list[dict[str, Any]]:
        """The schemas of ``names`` in that order (names no longer installed are skipped)."""
        return [entry[0] for name in names if (entry := self._entry(name)) is not None]

    def tokens(self, names: Iterable[str]) -> int:
        return sum(entry[1] for name in names if (entry := self._entry(name)) is not None)

    def core(self) -> list[str]:
        return [name for name in CORE_TOOLS if self.toolkit.get(name) is not None]

    def choose(
        self, query: str, topic: Sequence[str], used: Sequence[str], budget: int = 0
    ) -> ToolChoice:
        """Core tools, then the topic's set, then tools ``used`` in the history and relevant
        to ``query`` — each while the running total stays within ``budget`` tokens (0: no
        budget; the core is always offered)."""
        names = self.core()
        total = self.tokens(names)
        added: list[str] = []
        relevant = [m.name for m in self.index.rank(query, RELEVANT_LIMIT)]
        candidates = [*topic, *(n for n in [*used, *relevant] if n not in topic)]
        for name in dict.fromkeys(candidates):
            cost = self.tokens([name])
            if name in names or self.toolkit.get(name) is None:
                continue
            if budget and total + cost > budget:
                continue
            names.append(name)
            total += cost
            if name not in topic:
                added.append(name)
        return ToolChoice(tuple(names), total, tuple(added))
