"""Session downloads: ``GET /v1/export/md/{session_id}`` and ``GET /v1/export/pdf/{session_id}``.

Both are built in a worker thread and entirely in memory (no temporary files to clean up); the
file name comes from the session title, made safe for every file system.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ..api_errors import ApiError
from ..spec import endpoint
from ..state import blocking, require_topic, state

if TYPE_CHECKING:
    from ...store import Store

MODE_QUERY = {
    "mode": "str - latest (the last finished question and answer, the default), answers (every "
    "question with its final answer) or full (with reasoning and tool calls)"
}
DISPOSITION = {"Content-Disposition": "attachment; the file name comes from the session title"}


def requested_mode(request: Request) -> str:
    from ...export.session_markdown import MODES

    mode = request.query_params.get("mode") or "latest"
    if mode not in MODES:
        raise ApiError(400, f"query parameter 'mode': expected one of {', '.join(MODES)}")
    return mode


def content_disposition(filename: str) -> str:
    """``attachment`` with an ASCII fallback name and the exact UTF-8 one (RFC 6266)."""
    fallback = filename.encode("ascii", "ignore").decode().replace('"', "")
    if not fallback.rsplit(".", 1)[0].strip("._-"):
        fallback = "session" + (filename[filename.rfind(".") :] if "." in filename else "")
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(filename, safe='')}"


def _render(
    render: Callable[[Store, str, str], Any], store: Store, topic_id: str, mode: str
) -> Any:
    from ...export.session_markdown import UnknownSession

    try:
        return render(store, topic_id, mode)
    except UnknownSession as exc:  # deleted since require_topic looked
        raise ApiError(404, str(exc)) from exc


async def _export(request: Request, kind: str) -> Response:
    from ...export import session_markdown as export

    mode = requested_mode(request)
    topic = await require_topic(request, request.path_params["session_id"])
    render = export.session_to_markdown if kind == "md" else export.session_to_pdf
    body = await blocking(_render, render, state(request).store, topic.id, mode)
    media = "text/markdown; charset=utf-8" if kind == "md" else "application/pdf"
    filename = export.export_filename(export.session_title(topic), topic.id, f".{kind}")
    headers = {"Content-Disposition": content_disposition(filename)}
    return Response(body, media_type=media, headers=headers)


@endpoint(
    "A session as Markdown",
    tag="export",
    query=MODE_QUERY,
    media_type="text/markdown",
    errors=(400, 404),
    headers=DISPOSITION,
)
async def export_markdown(request: Request) -> Response:
    return await _export(request, "md")


@endpoint(
    "A session as PDF",
    tag="export",
    query=MODE_QUERY,
    media_type="application/pdf",
    errors=(400, 404),
    headers=DISPOSITION,
    description="Rendered by the built-in PDF writer: Latin and CJK text stays extractable.",
)
async def export_pdf(request: Request) -> Response:
    return await _export(request, "pdf")


def routes() -> list[Route]:
    return [
        Route("/v1/export/md/{session_id}", export_markdown, methods=["GET"]),
        Route("/v1/export/pdf/{session_id}", export_pdf, methods=["GET"]),
    ]
