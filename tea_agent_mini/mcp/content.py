"""Turn a ``tools/call`` result's content blocks into text a model can read.

Text is kept as it is; binary blocks (images, audio, blobs) become a short bracketed note with
their type and size, since the model gets only text back from a tool.
"""

from __future__ import annotations

import json
from typing import Any


def render_content(content: Any, structured: Any = None) -> str:
    """All blocks joined by newlines; ``structured`` (structuredContent) when there are none."""
    blocks = content if isinstance(content, list) else []
    parts = [render_block(block) for block in blocks]
    parts = [part for part in parts if part]
    if not parts and structured is not None:
        return json.dumps(structured, ensure_ascii=False)
    return "\n".join(parts)


def render_block(block: Any) -> str:
    if not isinstance(block, dict):
        return str(block)
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind in ("image", "audio"):
        return f"[{kind} {block.get('mimeType') or 'unknown type'}, {_size(block.get('data'))}]"
    if kind == "resource":
        return _render_resource(block.get("resource"))
    if kind == "resource_link":
        name = block.get("name") or block.get("title") or ""
        label = f"{name} " if name else ""
        return f"[resource link: {label}{block.get('uri', '')}]"
    return f"[{kind or 'unknown'} content: {json.dumps(block, ensure_ascii=False)[:200]}]"


def _render_resource(resource: Any) -> str:
    if not isinstance(resource, dict):
        return "[resource]"
    uri = resource.get("uri", "")
    if "text" in resource:
        return f"[resource {uri}]\n{resource['text']}"
    mime = resource.get("mimeType") or "unknown type"
    return f"[resource {uri} ({mime}), {_size(resource.get('blob'))}]"


def _size(data: Any) -> str:
    """The decoded size of a base64 payload, without decoding it."""
    if not isinstance(data, str):
        return "no data"
    text = data.strip()
    size = len(text) * 3 // 4 - text[-2:].count("=")
    return f"{max(size, 0):,} bytes"
