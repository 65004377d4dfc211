"""toolkit_vision_analyze: show an image to the configured (vision-capable) main model.

A workspace file is sent inline as a ``data:`` URL with the MIME type read from its first bytes;
an http(s) URL is passed on for the provider to fetch.
"""

from __future__ import annotations

import asyncio
import base64
from typing import Any

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.modelcall import call_model, main_model_config
from tea_agent_mini.toolkit.registry import tool

MAX_IMAGE_BYTES = 10 * 1024 * 1024
DEFAULT_PROMPT = "Describe this image in detail, including any text it contains."
_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"BM", "image/bmp"),
)


def sniff_image_type(head: bytes) -> str | None:
    """The MIME type of an image from its first bytes (PNG, JPEG, GIF, WebP, BMP), else None."""
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    for signature, mime in _SIGNATURES:
        if head.startswith(signature):
            return mime
    return None


def image_part(ctx: ToolContext, image_path: str | None, url: str | None) -> dict[str, Any]:
    """The OpenAI ``image_url`` content part for a workspace file or a URL."""
    if bool(image_path) == bool(url):
        raise ToolError("give exactly one of 'image_path' (a workspace file) or 'url'")
    if url:
        url = url.strip()
        if not url.lower().startswith(("http://", "https://", "data:image/")):
            raise ToolError("'url' must be an http(s) URL (or a data:image URL)")
        return {"type": "image_url", "image_url": {"url": url}}
    path = ctx.resolve(image_path or "", must_exist=True)
    if not path.is_file():
        raise ToolError(f"{ctx.relative(path)} is not a file")
    size = path.stat().st_size
    if size > MAX_IMAGE_BYTES:
        raise ToolError(
            f"{ctx.relative(path)} is {size / 1048576:.1f} MiB; images up to "
            f"{MAX_IMAGE_BYTES // 1048576} MiB can be sent (scale it down first)"
        )
    data = path.read_bytes()
    mime = sniff_image_type(data[:16])
    if mime is None:
        raise ToolError(f"{ctx.relative(path)} is not a PNG, JPEG, GIF, WebP or BMP image")
    encoded = base64.b64encode(data).decode("ascii")
    return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{encoded}"}}


@tool("toolkit_vision_analyze")
async def toolkit_vision_analyze(
    ctx: ToolContext,
    image_path: str | None = None,
    url: str | None = None,
    prompt: str | None = None,
) -> str:
    """Look at an image with the vision-capable model: describe it, read its text, answer a
    question about it. Give a workspace file ('image_path': PNG, JPEG, GIF, WebP or BMP, up to
    10 MiB) or an http(s) 'url', and optionally a 'prompt' saying what to look for.

    Args:
        image_path: an image file in the workspace
        url: an http(s) URL of an image
        prompt: what to find out about the image
    """
    part = await asyncio.to_thread(image_part, ctx, image_path, url)
    config = main_model_config(ctx)
    text = (prompt or "").strip() or DEFAULT_PROMPT
    messages = [{"role": "user", "content": [{"type": "text", "text": text}, part]}]

    async def ask(client: Any) -> Any:
        return await client.complete(messages)

    try:
        completion = await call_model(config, ask)
    except ToolError as exc:
        raise ToolError(
            f"{exc} (if the model '{config.model_name}' cannot read images, configure a "
            "vision-capable main model)"
        ) from exc
    answer = completion.content.strip()
    if not answer:
        raise ToolError(f"the model '{config.model_name}' returned an empty answer for the image")
    return answer
