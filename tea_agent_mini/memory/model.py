"""The vocabulary of long-term memory: priorities, categories and a not-yet-stored candidate."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

__all__ = [
    "CATEGORIES",
    "Candidate",
    "Priority",
    "clamp_importance",
    "clean_tags",
    "parse_category",
]

CATEGORIES = ("instruction", "preference", "fact", "reminder", "general")
DEFAULT_CATEGORY = "general"
DEFAULT_IMPORTANCE = 3
MAX_TAGS = 16
MAX_TAG_CHARS = 40

_CATEGORY_SYNONYMS = {
    "instructions": "instruction",
    "rule": "instruction",
    "rules": "instruction",
    "preferences": "preference",
    "pref": "preference",
    "facts": "fact",
    "reminders": "reminder",
    "todo": "reminder",
    "other": "general",
    "note": "general",
    "misc": "general",
}


class Priority(enum.IntEnum):
    """Lower is stronger: CRITICAL memories are always injected, LOW only when relevant."""

    CRITICAL = 0
    HIGH = 1
    MEDIUM = 2
    LOW = 3

    @classmethod
    def parse(cls, value: object) -> Priority:
        """A priority from a name (any case), a number 0-3, or a digit string.

        Raises:
            ValueError: anything else; the message lists what is accepted.
        """
        if isinstance(value, Priority):
            return value
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 3:
            return cls(value)
        if isinstance(value, float) and value.is_integer():
            return cls.parse(int(value))
        if isinstance(value, str):
            text = value.strip()
            if text.isdigit():
                return cls.parse(int(text))
            member = cls.__members__.get(text.upper())
            if member is not None:
                return member
        raise ValueError(f"priority {value!r}: expected CRITICAL, HIGH, MEDIUM, LOW or 0-3")

    def stronger(self, steps: int = 1) -> Priority:
        return Priority(max(Priority.CRITICAL, self - steps))

    def weaker(self, steps: int = 1) -> Priority:
        return Priority(min(Priority.LOW, self + steps))


def parse_category(value: object, default: str = DEFAULT_CATEGORY) -> str:
    """A known category; common synonyms are mapped, anything unknown becomes ``default``."""
    if not isinstance(value, str):
        return default
    text = value.strip().lower()
    text = _CATEGORY_SYNONYMS.get(text, text)
    return text if text in CATEGORIES else default


def clamp_importance(value: object, default: int = DEFAULT_IMPORTANCE) -> int:
    """An importance in 1..5; numbers out of range are clamped, anything else is ``default``."""
    try:
        # any JSON value may come: float() refuses the wrong kinds with the TypeError caught here
        number = round(float(value))  # type: ignore[arg-type]
    except (TypeError, ValueError, OverflowError):
        return default
    return min(5, max(1, number))


def clean_tags(tags: Iterable[object] | str | None) -> tuple[str, ...]:
    """Distinct, stripped, lower-case tags in their first order; a string may be comma-separated."""
    if tags is None:
        return ()
    items: Iterable[object] = tags.split(",") if isinstance(tags, str) else tags
    seen: dict[str, None] = {}
    for item in items:
        tag = str(item).strip().lower()[:MAX_TAG_CHARS]
        if tag and tag not in seen:
            seen[tag] = None
        if len(seen) >= MAX_TAGS:
            break
    return tuple(seen)


@dataclass(frozen=True)
class Candidate:
    """A memory on its way into the store (from the extractor, the tool or the API)."""

    content: str
    priority: Priority = Priority.MEDIUM
    importance: int = DEFAULT_IMPORTANCE
    category: str = DEFAULT_CATEGORY
    tags: tuple[str, ...] = ()
    expires_at: float | None = None
    pinned: bool = False
