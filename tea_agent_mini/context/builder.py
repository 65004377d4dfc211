"""Assembling the request of one model call from the four history levels, within the budget.

    L0  the system prompt (identity, environment, rules, AGENTS.md): the same for a session
    L3  the topic's summary of turns that left the L2 ring
    L2  recorded pairs of turns older than L1, injected by relevance to the new message
    L1  the raw messages of the last few user turns (see ``history.py``)

L3, L2 and the turn's volatile sections (time, memories, skills, unfinished work) travel in the
context block just before the current user message (``block.py``), so the system prompt and
the history before it stay a cacheable prefix; one system message is what every chat template
accepts. :func:`build_request` is pure (no store, no model) so it can be tested and
benchmarked alone; :func:`load_levels` reads L2 and L3 from the store.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..types import Message
from .budget import ContextWindow, fit_window, window_limit
from .history import FULL_TOOL_TURNS, RECENT_TURNS, recent_messages, to_request
from .pairs import files_touched
from .records import REQUEST_PAIRS, ContextRecords, TopicSummary, TurnPair
from .relevance import InjectedPair, select_pairs
from .summary import render_summary

if TYPE_CHECKING:
    from ..llm.tokens import TokenCalibrator
    from ..store import Store

__all__ = ["ContextInputs", "build_request", "build_window", "load_levels"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ContextInputs:
    """Everything one request is built from.

    ``max_tokens`` is the model's context window (0: unknown, no trimming); ``target_tokens``
    replaces the usual 80 % of it (the harder trim after a context-length error). The tool
    schemas' estimate ``tools_tokens`` counts against the budget; ``calibrator`` corrects the
    estimates by what the provider reported for earlier requests.
    """

    system_prompt: str
    history: Sequence[Message]
    pairs: Sequence[TurnPair] = ()
    summary: TopicSummary | None = None
    max_tokens: int = 0
    target_tokens: int | None = None
    tools_tokens: int = 0
    calibrator: TokenCalibrator | None = None
    recent_turns: int = RECENT_TURNS
    full_tool_turns: int = FULL_TOOL_TURNS
    include_reasoning: bool = False
    context_sections: Sequence[str] = ()


def load_levels(store: Store, topic_id: str) -> tuple[list[TurnPair], TopicSummary | None]:
    """The topic's L2 ring and L3 summary."""
    records = ContextRecords(store.db)
    return records.pairs(topic_id, limit=REQUEST_PAIRS), records.summary(topic_id)


def build_window(inputs: ContextInputs) -> ContextWindow:
    """The levels assembled and trimmed to the budget (``window.trims`` says what was cut)."""
    recent = recent_messages(inputs.history, inputs.recent_turns)
    messages = to_request(
        recent,
        full_tool_turns=inputs.full_tool_turns,
        include_reasoning=inputs.include_reasoning,
    )
    window = ContextWindow(
        inputs.system_prompt,
        summary=render_summary(inputs.summary),
        pairs=_relevant_pairs(inputs.pairs, recent),
        messages=messages,
        extra_tokens=inputs.tools_tokens,
        context=inputs.context_sections,
    )
    ratio = inputs.calibrator.ratio if inputs.calibrator is not None else 1.0
    limit = window_limit(inputs.max_tokens, ratio, inputs.target_tokens)
    if limit and not fit_window(window, limit):
        window.fits = False
        log.warning(
            "the request (~%d tokens) does not fit the budget (%d) even after trimming",
            window.tokens,
            limit,
        )
    return window


def build_request(inputs: ContextInputs) -> list[dict[str, Any]]:
    """The messages of the request: one system message (L0 + L3 + L2), then L1."""
    return build_window(inputs).render()


def _relevant_pairs(pairs: Sequence[TurnPair], recent: Sequence[Message]) -> list[InjectedPair]:
    """L2 pairs older than L1, chosen by relevance to the current user message."""
    first_id = next((m.id for m in recent if m.id is not None), None)
    eligible = [p for p in pairs if first_id is None or p.user_message_id < first_id]
    if not eligible:
        return []
    current = _current_turn(recent)
    query = current[0].text if current else ""
    return select_pairs(eligible, query, files_touched(current))


def _current_turn(recent: Sequence[Message]) -> Sequence[Message]:
    for index in range(len(recent) - 1, -1, -1):
        if recent[index].role == "user":
            return recent[index:]
    return ()
