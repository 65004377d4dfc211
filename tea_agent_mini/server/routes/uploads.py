"""Uploads: ``POST /v1/uploads`` (multipart, one ``file``) and ``GET /v1/uploads/{id}``.

An uploaded image or text file can then be attached to a message by id.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse
from starlette.routing import Route

from ..api_errors import ApiError
from ..bodies import media_type
from ..spec import endpoint
from ..state import blocking, state
from ..uploads import IMAGE_TYPES, UploadRejected


@endpoint(
    "Upload a file",
    tag="uploads",
    body="UploadForm",
    body_types=("multipart/form-data",),
    response="Upload",
    status=201,
    errors=(413, 415),
    description=(
        "One `file` field, at most 20 MB. Accepted: PNG, JPEG, GIF, WebP, PDF and UTF-8 text; "
        "the type is read from the bytes, not from the name."
    ),
)
async def create_upload(request: Request) -> JSONResponse:
    store = state(request).uploads
    if media_type(request) != "multipart/form-data":
        raise ApiError(415, "send the file as multipart/form-data in a field named 'file'")
    async with request.form(max_files=1, max_fields=5) as form:
        upload = form.get("file")
        if upload is None or isinstance(upload, str):
            raise ApiError(400, "multipart field 'file' is required")
        data = await upload.read(store.limit + 1)
        filename = upload.filename or "file"
    if len(data) > store.limit:
        raise ApiError(413, f"the file is larger than {store.limit} bytes")
    try:
        saved = await blocking(store.save, data, filename)
    except UploadRejected as exc:
        status = 400 if not data else 415
        raise ApiError(status, str(exc)) from exc
    return JSONResponse(saved.to_json(), status_code=201)


@endpoint(
    "Download an uploaded file",
    tag="uploads",
    media_type="application/octet-stream",
    errors=(404,),
)
async def get_upload(request: Request) -> FileResponse:
    store = state(request).uploads
    upload_id = request.path_params["id"]
    upload = await blocking(store.get, upload_id)
    path = store.path(upload) if upload else None
    if upload is None or path is None or not await blocking(path.is_file):
        raise ApiError(404, f"no upload with id {upload_id!r}")
    disposition = "inline" if upload.type in IMAGE_TYPES else "attachment"
    return FileResponse(
        path,
        media_type=upload.type,
        filename=upload.name,
        content_disposition_type=disposition,
        headers={
            "Cache-Control": "private, max-age=86400",
            "Content-Security-Policy": "sandbox; default-src 'none'",
        },
    )


def routes() -> list[Route]:
    return [
        Route("/v1/uploads", create_upload, methods=["POST"]),
        Route("/v1/uploads/{id}", get_upload, methods=["GET"]),
    ]
