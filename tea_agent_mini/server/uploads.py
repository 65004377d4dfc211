"""Uploaded files under ``<home>/uploads/``: generated names, sniffed types, size caps.

The client's file name and declared type are never trusted: the type comes from the bytes
(images, PDF, UTF-8 text), the stored name is a random id, and the original name is kept only,
sanitised, in a small JSON sidecar. Images attach to a message as data-URL content parts; text
files attach as text parts.
"""

from __future__ import annotations

import base64
import json
import os
import re
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..errors import TeaAgentError
from ..private import private_dirs

UPLOAD_LIMIT = 20 * 1024 * 1024
TEXT_ATTACH_LIMIT = 200 * 1024
UPLOAD_ID = re.compile(r"^[0-9a-f]{32}$")
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
TEXT_TYPES = {".md": "text/markdown", ".csv": "text/csv", ".json": "application/json"}
EXTENSIONS = {
    "image/png": ".png",
    "image/jpeg": ".jpg",
    "image/gif": ".gif",
    "image/webp": ".webp",
    "application/pdf": ".pdf",
    "text/markdown": ".md",
    "text/csv": ".csv",
    "application/json": ".json",
    "text/plain": ".txt",
}


class UploadRejected(TeaAgentError, ValueError):
    """The file is of a type we do not accept (or is empty)."""


@dataclass(frozen=True)
class Upload:
    id: str
    name: str
    type: str
    size: int
    created: float

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "url": f"/v1/uploads/{self.id}"}


def sniff_type(data: bytes, filename: str) -> str:
    """The media type the bytes really are; raises UploadRejected for anything else."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    if data.startswith(b"%PDF-"):
        return "application/pdf"
    if b"\x00" not in data:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            pass
        else:
            return TEXT_TYPES.get(Path(filename).suffix.lower(), "text/plain")
    raise UploadRejected(
        "unsupported file type: expected an image (PNG, JPEG, GIF, WebP), a PDF or UTF-8 text"
    )


def clean_name(filename: str) -> str:
    """A display name without directories, control characters or odd symbols."""
    base = re.split(r"[\\/]", filename or "")[-1]
    base = re.sub(r"[^\w.\- ()]+", "_", base).strip(" .")[:120]
    return base or "file"


class UploadStore:
    def __init__(self, directory: Path, *, limit: int = UPLOAD_LIMIT) -> None:
        self.directory = directory
        self.limit = limit

    def save(self, data: bytes, filename: str) -> Upload:
        """Store the bytes (blocking: call in a worker thread).

        Raises:
            UploadRejected: empty, too large, or not an accepted type.
        """
        if not data:
            raise UploadRejected("the file is empty")
        if len(data) > self.limit:
            raise UploadRejected(f"the file is larger than {self.limit} bytes")
        media = sniff_type(data, filename)
        upload = Upload(uuid.uuid4().hex, clean_name(filename), media, len(data), time.time())
        private_dirs(self.directory)
        path = self._data_path(upload)
        _write_private(path, data)
        _write_private(self._meta_path(upload.id), json.dumps(asdict(upload)).encode())
        return upload

    def get(self, upload_id: str) -> Upload | None:
        if not UPLOAD_ID.match(upload_id):
            return None
        try:
            meta = json.loads(self._meta_path(upload_id).read_text(encoding="utf-8"))
            return Upload(**meta)
        except (OSError, ValueError, TypeError):
            return None

    def path(self, upload: Upload) -> Path:
        return self._data_path(upload)

    def content_part(self, upload: Upload) -> dict[str, Any]:
        """The OpenAI content part that attaches this upload to a message."""
        data = self._data_path(upload).read_bytes()
        if upload.type in IMAGE_TYPES:
            encoded = base64.b64encode(data).decode("ascii")
            return {
                "type": "image_url",
                "image_url": {"url": f"data:{upload.type};base64,{encoded}"},
            }
        if upload.type.startswith("text/") or upload.type == "application/json":
            text = data[:TEXT_ATTACH_LIMIT].decode("utf-8", errors="ignore")
            cut = "\n[… cut]" if len(data) > TEXT_ATTACH_LIMIT else ""
            return {"type": "text", "text": f"[attached file {upload.name}]\n{text}{cut}"}
        raise UploadRejected(f"{upload.name}: a {upload.type} file cannot be attached to a message")

    def _data_path(self, upload: Upload) -> Path:
        return self.directory / f"{upload.id}{EXTENSIONS.get(upload.type, '.bin')}"

    def _meta_path(self, upload_id: str) -> Path:
        return self.directory / f"{upload_id}.meta.json"


def _write_private(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
