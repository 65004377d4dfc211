"""toolkit_save_file: write text or base64 content, in one call or in numbered chunks.

Chunks are staged under ``<home>/tmp/save_file/`` (one directory per target file) and the file
is only written when the last missing chunk arrives: the target is replaced atomically, so a
half-sent file never appears in the workspace. Chunks may arrive in any order; sending chunk 0
again starts over.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
import shutil
import time
from pathlib import Path
from typing import Literal

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import tool
from tea_agent_mini.tools.files.fileio import read_bytes_or_none, write_atomic

MAX_CHUNKS = 1000
STALE_SECONDS = 24 * 3600
_BASE64_RE = re.compile(r"[A-Za-z0-9+/=_\-\s]*")


@tool("toolkit_save_file", mutates=True)
def toolkit_save_file(
    ctx: ToolContext,
    filename: str,
    content: str,
    encoding: Literal["text", "base64"] = "text",
    mode: Literal["write", "append"] = "write",
    chunk_index: int | None = None,
    total_chunks: int | None = None,
) -> str:
    """Save a file in the workspace from text or base64 content. For large content split it
    into chunks (a few KB each) and call once per chunk with chunk_index (0, 1, 2 ...) and
    total_chunks; the file is written only when every chunk has arrived, in one atomic step.
    With encoding 'base64' the chunks are pieces of one base64 string (split anywhere) and
    the decoded bytes are written exactly. mode 'append' adds to the end of the file.

    Args:
        filename: file path, relative to the workspace
        content: the text, or base64 data when encoding is 'base64' (for a chunked write:
            this chunk only)
        encoding: text (UTF-8, default) or base64 (binary files: images, archives)
        mode: write replaces the file (default), append adds to its end
        chunk_index: for large content sent in several calls: this chunk's number, counting
            from 0
        total_chunks: for chunked writes: how many chunks there are in all
    """
    target = ctx.resolve(filename)
    if target.is_dir():
        raise ToolError(f"'{filename}' is a directory")
    if encoding not in ("text", "base64"):
        raise ToolError("encoding must be 'text' or 'base64'")
    if mode not in ("write", "append"):
        raise ToolError("mode must be 'write' or 'append'")
    if chunk_index is None and total_chunks is None:
        return _commit(ctx, target, _decode(content, encoding), mode, chunks=1)
    if chunk_index is None or total_chunks is None:
        raise ToolError("a chunked write needs both chunk_index and total_chunks")
    return _receive_chunk(ctx, target, content, encoding, mode, chunk_index, total_chunks)


def _decode(content: str, encoding: str) -> bytes:
    if encoding == "text":
        return content.encode("utf-8", errors="replace")
    if not _BASE64_RE.fullmatch(content):
        raise ToolError(
            "content is not base64: it has characters outside A-Z a-z 0-9 + / = (or - _)"
        )
    packed = re.sub(r"\s+", "", content).replace("-", "+").replace("_", "/")
    packed += "=" * (-len(packed) % 4)
    try:
        return base64.b64decode(packed, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ToolError(f"content is not valid base64: {exc}") from exc


def _commit(ctx: ToolContext, target: Path, data: bytes, mode: str, chunks: int) -> str:
    existed = target.exists()
    if mode == "append":
        data = (read_bytes_or_none(target) or b"") + data
        added = len(data) - (target.stat().st_size if existed else 0)
    else:
        added = len(data)
    write_atomic(target, data, label=ctx.relative(target))
    verb = "appended" if mode == "append" else ("wrote" if existed else "created")
    detail = f", {chunks} chunks assembled" if chunks > 1 else ""
    digest = hashlib.sha256(data).hexdigest()[:12]
    return (
        f"{verb} {added:,} bytes {'to' if mode == 'append' else 'in'} {ctx.relative(target)} "
        f"(file now {len(data):,} bytes, sha256 {digest}{detail})"
    )


def _receive_chunk(
    ctx: ToolContext,
    target: Path,
    content: str,
    encoding: str,
    mode: str,
    index: int,
    total: int,
) -> str:
    if not 1 <= total <= MAX_CHUNKS:
        raise ToolError(f"total_chunks must be between 1 and {MAX_CHUNKS}")
    if not 0 <= index < total:
        raise ToolError(f"chunk_index must be between 0 and {total - 1} (chunks count from 0)")
    if encoding == "base64" and not _BASE64_RE.fullmatch(content):
        raise ToolError(f"chunk {index} is not base64: it has characters outside the alphabet")
    staging = _staging_dir(ctx, target)
    meta = {"target": str(target), "total": total, "encoding": encoding, "mode": mode}
    if _read_meta(staging) != meta or (index == 0 and _part(staging, 0).exists()):
        _reset(staging, meta, ctx.home)
    try:
        _part(staging, index).write_bytes(content.encode("utf-8", errors="surrogatepass"))
    except OSError as exc:
        raise ToolError(f"cannot stage chunk {index}: {exc.strerror or exc}") from exc
    missing = [i for i in range(total) if not _part(staging, i).exists()]
    if missing:
        shown = ", ".join(map(str, missing[:10])) + (" ..." if len(missing) > 10 else "")
        return (
            f"received chunk {index} of {total} for {ctx.relative(target)}; "
            f"waiting for chunk(s) {shown}. The file is written when all have arrived."
        )
    joined = b"".join(_part(staging, i).read_bytes() for i in range(total))
    data = _decode(joined.decode("utf-8", errors="surrogatepass"), encoding)
    shutil.rmtree(staging, ignore_errors=True)
    return _commit(ctx, target, data, mode, chunks=total)


def _part(staging: Path, index: int) -> Path:
    return staging / f"{index:05d}.part"


def _staging_dir(ctx: ToolContext, target: Path) -> Path:
    key = hashlib.sha256(f"{ctx.topic_id}\0{target}".encode()).hexdigest()[:24]
    return ctx.home / "tmp" / "save_file" / key


def _read_meta(staging: Path) -> dict | None:
    try:
        return json.loads((staging / "meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _reset(staging: Path, meta: dict, home: Path) -> None:
    """Start a fresh set of chunks (and clear staging left over from abandoned writes)."""
    shutil.rmtree(staging, ignore_errors=True)
    _purge_stale(staging.parent)
    try:
        staging.mkdir(parents=True, exist_ok=True)
        (staging / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    except OSError as exc:
        raise ToolError(f"cannot stage chunks under {home}: {exc.strerror or exc}") from exc


def _purge_stale(root: Path) -> None:
    cutoff = time.time() - STALE_SECONDS
    try:
        for child in root.iterdir():
            if child.is_dir() and child.stat().st_mtime < cutoff:
                shutil.rmtree(child, ignore_errors=True)
    except OSError:
        pass
