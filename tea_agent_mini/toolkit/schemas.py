"""Tool schemas as sent to the model: compact, with the long usage notes left for on-demand help.

A tool's description often carries paragraphs of usage notes that help once and cost tokens on
every request. The schema a request carries keeps the description's first sentences (up to a
limit per detail level) and short parameter descriptions; ``toolkit_find_tools`` shows the whole
text when the model asks for a tool by name.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from .registry import ToolSpec

__all__ = ["Detail", "DESCRIPTION_LIMITS", "render_schema", "summarise"]

Detail = Literal["compact", "full"]
# characters of a tool's description, and of each parameter's, per detail level
DESCRIPTION_LIMITS: dict[str, tuple[int, int]] = {"compact": (160, 90), "full": (420, 160)}
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`'\"(])")


def summarise(text: str, limit: int) -> str:
    """``text`` on one line: whole sentences while they fit in ``limit``; at least the first
    sentence, cut at a word with an ellipsis when it alone is too long."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    out = ""
    for sentence in _SENTENCE_END.split(flat):
        candidate = f"{out} {sentence}".strip()
        if len(candidate) > limit:
            break
        out = candidate
    if out:
        return out
    # "..." rather than an ellipsis: chat templates escape non-ASCII in JSON (\\u2026)
    cut = flat[: limit - 3].rsplit(" ", 1)[0]
    return cut.rstrip(",;:") + "..."


def render_schema(spec: ToolSpec, detail: Detail = "compact") -> dict[str, Any]:
    """The OpenAI ``tools`` entry for ``spec`` at ``detail``."""
    tool_limit, parameter_limit = DESCRIPTION_LIMITS[detail]
    return {
        "type": "function",
        "function": {
            "name": spec.name,
            "description": summarise(spec.description, tool_limit),
            "parameters": _parameters(spec.parameters, parameter_limit),
        },
    }


def _parameters(schema: dict[str, Any], limit: int) -> dict[str, Any]:
    out = dict(schema)
    properties = schema.get("properties")
    if isinstance(properties, dict):
        out["properties"] = {key: _property(value, limit) for key, value in properties.items()}
    return out


def _property(schema: Any, limit: int) -> Any:
    if not isinstance(schema, dict):
        return schema
    out = {k: v for k, v in schema.items() if k not in ("examples", "title")}
    description = out.get("description")
    if isinstance(description, str):
        out["description"] = summarise(description, limit)
    items = out.get("items")
    if isinstance(items, dict) and isinstance(items.get("properties"), dict):
        out["items"] = _parameters(items, limit)
    return out
