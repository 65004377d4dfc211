"""Safe by default: who may talk to the server, from where, and how much.

A server that runs shell commands must not be drivable by a web page the user happens to visit:

* ``HostGuard`` checks the ``Host`` header against the names this server answers to, so a DNS
  rebinding page (``evil.example`` resolving to 127.0.0.1) is refused. IP literals are always
  fine: rebinding needs a name.
* ``RequestGuard`` asks for the API key on every ``/v1`` route (when one is set), refuses
  cross-origin state-changing requests (``Origin`` not matching ``Host``, or
  ``Sec-Fetch-Site: cross-site``) unless the origin is listed in ``server.cors_origins``, and caps
  body sizes. JSON routes additionally require ``application/json`` (see ``bodies.read_json``),
  which a cross-site form cannot send without a CORS preflight.

Both are plain ASGI middleware, so streamed responses pass through untouched.
"""

from __future__ import annotations

import hmac
import ipaddress
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .api_errors import ApiError

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
WILDCARD_HOSTS = frozenset({"", "0.0.0.0", "::"})
MIN_KEY_LENGTH = 16  # for a bind beyond loopback: a short token falls to guessing
BODY_LIMIT = 8 * 1024 * 1024
# Larger bodies where they make sense: a 20 MB file plus the multipart framing; chat requests
# whose messages carry images as data URLs.
BODY_LIMITS = {"/v1/uploads": 21 * 1024 * 1024, "/v1/chat/completions": 32 * 1024 * 1024}
SECURITY_HEADERS = [
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
]


def strip_brackets(host: str) -> str:
    return host[1:-1] if host.startswith("[") and host.endswith("]") else host


def access_key(*candidates: str | None) -> str | None:
    """The first key that is more than whitespace, stripped (a header value cannot carry the
    outer spaces, so such a key could never match); None when there is none."""
    for candidate in candidates:
        key = (candidate or "").strip()
        if key:
            return key
    return None


def bind_address(host: str) -> str:
    """What to bind: an IPv6 literal without its brackets (``[::1]`` -> ``::1``)."""
    return strip_brackets(host.strip())


def url_host(host: str) -> str:
    """``host`` as it goes into a URL: an IPv6 literal in exactly one pair of brackets."""
    address = bind_address(host)
    return f"[{address}]" if ":" in address else address


def is_loopback(host: str) -> bool:
    name = strip_brackets(host.strip().lower())
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def is_ip_literal(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def split_host(value: str) -> str:
    """``Host`` header value -> lower-case name without port or brackets."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else ""
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


@dataclass(frozen=True)
class SecurityPolicy:
    api_key: str | None = None
    allowed_hosts: frozenset[str] = LOOPBACK_NAMES
    any_host: bool = False
    cors_origins: frozenset[str] = frozenset()
    body_limit: int = BODY_LIMIT

    @classmethod
    def build(
        cls,
        *,
        api_key: str | None,
        bind_host: str = "127.0.0.1",
        allowed_hosts: list[str] | tuple[str, ...] = (),
        cors_origins: list[str] | tuple[str, ...] = (),
    ) -> SecurityPolicy:
        names = set(LOOPBACK_NAMES)
        bound = strip_brackets(bind_host.strip().lower())
        if bound not in WILDCARD_HOSTS:
            names.add(bound)
        names.update(strip_brackets(h.strip().lower()) for h in allowed_hosts if h.strip())
        return cls(
            api_key=api_key or None,
            allowed_hosts=frozenset(names - {"*"}),
            any_host="*" in names,
            cors_origins=frozenset(o.strip().rstrip("/").lower() for o in cors_origins if o),
        )

    def host_allowed(self, name: str) -> bool:
        if not name:
            return False
        if self.any_host or name in self.allowed_hosts or is_ip_literal(name):
            return True
        return name.endswith(".localhost")

    def key_matches(self, given: str) -> bool:
        assert self.api_key is not None
        return hmac.compare_digest(given.encode(), self.api_key.encode())


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers", [])}


async def _reject(scope: Scope, receive: Receive, send: Send, error: ApiError) -> None:
    response = JSONResponse(error.body(), status_code=error.status, headers=error.headers)
    await response(scope, receive, send)


class HostGuard:
    """Refuses requests whose ``Host`` is not one of ours; adds the security headers."""

    def __init__(self, app: ASGIApp, policy: SecurityPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = split_host(_headers(scope).get("host", ""))
        if not self.policy.host_allowed(host):
            error = ApiError(
                421,
                "this server does not answer to that Host name (see server.allowed_hosts)",
                type="invalid_host",
            )
            await _reject(scope, receive, send, error)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, send_with_headers)


class RequestGuard:
    """API key on ``/v1``, same-origin for state changes, body size caps."""

    def __init__(self, app: ASGIApp, policy: SecurityPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = _headers(scope)
        error = self.check(scope, headers)
        if error is not None:
            await _reject(scope, receive, send, error)
            return
        limit = self._limit(scope)
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            await _reject(
                scope, receive, send, ApiError(413, f"the body is larger than {limit} bytes")
            )
            return
        await self.app(scope, _limited(receive, limit), send)

    def check(self, scope: Scope, headers: dict[str, str]) -> ApiError | None:
        path = scope.get("path", "")
        guarded = path == "/v1" or path.startswith("/v1/")
        if self.policy.api_key and guarded and not self.policy.key_matches(_given_key(headers)):
            return ApiError(
                401,
                "missing or wrong API key: send 'Authorization: Bearer <key>' or 'X-API-Key'",
                headers={"WWW-Authenticate": "Bearer"},
            )
        if scope.get("method", "GET") not in SAFE_METHODS:
            return self._cross_origin(headers)
        return None

    def _cross_origin(self, headers: dict[str, str]) -> ApiError | None:
        origin = headers.get("origin", "").strip().rstrip("/").lower()
        if origin and origin in self.policy.cors_origins:
            return None
        shown = f" from {origin[:200]}" if origin else ""
        refused = ApiError(
            403,
            f"cross-origin requests that change state are not allowed{shown}; to allow a web "
            "page on another origin, list it in server.cors_origins (e.g. "
            "cors_origins: ['http://localhost:3000']) and restart the server",
        )
        if headers.get("sec-fetch-site", "").lower() == "cross-site":
            return refused
        if origin and not _same_origin(origin, headers.get("host", "")):
            return refused
        return None

    def _limit(self, scope: Scope) -> int:
        return BODY_LIMITS.get(scope.get("path", ""), self.policy.body_limit)


def _given_key(headers: dict[str, str]) -> str:
    auth = headers.get("authorization", "")
    scheme, _, token = auth.partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    return headers.get("x-api-key", "").strip()


def _same_origin(origin: str, host_header: str) -> bool:
    """``Origin`` (scheme://host[:port]) names the same host and port as ``Host``."""
    if origin == "null":
        return False
    parts = urlsplit(origin)
    default = {"http": "80", "https": "443"}.get(parts.scheme, "")
    netloc = parts.netloc
    host = host_header.strip().lower()
    return _drop_port(netloc, default) == _drop_port(host, default)


def _drop_port(netloc: str, default: str) -> str:
    return netloc[: -len(default) - 1] if default and netloc.endswith(f":{default}") else netloc


def _limited(receive: Receive, limit: int) -> Receive:
    """``receive`` that raises a 413 ApiError inside the route once the body passes ``limit``."""
    total = 0

    async def wrapped() -> Any:
        nonlocal total
        message = await receive()
        if message["type"] == "http.request":
            total += len(message.get("body", b""))
            if total > limit:
                raise ApiError(413, f"the body is larger than {limit} bytes")
        return message

    return wrapped


def cors_middleware_options(origins: frozenset[str]) -> dict[str, Any]:
    return {
        "allow_origins": sorted(origins),
        "allow_methods": ["GET", "POST", "PUT", "PATCH", "DELETE"],
        "allow_headers": ["Authorization", "Content-Type", "X-API-Key", "Last-Event-ID"],
        "expose_headers": ["X-Session-Id"],
    }


__all__ = [
    "HostGuard",
    "RequestGuard",
    "SecurityPolicy",
    "cors_middleware_options",
    "is_loopback",
]
