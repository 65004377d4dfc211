"""Extracting memory candidates from a finished turn with the cheap model.

The model is asked for JSON, but small models wrap it in fences, put it inside an object, add a
sentence before it or think aloud first; :func:`parse_candidates` reads all of those. What each
kind becomes: an instruction the user asks to remember -> CRITICAL, a preference or a reminder
(which expires) -> HIGH, a fact -> MEDIUM, anything else -> LOW.
"""

from __future__ import annotations

import logging
import re
from datetime import datetime, timezone
from typing import Any

from ..errors import LLMError
from ..llm.repair import JSONRepairError, repair_json
from ..types import ChatModel
from .model import Candidate, Priority, clamp_importance, clean_tags, parse_category

__all__ = ["EXTRACT_PROMPT", "extract_candidates", "parse_candidates", "parse_json_items"]

log = logging.getLogger(__name__)

DAY = 86400.0
DEFAULT_REMINDER_DAYS = 7.0
MAX_CANDIDATES = 10
MAX_CONTENT_CHARS = 1000
MAX_TURN_CHARS = 6000

# kind -> (category, priority)
KINDS: dict[str, tuple[str, Priority]] = {
    "instruction": ("instruction", Priority.CRITICAL),
    "preference": ("preference", Priority.HIGH),
    "reminder": ("reminder", Priority.HIGH),
    "fact": ("fact", Priority.MEDIUM),
    "general": ("general", Priority.LOW),
}

EXTRACT_PROMPT = """\
You decide what from one exchange between a user and an AI assistant is worth remembering in \
later conversations. Answer with JSON only, in this shape:
{"memories": [{"content": "...", "kind": "instruction", "importance": 3, "tags": ["..."], \
"expires_in_days": null}]}

kind is one of:
- instruction: a rule for how the assistant should behave that the user asks it to always \
follow ("always answer in French"); a fact the user asks you to remember is a fact
- preference: how the user likes things done (style, tools, language, format)
- reminder: something to do or bring up later; set expires_in_days to when it stops mattering
- fact: a lasting fact about the user, their projects, environment or decisions
- other: anything else clearly worth keeping
importance: 1 (trivia) to 5 (essential). tags: a few lower-case keywords.
Write each memory as one self-contained sentence in the user's language, stating the fact \
itself ("The user's favourite colour is teal", never "Remember that ..."). Skip greetings, small \
talk, the assistant's own reasoning, one-off details and secrets (passwords, keys, tokens).
When nothing is worth remembering, answer {"memories": []}."""

_THINK = re.compile(r"<think(?:ing)?>.*?(?:</think(?:ing)?>|\Z)", re.S | re.I)
_WRAPPERS = ("memories", "items", "results", "result", "data", "candidates", "entries", "output")
_REMEMBER = re.compile(r"^(?:please\s+)?(?:remember|note|keep in mind)(?:\s+that)?[,:]?\s+", re.I)
_CONTENT_KEYS = ("content", "memory", "text", "fact", "value")
_KIND_KEYS = ("kind", "type", "category")


def extract_messages(user_text: str, answer_text: str) -> list[dict[str, Any]]:
    """The chat messages asking the model for memories of one turn."""
    turn = (
        f"User:\n{_clip(user_text, MAX_TURN_CHARS)}\n\n"
        f"Assistant:\n{_clip(answer_text, MAX_TURN_CHARS // 2)}"
    )
    return [
        {"role": "system", "content": EXTRACT_PROMPT},
        {"role": "user", "content": turn},
    ]


async def extract_candidates(
    llm: ChatModel, user_text: str, answer_text: str, now: float
) -> list[Candidate]:
    """Ask ``llm`` for memories of the turn; a failed call is logged and yields none."""
    if not user_text.strip():
        return []
    try:
        completion = await llm.complete(extract_messages(user_text, answer_text))
    except LLMError as exc:
        log.warning("memory extraction failed: %s", exc)
        return []
    return parse_candidates(completion.content, now)


def parse_candidates(text: str, now: float) -> list[Candidate]:
    """Candidates from the model's answer, however loosely it followed the JSON shape."""
    found: list[Candidate] = []
    for item in parse_json_items(text):
        candidate = _candidate(item, now)
        if candidate is not None:
            found.append(candidate)
        if len(found) >= MAX_CANDIDATES:
            break
    return found


def parse_json_items(text: str, wrappers: tuple[str, ...] = _WRAPPERS) -> list[Any]:
    """The list of items in a model's JSON answer: bare, fenced, wrapped in an object under one
    of ``wrappers`` (or its only list), after prose or a ``<think>`` block. [] when unreadable."""
    cleaned = _THINK.sub("", text or "").strip()
    if not cleaned:
        return []
    try:
        value = repair_json(cleaned)
    except (JSONRepairError, RecursionError):
        log.debug("no JSON in the model's answer: %.200s", cleaned)
        return []
    return _items(value, wrappers, depth=0)


def _items(value: Any, wrappers: tuple[str, ...], depth: int) -> list[Any]:
    if isinstance(value, list):
        return value
    if not isinstance(value, dict) or depth > 3:
        return []
    for key in wrappers:
        inner = value.get(key)
        if isinstance(inner, (list, dict)):
            return _items(inner, wrappers, depth + 1)
    if any(key in value for key in (*_CONTENT_KEYS, "id")):
        return [value]
    lists = [inner for inner in value.values() if isinstance(inner, list)]
    return lists[0] if len(lists) == 1 else []


def _candidate(item: Any, now: float) -> Candidate | None:
    if isinstance(item, str):
        item = {"content": item}
    if not isinstance(item, dict):
        return None
    content = next((item[k] for k in _CONTENT_KEYS if isinstance(item.get(k), str)), "")
    content = " ".join(content.split())[:MAX_CONTENT_CHARS]
    kind_text = next((item[k] for k in _KIND_KEYS if isinstance(item.get(k), str)), "")
    fact = _REMEMBER.sub("", content)
    if fact != content:  # "Remember that my colour is teal" is the fact, not a rule to follow
        content, kind_text = fact[:1].upper() + fact[1:], "fact"
    if not content:
        return None
    category, priority = KINDS[parse_category(kind_text)]
    expires_at = _expiry(item, now)
    if category == "reminder" and expires_at is None:
        expires_at = now + DEFAULT_REMINDER_DAYS * DAY
    return Candidate(
        content=content,
        priority=priority,
        importance=clamp_importance(item.get("importance")),
        category=category,
        tags=clean_tags(item.get("tags") if isinstance(item.get("tags"), (list, str)) else None),
        expires_at=expires_at,
    )


def _expiry(item: dict[str, Any], now: float) -> float | None:
    days = item.get("expires_in_days")
    if isinstance(days, str):
        try:
            days = float(days.strip())
        except ValueError:
            days = None
    if isinstance(days, (int, float)) and not isinstance(days, bool) and days > 0:
        return now + float(days) * DAY
    stamp = item.get("expires_at")
    if isinstance(stamp, str) and stamp.strip():
        try:
            moment = datetime.fromisoformat(stamp.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
        if moment.tzinfo is None:
            moment = moment.astimezone()  # a bare date means local time
        return moment.astimezone(timezone.utc).timestamp()
    return None


def _clip(text: str, limit: int) -> str:
    text = text or ""
    return text if len(text) <= limit else text[: limit - 20] + "\n... [cut] ..."
