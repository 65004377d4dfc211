"""Keeping a request inside the model's window: a :class:`ContextWindow` trimmed step by step.

The window holds the levels separately (L0 system text, L3 summary, L2 pairs, L1 messages) with
a cached token estimate for each part, so that every trimming step re-estimates only what it
changed. The total is an upper bound of ``estimate_messages_tokens`` of the rendered request
(estimates of parts add up to at least the estimate of their concatenation), so a window that
fits here fits when the request is estimated as a whole.

Trimming order (each step stops as soon as the window fits): drop L2 pairs (least relevant
first), placeholder old tool outputs, drop reasoning, cut long texts to 4096 characters, drop
old L1 turns keeping the last 5 user turns, cut the last message (when that is enough, and to
no fewer than 1024 characters). Should the request still not fit (a huge system prompt or
current turn), last resorts follow: drop the L3 summary, drop the context block's sections
(largest first), drop every turn but the current one,
placeholder the current turn's earlier tool outputs, cut the last message further (a user's
message to no fewer than 1024 characters, a tool output to 256). A request that still does not
fit is reported, not sent: the caller fails the turn with a clear error.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from ..llm.tokens import MESSAGE_OVERHEAD, REPLY_PRIMING, estimate_message_tokens
from ..llm.tokens import estimate_text_tokens as _tokens
from .block import context_block, with_context
from .history import placeholder_for, replaceable
from .relevance import InjectedPair

__all__ = ["BUDGET_FILL", "ContextWindow", "fit_window", "hard_target", "shorten", "window_limit"]

BUDGET_FILL = 0.8  # start trimming when the estimate passes 80 % of the window
MAX_TEXT_CHARS = 4096
KEEP_TURNS = 5
LAST_MESSAGE_FLOOR = 1024  # characters the last message keeps before the last resorts
TOOL_OUTPUT_FLOOR = 256  # characters a tool output keeps in the very last resort
HARD_FACTOR = 0.5  # after a context-length error: half of what was refused
MIN_HARD_REST = 512
PAIRS_HEADER = (
    "Relevant earlier exchanges from this conversation (older than the messages that follow; "
    "some are excerpts):"
)
_BLOCK_TOKENS = _tokens(context_block(["x"])) + 2  # the wrapper, and the blank line after it
_CUT_MARK = "\n[... {n} characters cut to fit the context ...]\n"


def shorten(text: str, limit: int) -> str:
    """``text`` cut to about ``limit`` characters, keeping its head and its tail."""
    if len(text) <= limit:
        return text
    limit = max(0, limit)
    head, tail = (limit * 3) // 5, limit - (limit * 3) // 5
    cut = len(text) - head - tail
    return text[:head] + _CUT_MARK.format(n=cut) + (text[-tail:] if tail else "")


class ContextWindow:
    """The request being assembled: levels kept apart until :meth:`render`."""

    def __init__(
        self,
        system: str,
        *,
        summary: str = "",
        pairs: list[InjectedPair] | None = None,
        messages: list[dict[str, Any]] | None = None,
        extra_tokens: int = 0,
        context: Sequence[str] = (),
    ) -> None:
        self.system = system
        self.context = [section for section in context if section]
        self.summary = summary
        self.pairs = list(pairs or [])
        self.messages = list(messages or [])
        self.extra_tokens = extra_tokens  # the tool schemas sent beside the messages
        self.pair_thinking = True
        self.trims: list[str] = []
        self.fits = True  # False when trimming could not bring it within the limit
        self._system_tokens = _tokens(system)
        self._context_tokens = sum(_section_tokens(section) for section in self.context)
        self._summary_tokens = _section_tokens(summary)
        self._header_tokens = _section_tokens(PAIRS_HEADER)
        self._pair_tokens = [self._pair_cost(p) for p in self.pairs]
        self._message_tokens = [estimate_message_tokens(m) for m in self.messages]

    # -- estimates ---------------------------------------------------------------------------

    @property
    def tokens(self) -> int:
        """Upper bound of the rendered request's estimate, plus the tool schemas."""
        pairs = self._header_tokens + sum(self._pair_tokens) if self.pairs else 0
        block = self._context_tokens + self._summary_tokens + pairs
        system = MESSAGE_OVERHEAD + self._system_tokens
        if block:
            block += _BLOCK_TOKENS
        return REPLY_PRIMING + system + block + sum(self._message_tokens) + self.extra_tokens

    @property
    def fixed_tokens(self) -> int:
        """What no trimming step can shrink: the system prompt and the tool schemas."""
        return REPLY_PRIMING + MESSAGE_OVERHEAD + self._system_tokens + self.extra_tokens

    def _pair_cost(self, pair: InjectedPair) -> int:
        return _section_tokens(pair.text(self.pair_thinking))

    # -- changes -----------------------------------------------------------------------------

    def message_tokens(self, index: int) -> int:
        return self._message_tokens[index]

    def set_message(self, index: int, data: dict[str, Any]) -> None:
        self.messages[index] = data
        self._message_tokens[index] = estimate_message_tokens(data)

    def drop_messages(self, start: int, end: int) -> None:
        del self.messages[start:end]
        del self._message_tokens[start:end]

    def drop_pair(self, index: int) -> None:
        del self.pairs[index]
        del self._pair_tokens[index]

    def set_summary(self, text: str) -> None:
        self.summary = text
        self._summary_tokens = _section_tokens(text)

    def drop_context_section(self, index: int) -> None:
        del self.context[index]
        self._context_tokens = sum(_section_tokens(section) for section in self.context)

    def drop_pair_thinking(self) -> bool:
        if not self.pair_thinking:
            return False
        self.pair_thinking = False
        self._pair_tokens = [self._pair_cost(p) for p in self.pairs]
        return any(p.full and p.pair.thinking for p in self.pairs)

    @property
    def user_starts(self) -> list[int]:
        return [i for i, m in enumerate(self.messages) if m.get("role") == "user"]

    @property
    def current_start(self) -> int:
        """Index of the current turn's user message (0 when there is none)."""
        starts = self.user_starts
        return starts[-1] if starts else 0

    # -- output ------------------------------------------------------------------------------

    def context_text(self) -> str:
        """The volatile block: L3 summary, L2 pairs, then the other context sections."""
        sections = [self.summary]
        if self.pairs:
            body = "\n".join(p.text(self.pair_thinking) for p in self.pairs)
            sections.append(f"{PAIRS_HEADER}\n{body}")
        return context_block([*sections, *self.context])

    def render(self) -> list[dict[str, Any]]:
        """The request's messages: the system prompt, then the history with the context block
        just before the current user message (kept apart from the system prompt, so the
        prefix stays the same from request to request)."""
        messages = list(self.messages)
        block = self.context_text()
        starts = self.user_starts
        if block and starts:
            index = starts[-1]
            messages[index] = with_context(messages[index], block)
            return [{"role": "system", "content": self.system}, *messages]
        system = f"{self.system}\n\n{block}" if block else self.system
        return [{"role": "system", "content": system}, *messages]


def _section_tokens(text: str) -> int:
    # +1: the blank line joining the section to the one before it
    return _tokens(text) + 1 if text else 0


def window_limit(max_tokens: int, ratio: float = 1.0, target: int | None = None) -> int:
    """The raw-estimate limit for a window of ``max_tokens`` (0: none), given the calibration
    ``ratio`` (actual/estimated) and an explicit ``target`` that overrides the 80 % fill."""
    limit = target if target else int(max_tokens * BUDGET_FILL)
    if limit <= 0:
        return 0
    return max(1, math.floor(limit / max(ratio, 1e-6)))


def hard_target(refused_tokens: int, max_tokens: int, fixed_tokens: int = 0) -> int:
    """The target after the provider refused a request of ``refused_tokens`` as too long: the
    fixed part (``fixed_tokens``, the tool schemas) plus half of the rest, measured against the
    usual budget when the window is known."""
    ceiling = refused_tokens
    if max_tokens > 0:
        budget = int(max_tokens * BUDGET_FILL)
        ceiling = min(ceiling, budget) if ceiling > 0 else budget
    variable = max(0, ceiling - fixed_tokens)
    return fixed_tokens + max(MIN_HARD_REST, int(variable * HARD_FACTOR))


# -- the steps --------------------------------------------------------------------------------


def _drop_pairs(window: ContextWindow, limit: int) -> bool:
    changed = False
    while window.pairs and window.tokens > limit:
        weakest = min(range(len(window.pairs)), key=lambda i: window.pairs[i].score)
        window.drop_pair(weakest)
        changed = True
    return changed


def _placeholder_tools(window: ContextWindow, limit: int, start: int, end: int) -> bool:
    changed = False
    for index in range(start, end):
        if window.tokens <= limit:
            break
        message = window.messages[index]
        if message.get("role") == "tool" and replaceable(message.get("content")):
            window.set_message(index, {**message, "content": placeholder_for(message["content"])})
            changed = True
    return changed


def _old_tool_outputs(window: ContextWindow, limit: int) -> bool:
    return _placeholder_tools(window, limit, 0, window.current_start)


def _current_tool_outputs(window: ContextWindow, limit: int) -> bool:
    return _placeholder_tools(window, limit, window.current_start, len(window.messages) - 1)


def _drop_reasoning(window: ContextWindow, limit: int) -> bool:
    changed = window.drop_pair_thinking()
    for index, message in enumerate(window.messages):
        if "reasoning_content" in message:
            stripped = {k: v for k, v in message.items() if k != "reasoning_content"}
            window.set_message(index, stripped)
            changed = True
    return changed


def _cut_long_texts(window: ContextWindow, limit: int) -> bool:
    changed = False
    if len(window.summary) > MAX_TEXT_CHARS:
        window.set_summary(shorten(window.summary, MAX_TEXT_CHARS))
        changed = True
    for index, message in enumerate(window.messages):
        if window.tokens <= limit:
            break
        content = message.get("content")
        if isinstance(content, str) and len(content) > MAX_TEXT_CHARS:
            window.set_message(index, {**message, "content": shorten(content, MAX_TEXT_CHARS)})
            changed = True
    return changed


def _drop_turns(window: ContextWindow, limit: int, keep: int) -> bool:
    changed = False
    starts = window.user_starts
    while len(starts) > keep and window.tokens > limit:
        window.drop_messages(0, starts[1])  # the oldest whole turn
        starts = window.user_starts
        changed = True
    return changed


def _drop_old_turns(window: ContextWindow, limit: int) -> bool:
    return _drop_turns(window, limit, KEEP_TURNS)


def _drop_all_older_turns(window: ContextWindow, limit: int) -> bool:
    return _drop_turns(window, limit, 1)


def _cut_last_message(window: ContextWindow, limit: int, floor: int | None = None) -> bool:
    """Shorten the last message until the window fits, to no fewer than ``floor`` characters
    (by default: a user's message keeps LAST_MESSAGE_FLOOR, a tool output TOOL_OUTPUT_FLOOR)."""
    if not window.messages:
        return False
    index = len(window.messages) - 1
    message = window.messages[index]
    if floor is None:
        floor = LAST_MESSAGE_FLOOR if message.get("role") == "user" else TOOL_OUTPUT_FLOOR
    content = message.get("content")
    if not isinstance(content, str) or len(content) <= floor:
        return False
    chars = len(content)
    while window.tokens > limit and chars > floor:
        over = window.tokens - limit
        current = max(1, _tokens(window.messages[index]["content"]))
        scale = max(0.0, (current - over) / current) * 0.95
        chars = max(floor, min(chars - 1, int(chars * scale)))
        window.set_message(index, {**message, "content": shorten(content, chars)})
    return True


def _cut_last_message_to_floor(window: ContextWindow, limit: int) -> bool:
    # The current question (or tool output) matters more than older turns: cut it only when
    # that is enough to fit, and only so far; otherwise the last resorts drop those turns first.
    if not window.messages:
        return False
    last = window.messages[-1]
    content = last.get("content")
    if not isinstance(content, str) or len(content) <= LAST_MESSAGE_FLOOR:
        return False
    shortest = estimate_message_tokens({**last, "content": shorten(content, LAST_MESSAGE_FLOOR)})
    if window.tokens - window.message_tokens(-1) + shortest > limit:
        return False
    return _cut_last_message(window, limit, LAST_MESSAGE_FLOOR)


def _drop_summary(window: ContextWindow, limit: int) -> bool:
    if not window.summary:
        return False
    window.set_summary("")
    return True


def _drop_context(window: ContextWindow, limit: int) -> bool:
    changed = False
    while window.context and window.tokens > limit:
        largest = max(range(len(window.context)), key=lambda i: len(window.context[i]))
        window.drop_context_section(largest)
        changed = True
    return changed


Step = Callable[[ContextWindow, int], bool]
TRIM_STEPS: tuple[tuple[str, Step], ...] = (
    ("drop_pairs", _drop_pairs),
    ("placeholder_tool_outputs", _old_tool_outputs),
    ("drop_reasoning", _drop_reasoning),
    ("truncate_long_texts", _cut_long_texts),
    ("drop_old_turns", _drop_old_turns),
    ("truncate_last_message", _cut_last_message_to_floor),
    # last resorts, for a system prompt or a current turn too large for the window
    ("drop_summary", _drop_summary),
    ("drop_context_sections", _drop_context),
    ("drop_older_turns", _drop_all_older_turns),
    ("placeholder_current_tool_outputs", _current_tool_outputs),
    ("truncate_last_message_again", _cut_last_message),
)


def fit_window(window: ContextWindow, limit: int) -> bool:
    """Trim ``window`` in :data:`TRIM_STEPS` order until its estimate is within ``limit``.

    The names of the steps that changed something are appended to ``window.trims``. Returns
    whether it fits (it may not: the system prompt and tool schemas alone can exceed a window).
    """
    if limit <= 0:
        return True
    for name, step in TRIM_STEPS:
        if window.tokens <= limit:
            break
        if step(window, limit):
            window.trims.append(name)
    return window.tokens <= limit
