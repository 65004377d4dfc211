"""Server-sent events framing and the streaming response both encoders use."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

from starlette.responses import StreamingResponse

SSE_HEADERS = {
    "Cache-Control": "no-cache",
    # nginx and similar proxies buffer responses unless told not to
    "X-Accel-Buffering": "no",
}


def dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def sse_event(data: Any, *, event: str | None = None, id: int | None = None) -> bytes:
    """One event; ``data`` is sent as compact JSON (which never contains a raw newline)."""
    head = ""
    if id is not None:
        head += f"id: {id}\n"
    if event is not None:
        head += f"event: {event}\n"
    text = data if isinstance(data, str) else dumps(data)
    return f"{head}data: {text}\n\n".encode()


def sse_comment(text: str) -> bytes:
    """A comment line: keeps proxies and clients from timing out, ignored by parsers."""
    return f": {text}\n\n".encode()


def sse_response(
    frames: AsyncIterator[bytes], *, headers: Mapping[str, str] | None = None
) -> StreamingResponse:
    return StreamingResponse(
        frames,
        media_type="text/event-stream; charset=utf-8",
        headers={**SSE_HEADERS, **(headers or {})},
    )
