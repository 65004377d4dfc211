"""The web UI's files, read from the package with importlib.resources (works from a wheel, a zip
or a Nuitka binary), served with ETags: ``no-cache`` (always revalidate) for the app's own files,
a day of caching for ``vendor/``.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import posixpath
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .api_errors import ApiError
from .spec import endpoint
from .state import blocking

MEDIA_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".map": "application/json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".ico": "image/x-icon",
    ".webp": "image/webp",
    ".woff2": "font/woff2",
    ".txt": "text/plain; charset=utf-8",
    ".md": "text/plain; charset=utf-8",
}
PAGE_CSP = (
    "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; "
    "script-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'"
)
PLACEHOLDER = b"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>tea-agent-mini</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 3rem auto">
<h1>tea-agent-mini</h1>
<p>The server is running. The web UI is not bundled in this build;
the API is documented at <a href="/docs">/docs</a>.</p>
</body></html>
"""


@dataclass(frozen=True)
class Asset:
    data: bytes
    media_type: str
    etag: str


class PackageAssets:
    """Files under ``<package>/static`` with their ETags, read once and kept in memory."""

    def __init__(self, package: str = "tea_agent_mini.server", folder: str = "static") -> None:
        self.package = package
        self.folder = folder
        self._cache: dict[str, Asset] = {}

    def get(self, path: str) -> Asset | None:
        asset = self._cache.get(path)
        if asset is None:
            asset = self._load(path)
            if asset is not None:  # misses are not kept: any URL could be asked for
                self._cache[path] = asset
        return asset

    def _load(self, path: str) -> Asset | None:
        parts = path.split("/")
        if not path or any(p in ("", ".", "..") or "\\" in p or "\x00" in p for p in parts):
            return None
        try:
            node = importlib.resources.files(self.package).joinpath(self.folder)
            for part in parts:
                node = node.joinpath(part)
            if not node.is_file():
                return None
            data = node.read_bytes()
        except (OSError, ModuleNotFoundError):
            return None
        extension = posixpath.splitext(path)[1].lower()
        media = MEDIA_TYPES.get(extension, "application/octet-stream")
        return Asset(data, media, '"' + hashlib.sha1(data).hexdigest()[:20] + '"')


def asset_response(request: Request, asset: Asset, cache_control: str) -> Response:
    headers = {"ETag": asset.etag, "Cache-Control": cache_control}
    if asset.media_type.startswith("text/html"):
        headers["Content-Security-Policy"] = PAGE_CSP
    if request.headers.get("if-none-match") == asset.etag:
        return Response(status_code=304, headers=headers)
    return Response(asset.data, media_type=asset.media_type, headers=headers)


def _assets(request: Request) -> PackageAssets:
    return request.app.state.tea.assets


@endpoint("The web UI", tag="ui", auth=False, media_type="text/html")
async def index(request: Request) -> Response:
    asset = await blocking(_assets(request).get, "index.html")
    if asset is None:
        asset = Asset(PLACEHOLDER, MEDIA_TYPES[".html"], '"placeholder"')
    return asset_response(request, asset, "no-cache")


@endpoint(
    "A file of the web UI",
    tag="ui",
    auth=False,
    media_type="application/octet-stream",
    errors=(404,),
    description="ETag revalidation; files under vendor/ may be cached for a day.",
)
async def static_file(request: Request) -> Response:
    path = request.path_params["path"]
    asset = await blocking(_assets(request).get, path)
    if asset is None:
        raise ApiError(404, f"no static file {path!r}")
    cache = "public, max-age=86400" if path.startswith("vendor/") else "no-cache"
    return asset_response(request, asset, cache)


def routes() -> list[Route]:
    return [
        Route("/", index, methods=["GET"]),
        Route("/static/{path:path}", static_file, methods=["GET"]),
    ]
