"""Model-driven upkeep: priority adjustment and reflection.

Adjustment shows the cheap model the live memories and applies at most 3 of its suggested
priority changes, each limited to one level. Reflection groups memories by category and, for a
group large enough, asks for one summary; the summary is stored as a CRITICAL memory tagged
``summary`` (replacing that category's previous one) and the originals lose importance and are
tagged ``reflected`` so the next reflection leaves them alone. Pinned memories are not adjusted.
"""

from __future__ import annotations

import logging
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from ..errors import LLMError
from ..llm.repair import JSONRepairError, repair_json
from ..store.memories import Memory, MemoryRepository
from ..types import ChatModel
from .extract import parse_json_items
from .ingest import enforce_critical_cap
from .model import Priority, clean_tags

__all__ = ["PriorityChange", "Reflection", "adjust_priorities", "reflect_memories"]

log = logging.getLogger(__name__)

DAY = 86400.0
MAX_CHANGES = 3
ADJUST_POOL = 60
REFLECT_MIN_GROUP = 5
REFLECT_MAX_GROUP = 40
REFLECT_IMPORTANCE_DROP = 2
SUMMARY_TAG = "summary"
REFLECTED_TAG = "reflected"
MAX_SUMMARY_CHARS = 1500

ADJUST_PROMPT = """\
You maintain an AI assistant's long-term memories. Priorities: 0 CRITICAL (always followed), \
1 HIGH, 2 MEDIUM, 3 LOW. Raise memories that clearly keep mattering; lower ones that look stale, \
trivial or superseded. Suggest at most 3 changes, one level each, only where clearly useful. \
Answer with JSON only: {"changes": [{"id": 12, "priority": "HIGH", "reason": "..."}]}, or \
{"changes": []} when nothing should change."""

REFLECT_PROMPT = """\
Condense these memories of the kind "{category}" into one short statement that keeps every \
rule, preference or fact that still matters, dropping repetition and anything outdated. \
Answer with the statement only: no preamble, no list markers, no JSON."""

_THINK = re.compile(r"<think(?:ing)?>.*?(?:</think(?:ing)?>|\Z)", re.S | re.I)
_FENCE = re.compile(r"^```[\w-]*\s*|\s*```$")


@dataclass(frozen=True)
class PriorityChange:
    memory_id: int
    old: Priority
    new: Priority
    reason: str = ""


@dataclass(frozen=True)
class Reflection:
    category: str
    summary: Memory
    sources: tuple[int, ...]


def _describe(memory: Memory, now: float) -> str:
    age = (now - (memory.updated_at or memory.created_at)) / DAY
    used = memory.last_accessed_at
    last = f"{(now - used) / DAY:.0f}d ago" if used else "never"
    return (
        f"id={memory.id} priority={Priority(memory.priority).name} "
        f"importance={memory.importance} category={memory.category} age={age:.0f}d "
        f"last_used={last}: {' '.join(memory.content.split())[:300]}"
    )


async def adjust_priorities(
    llm: ChatModel, repo: MemoryRepository, now: float, *, max_changes: int = MAX_CHANGES
) -> list[PriorityChange]:
    """Let the model move up to ``max_changes`` memories by one priority level each."""
    pool = [m for m in repo.matching(limit=ADJUST_POOL, now=now) if not m.pinned]
    if not pool:
        return []
    listing = "\n".join(_describe(m, now) for m in pool)
    messages = [
        {"role": "system", "content": ADJUST_PROMPT},
        {"role": "user", "content": f"Memories:\n{listing}"},
    ]
    try:
        completion = await llm.complete(messages)
    except LLMError as exc:
        log.warning("memory priority adjustment failed: %s", exc)
        return []
    wrappers = ("changes", "adjustments", "memories", "items", "result")
    by_id = {m.id: m for m in pool}
    changes: list[PriorityChange] = []
    for item in parse_json_items(completion.content, wrappers):
        change = _change(item, by_id)
        if change is None or any(c.memory_id == change.memory_id for c in changes):
            continue
        repo.update(change.memory_id, priority=change.new, now=now, bump=change.new < change.old)
        changes.append(change)
        if len(changes) >= max_changes:
            break
    if changes:
        enforce_critical_cap(repo, now)
    return changes


def _change(item: Any, by_id: dict[int, Memory]) -> PriorityChange | None:
    if not isinstance(item, dict):
        return None
    try:
        memory_id = int(str(item.get("id", "")).strip().lstrip("#"))
        wanted = Priority.parse(item.get("priority", item.get("new_priority")))
    except ValueError:
        return None
    memory = by_id.get(memory_id)
    if memory is None or wanted == memory.priority:
        return None
    old = Priority(memory.priority)
    new = old.stronger() if wanted < old else old.weaker()  # one level at a time
    return PriorityChange(memory_id, old, new, str(item.get("reason") or "")[:200])


async def reflect_memories(
    llm: ChatModel,
    repo: MemoryRepository,
    now: float,
    *,
    min_group: int = REFLECT_MIN_GROUP,
) -> list[Reflection]:
    """Summarise each large enough category group into one CRITICAL memory (stored without a
    vector: the caller's next ``MemoryVectors.refresh`` embeds it)."""
    groups: dict[str, list[Memory]] = defaultdict(list)
    for memory in repo.matching(limit=None, now=now):
        if memory.priority == Priority.CRITICAL or {SUMMARY_TAG, REFLECTED_TAG} & set(memory.tags):
            continue
        groups[memory.category].append(memory)
    reflections = []
    for category, members in sorted(groups.items()):
        if len(members) < min_group:
            continue
        members.sort(key=lambda m: (m.updated_at, m.id), reverse=True)
        reflection = await _reflect_group(llm, repo, category, members[:REFLECT_MAX_GROUP], now)
        if reflection is not None:
            reflections.append(reflection)
    if reflections:
        enforce_critical_cap(repo, now)
    return reflections


async def _reflect_group(
    llm: ChatModel, repo: MemoryRepository, category: str, members: list[Memory], now: float
) -> Reflection | None:
    listing = "\n".join(f"- {' '.join(m.content.split())}" for m in members)
    messages = [
        {"role": "system", "content": REFLECT_PROMPT.format(category=category)},
        {"role": "user", "content": listing},
    ]
    try:
        completion = await llm.complete(messages)
    except LLMError as exc:
        log.warning("memory reflection on %s failed: %s", category, exc)
        return None
    summary = _summary_text(completion.content)
    if not summary:
        return None
    previous = [
        m.id for m in repo.matching(category=category, tag=SUMMARY_TAG, limit=None, now=now)
    ]
    repo.soft_delete(previous, now=now)
    tags = clean_tags([SUMMARY_TAG, *(tag for m in members for tag in m.tags)])
    memory = repo.add(
        summary,
        priority=Priority.CRITICAL,
        importance=max(m.importance for m in members),
        category=category,
        tags=tags,
        now=now,
    )
    for m in members:
        repo.update(
            m.id,
            importance=max(1, m.importance - REFLECT_IMPORTANCE_DROP),
            tags=clean_tags([REFLECTED_TAG, *m.tags]),
            bump=False,
        )
    return Reflection(category, memory, tuple(m.id for m in members))


def _summary_text(text: str) -> str:
    cleaned = _FENCE.sub("", _THINK.sub("", text or "").strip()).strip()
    if cleaned.startswith("{"):
        try:
            value = repair_json(cleaned)
        except JSONRepairError:
            value = None
        if isinstance(value, dict):
            found = next((value[k] for k in ("summary", "content", "text") if k in value), "")
            cleaned = found if isinstance(found, str) else ""
    return " ".join(cleaned.split())[:MAX_SUMMARY_CHARS]
