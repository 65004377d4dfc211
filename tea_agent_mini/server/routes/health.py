"""``GET /health``: cheap, unauthenticated liveness and version."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ..._version import __version__
from ..spec import endpoint


@endpoint("Liveness and version", tag="health", auth=False, response="Health")
async def health(request: Request) -> JSONResponse:
    return JSONResponse({"status": "ok", "version": __version__})


def routes() -> list[Route]:
    return [Route("/health", health, methods=["GET"])]
