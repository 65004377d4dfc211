"""JSON errors: ``ApiError`` for the routes to raise, and the handlers that render every error as
``{"error": {"message", "type", "code"}}`` (OpenAI's shape, so its client raises the right class).

Unexpected exceptions end in :class:`LastResort`, not in a Starlette ``Exception`` handler: that
one answers and then re-raises, and uvicorn closes the connection, so a keep-alive client lost
it after every 500.
"""

from __future__ import annotations

import logging
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..errors import TeaAgentError

log = logging.getLogger(__name__)

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    405: "invalid_request_error",
    409: "conflict_error",
    413: "request_too_large",
    415: "unsupported_media_type",
    421: "invalid_host",
    429: "rate_limit_error",
    499: "cancelled",
    500: "server_error",
    502: "upstream_error",
    503: "service_unavailable",
}


class ApiError(TeaAgentError):
    """An HTTP error with a message meant for the API user (never a secret or a traceback)."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type: str | None = None,
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type or ERROR_TYPES.get(status, "invalid_request_error")
        self.code = code
        self.headers = headers

    def body(self) -> dict[str, Any]:
        return error_body(self.message, self.type, self.code)

    def response(self) -> JSONResponse:
        return JSONResponse(self.body(), status_code=self.status, headers=self.headers)


def error_body(message: str, type: str, code: str | None = None) -> dict[str, Any]:
    # a message quoting the client's text must still encode as UTF-8
    message = message.encode("utf-8", "backslashreplace").decode("utf-8")
    return {"error": {"message": message, "type": type, "param": None, "code": code}}


def error_response(
    status: int, message: str, *, type: str | None = None, code: str | None = None
) -> JSONResponse:
    return ApiError(status, message, type=type, code=code).response()


def not_found(what: str, ident: str) -> ApiError:
    return ApiError(404, f"no {what} with id {ident!r}")


async def handle_api_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    return exc.response()


async def handle_http_exception(request: Request, exc: Exception) -> JSONResponse:
    """Starlette's own 404 / 405 as JSON errors."""
    assert isinstance(exc, HTTPException)
    status = exc.status_code
    message = {404: f"no route {request.url.path}", 405: "method not allowed"}.get(
        status, str(exc.detail)
    )
    headers = dict(exc.headers) if exc.headers else None
    return JSONResponse(
        error_body(message, ERROR_TYPES.get(status, "invalid_request_error")),
        status_code=status,
        headers=headers,
    )


async def handle_shutting_down(request: Request, exc: Exception) -> JSONResponse:
    return ApiError(503, str(exc) or "the server is shutting down").response()


EXCEPTION_HANDLERS: dict[Any, Any] = {
    ApiError: handle_api_error,
    HTTPException: handle_http_exception,
}


class LastResort:
    """The outermost handler of unexpected errors: logs the traceback and answers a JSON 500
    without details, leaving the connection open for the client's next request.

    A response that had begun but not ended (a stream that broke) cannot be turned into an
    error: the exception goes on to uvicorn, which closes the connection, so the client sees the
    stream cut rather than a clean end.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        progress = "waiting"

        async def tracking(message: Message) -> None:
            nonlocal progress
            if message["type"] == "http.response.start":
                progress = "started"
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                progress = "complete"
            await send(message)

        try:
            await self.app(scope, receive, tracking)
        except Exception as exc:
            if progress == "started":
                raise
            log.error("unhandled error on %s %s", scope["method"], scope["path"], exc_info=exc)
            if progress == "waiting":
                body = error_body("internal server error", "server_error")
                await JSONResponse(body, status_code=500)(scope, receive, send)
