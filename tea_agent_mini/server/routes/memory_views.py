"""The JSON shapes of memories and memory stats on the REST API, with the OpenAPI schemas that
describe them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...memory.model import CATEGORIES, Priority
from ..schemas import BOOL, INT, NUM, STR, nullable, obj, page_schema

if TYPE_CHECKING:
    from ...store.memories import Memory, MemoryStats

PRIORITY_SCHEMA = {"anyOf": [{"enum": [p.name for p in Priority]}, {**INT, "minimum": 0}]}
MEMORY_SCHEMA = obj(
    {
        "id": INT,
        "object": {"const": "memory"},
        "content": STR,
        "priority": {**INT, "description": "0 CRITICAL, 1 HIGH, 2 MEDIUM, 3 LOW"},
        "priority_name": {"enum": [p.name for p in Priority]},
        "importance": INT,
        "category": {"enum": list(CATEGORIES)},
        "tags": {"type": "array", "items": STR},
        "pinned": BOOL,
        "expires_at": nullable(NUM),
        "expired": BOOL,
        "created": NUM,
        "updated": NUM,
        "last_accessed": nullable(NUM),
        "source_session": nullable(STR),
        "embedding_model": STR,
        "score": {**NUM, "description": "search relevance 0-1 (only with ?q=)"},
    },
    ("id", "content", "priority", "category", "pinned"),
)
MEMORY_LIST = page_schema(MEMORY_SCHEMA)
_FIELDS = {
    "content": STR,
    "priority": PRIORITY_SCHEMA,
    "importance": {**INT, "minimum": 1, "maximum": 5},
    "category": {"enum": list(CATEGORIES)},
    "tags": {"anyOf": [{"type": "array", "items": STR}, STR]},
    "pinned": BOOL,
}
MEMORY_ADD = obj({**_FIELDS, "expires_in_days": {**NUM, "exclusiveMinimum": 0}}, ("content",))
MEMORY_PATCH = obj(
    {**_FIELDS, "expires_at": {**nullable(NUM), "description": "epoch seconds; null: never"}}
)
MEMORY_ADDED = obj({"action": {"enum": ["added", "merged", "duplicate"]}, "memory": MEMORY_SCHEMA})
MEMORY_DELETED = obj({"id": INT, "object": {"const": "memory"}, "deleted": BOOL})
MEMORY_STATS = obj(
    {
        "object": {"const": "memory.stats"},
        "active": INT,
        "by_priority": {"type": "object", "additionalProperties": INT},
        "by_category": {"type": "object", "additionalProperties": INT},
        "pinned": INT,
        "expired": INT,
        "deleted": INT,
        "embedded": {"type": "object", "additionalProperties": INT},
        "keyword_backend": {"enum": ["fts5", "tsvector", "like"]},
        "embedder": STR,
    }
)


def memory_json(memory: Memory, now: float, score: float | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": memory.id,
        "object": "memory",
        "content": memory.content,
        "priority": memory.priority,
        "priority_name": Priority(memory.priority).name,
        "importance": memory.importance,
        "category": memory.category,
        "tags": list(memory.tags),
        "pinned": memory.pinned,
        "expires_at": memory.expires_at,
        "expired": memory.expires_at is not None and memory.expires_at <= now,
        "created": memory.created_at,
        "updated": memory.updated_at,
        "last_accessed": memory.last_accessed_at,
        "source_session": memory.source_topic,
        "embedding_model": memory.embedding_model,
    }
    if score is not None:
        data["score"] = round(score, 4)
    return data


def stats_json(stats: MemoryStats) -> dict[str, Any]:
    return {
        "object": "memory.stats",
        "active": stats.active,
        "by_priority": {Priority(k).name: v for k, v in sorted(stats.by_priority.items())},
        "by_category": dict(sorted(stats.by_category.items())),
        "pinned": stats.pinned,
        "expired": stats.expired,
        "deleted": stats.deleted,
        "embedded": stats.embedded,
        "keyword_backend": stats.keyword_backend,
        "embedder": stats.embedder,
    }
