"""L3: folding the oldest L2 pairs into a topic's rolling summary with the cheap model.

When the ring reaches ``RING_LIMIT`` pairs, all but the newest ``RING_KEEP`` are summarised
together with the previous summary into a new one (sections below) and then deleted; the
tool-chain recap beside it is counted from the pairs, not asked of the model. A failed or slow
attempt changes nothing but ``retry_at``: the raw pairs stay in L2 until a later turn succeeds.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from ..errors import LLMError, StoreError
from .pairs import clip
from .records import ContextRecords, TopicSummary, TurnPair
from .relevance import tool_chain

if TYPE_CHECKING:
    from ..types import ChatModel

__all__ = [
    "RING_KEEP",
    "RING_LIMIT",
    "SECTIONS",
    "SUMMARY_MARKER",
    "render_summary",
    "summarise_if_due",
]

log = logging.getLogger(__name__)

RING_LIMIT = 50
RING_KEEP = 20
SUMMARY_TIMEOUT = 90.0
RETRY_BASE = 60.0
RETRY_MAX = 3600.0
SUMMARY_CHARS = 6000
PAIR_USER_CHARS = 600
PAIR_ANSWER_CHARS = 900
MAX_RECAP_FILES = 30
SECTIONS = (
    "Project background",
    "Changes made",
    "Decisions",
    "Fixes",
    "Constraints",
    "Preferences",
    "Open items",
)
# The summary prompt starts with this; tests and fake models recognise summary requests by it.
SUMMARY_MARKER = "You maintain the running summary of a long conversation"
SUMMARY_PROMPT = (
    SUMMARY_MARKER
    + """ between a user and an AI assistant, so the assistant can continue the work after the \
old messages are gone. Merge the previous summary (if any) with the exchanges given, and answer \
with the updated summary only, in the conversation's language, under exactly these headings:

"""
    + "\n".join(f"## {name}" for name in SECTIONS)
    + """

Keep concrete facts: file names, commands, versions, numbers, names, decisions and why. Drop \
small talk and anything superseded later. Write "- none" under a heading with nothing to say. \
At most about 600 words in total."""
)
_THINK = re.compile(r"<think(?:ing)?>.*?(?:</think(?:ing)?>|\Z)", re.S | re.I)
_FENCE = re.compile(r"^```[\w-]*\n(.*?)\n```$", re.S)


def summary_messages(previous: str, pairs: Sequence[TurnPair]) -> list[dict[str, str]]:
    """The request for a new summary of ``previous`` plus ``pairs``."""
    exchanges = "\n\n".join(
        f"[{number}] User: {clip(p.user_text, PAIR_USER_CHARS)}\n"
        f"Assistant: {clip(p.answer_text, PAIR_ANSWER_CHARS)}"
        + (f"\nFiles: {', '.join(p.files[:10])}" if p.files else "")
        + (f"\nTools: {tool_chain(p.tools)}" if p.tools else "")
        for number, p in enumerate(pairs, 1)
    )
    body = f"Previous summary:\n{previous.strip() or '(none yet)'}\n\nExchanges:\n{exchanges}"
    return [
        {"role": "system", "content": SUMMARY_PROMPT},
        {"role": "user", "content": body},
    ]


def clean_summary(text: str) -> str:
    """The model's answer without think blocks, fences or a preamble before the first heading."""
    cleaned = _THINK.sub("", text or "").strip()
    fenced = _FENCE.match(cleaned)
    if fenced:
        cleaned = fenced.group(1).strip()
    first = cleaned.find("## ")
    if first > 0:
        cleaned = cleaned[first:]
    return clip(cleaned, SUMMARY_CHARS)


def merge_recap(summary: TopicSummary | None, pairs: Sequence[TurnPair]):
    """(tool counts, files) of the previous recap plus ``pairs``."""
    counts = dict(summary.tool_counts) if summary else {}
    for pair in pairs:
        for use in pair.tools:
            calls, failed = counts.get(use.name, (0, 0))
            counts[use.name] = (calls + 1, failed + (not use.ok))
    files = list(summary.files) if summary else []
    for pair in pairs:
        for path in pair.files:
            if path in files:
                files.remove(path)
            files.append(path)  # the most recently touched last
    return counts, tuple(files[-MAX_RECAP_FILES:])


def render_summary(summary: TopicSummary | None) -> str:
    """L3 as a system-prompt section ("" when there is nothing to say)."""
    if summary is None or not (summary.content or summary.tool_counts):
        return ""
    lines = [
        f"Summary of the earlier conversation ({summary.pairs_covered} older exchanges, no "
        "longer shown in full):",
        summary.content.strip(),
    ]
    if summary.tool_counts:
        ranked = sorted(summary.tool_counts.items(), key=lambda kv: -kv[1][0])
        tools = ", ".join(
            f"{name} ×{calls}" + (f" ({failed} failed)" if failed else "")
            for name, (calls, failed) in ranked[:15]
        )
        lines.append(f"Tools used in those exchanges: {tools}.")
    if summary.files:
        lines.append(f"Files touched: {', '.join(summary.files)}.")
    return "\n".join(line for line in lines if line)


def retry_delay(failures: int) -> float:
    return min(RETRY_MAX, RETRY_BASE * 2 ** max(0, failures))


async def summarise_if_due(
    records: ContextRecords,
    llm: ChatModel,
    topic_id: str,
    clock: Callable[[], float],
    *,
    timeout: float = SUMMARY_TIMEOUT,
) -> bool:
    """Fold the oldest pairs into L3 when the ring is full and no attempt is pending.

    Returns True when a new summary was stored. Model failures and timeouts are logged and
    postpone the next attempt; they are never raised.
    """
    pairs = await asyncio.to_thread(records.pairs, topic_id)
    if len(pairs) < RING_LIMIT:
        return False
    previous = await asyncio.to_thread(records.summary, topic_id)
    now = clock()
    if previous is not None and previous.retry_at > now:
        return False
    failures = previous.failures if previous else 0
    # a lease first: a job killed at the worker's time cap must not be retried on the next turn
    lease = now + timeout + retry_delay(failures)
    await asyncio.to_thread(records.reserve_summary, topic_id, lease, now)
    folded = pairs[: len(pairs) - RING_KEEP]
    try:
        completion = await asyncio.wait_for(
            llm.complete(summary_messages(previous.content if previous else "", folded)), timeout
        )
        content = clean_summary(completion.content)
        if not content:
            raise LLMError("the model answered with an empty summary")
    except (LLMError, asyncio.TimeoutError) as exc:
        error = str(exc) or type(exc).__name__
        log.warning("summary of topic %s failed (%s); the raw turns stay for now", topic_id, error)
        await asyncio.to_thread(
            records.note_failure, topic_id, error, clock() + retry_delay(failures + 1)
        )
        return False
    counts, files = merge_recap(previous, folded)
    summary = replace(
        previous or TopicSummary(topic_id=topic_id),
        content=content,
        tool_counts=counts,
        files=files,
        pairs_covered=(previous.pairs_covered if previous else 0) + len(folded),
        last_message_id=folded[-1].user_message_id,
        updated_at=clock(),
    )
    try:
        await asyncio.to_thread(records.apply_summary, summary, folded)
    except StoreError as exc:
        log.warning("could not store the summary of topic %s: %s", topic_id, exc)
        return False
    return True
