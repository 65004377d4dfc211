"""``POST /v1/profiles/test``: try a model endpoint before a profile is saved (like a connection
test in other chat UIs): ``GET {api_url}/models`` once, with a short timeout.

The answer is 200 whenever the test ran: ``ok`` with the endpoint's model ids, or ``ok: false``
with a ``reason`` (see ``llm/probe.py``, plus ``this_server`` when api_url is this very server)
and an ``error`` to show. The key is never sent back or logged. Editing a profile, the key is
left out of the form; naming the ``profile`` then uses its stored key and headers, but only
for the address they were configured for (same scheme, host and port), so they never go to a
new host.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ...config import ModelConfig, load_config
from ...errors import ConfigError
from ...redact import mask_url
from ..api_errors import ApiError
from ..bodies import read_json
from ..security import is_loopback
from ..spec import endpoint
from ..state import blocking, state

URL_LIMIT = 2000
KEY_TEXT = re.compile(r"[!-~]+")
DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin(url: str) -> tuple[str, str, int | None] | None:
    try:
        parts = urlsplit(url.strip())
        port = parts.port or DEFAULT_PORTS.get(parts.scheme.lower())
    except ValueError:
        return None
    return parts.scheme.lower(), (parts.hostname or "").lower(), port


def _stored_model(profile: str, home: Any, api_url: str) -> ModelConfig | None:
    """The profile's main model when it is configured for the same origin as ``api_url``."""
    try:
        stored = load_config(profile, home=home).main_model
    except ConfigError:
        return None
    if _origin(stored.api_url) != _origin(api_url):
        return None
    return stored


def is_this_server(request: Request, api_url: str) -> bool:
    """Whether ``api_url`` addresses the socket this request came in on."""
    origin = _origin(api_url)
    server = request.scope.get("server")
    if origin is None or not server:
        return False
    _, host, port = origin
    bound_host, bound_port = server[0], server[1]
    if port != bound_port:
        return False
    return is_loopback(host) or host == str(bound_host).lower() or host == request.url.hostname


@endpoint(
    "Test a model endpoint",
    tag="config",
    body="ConnectionTest",
    response="ConnectionResult",
    description=(
        "GET `{api_url}/models` once with a short timeout. 200 whenever the test ran: `ok` "
        "with the model ids, or a `reason` (`invalid_url`, `unreachable`, `wrong_key`, "
        "`not_openai`, `tea_agent`, `this_server`, `error`) and an `error` to show. With "
        "`profile` and no `api_key`, that profile's stored key is used if `api_url` has the "
        "same scheme, host and port as the stored one."
    ),
)
async def check_connection(request: Request) -> JSONResponse:
    from ...llm.probe import ProbeResult, probe_endpoint

    st = state(request)
    body = await read_json(request)
    api_url = body.text("api_url", required=True, max_length=URL_LIMIT).strip()
    api_key = body.text("api_key", max_length=URL_LIMIT)
    profile = body.text("profile", max_length=64)
    api_key = api_key.strip() if api_key is not None else None
    if api_key and not KEY_TEXT.fullmatch(api_key):
        # it goes into a header: printable ASCII only
        raise ApiError(400, "field 'api_key': expected printable ASCII without spaces")
    model = ModelConfig(api_url=api_url, api_key=api_key or "")
    if profile and api_key is None:
        stored = await blocking(_stored_model, profile, st.runtime.config.home, api_url)
        if stored is not None:
            model = ModelConfig(
                api_url=api_url, api_key=stored.api_key, extra_headers=stored.extra_headers
            )
    if is_this_server(request, api_url):
        result = ProbeResult(
            False,
            reason="this_server",
            error=f"{mask_url(api_url)} is this tea-agent-mini server, not a model server; "
            "point api_url at the model server (llama.cpp, Ollama, vLLM, a cloud API)",
        )
    else:
        result = await probe_endpoint(model)
    return JSONResponse(
        {
            "ok": result.ok,
            "api_url": mask_url(api_url),
            "models": result.models,
            "reason": result.reason or None,
            "error": result.error or None,
            "status": result.status,
        }
    )


def routes() -> list[Route]:
    return [Route("/v1/profiles/test", check_connection, methods=["POST"])]
