"""The OpenAPI 3.1 document, generated from the registered routes and their ``EndpointSpec``s,
plus ``GET /docs``, a page that renders it without loading anything from the network."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse
from starlette.routing import BaseRoute, Route

from .._version import __version__
from ..errors import TeaAgentError
from .docs_page import DOCS_CSP, DOCS_HTML
from .schemas import SCHEMAS, STR, ref
from .spec import QUERY_TYPES, EndpointSpec, endpoint, spec_of

TAGS = {
    "health": "Liveness",
    "openai": "OpenAI-compatible chat",
    "models": "Models and profiles",
    "sessions": "Stored sessions and their messages",
    "turns": "Running turns: send, stream, re-attach, queue, abort",
    "tools": "The agent's tools",
    "config": "Configuration and profiles",
    "uploads": "Files to attach to messages",
    "search": "Search",
    "memory": "Long-term memories",
    "tasks": "Scheduled tasks and their runs",
    "notices": "Notices tools and scheduled tasks saved for the user",
    "export": "Sessions exported as Markdown or PDF",
    "flows": "Runs of flows and workflows, with their traces (read-only)",
    "team": "Teammates that stay, and the messages between them and the lead",
    "evaluations": "How finished tasks went (evaluations, the user's feedback), lessons learned",
    "prompts": "Versions of the agent's guidelines: set, evolve, accept, roll back",
    "skills": "Skills learned from work: review, edit, promote to your own, delete",
    "ui": "The web UI",
    "docs": "This documentation",
}
REASONS = {
    200: "OK",
    201: "Created",
    400: "Bad request (malformed JSON, wrong types, missing fields)",
    401: "Missing or wrong API key",
    403: "Refused (cross-origin, or not allowed by the approval policy)",
    404: "Not found",
    409: "Conflict",
    413: "Body too large",
    415: "Unsupported content type",
    422: "The model's answer could not be used",
    429: "The model provider is rate limiting",
    499: "The turn was stopped",
    502: "The model provider failed",
    503: "No model configured",
}


class UndocumentedRoute(TeaAgentError, LookupError):
    """A registered route whose endpoint has no ``@endpoint`` spec."""


def build_openapi(routes: Iterable[BaseRoute]) -> dict[str, Any]:
    paths: dict[str, dict[str, Any]] = {}
    for route in routes:
        if not isinstance(route, Route):
            continue
        spec = spec_of(route.endpoint)
        if spec is None:
            raise UndocumentedRoute(f"{route.path} has no @endpoint spec")
        for method in sorted((route.methods or {"GET"}) - {"HEAD"}):
            paths.setdefault(route.path_format, {})[method.lower()] = _operation(
                route, method, spec
            )
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "tea-agent-mini",
            "version": __version__,
            "description": (
                "A small AI agent server. `/v1` routes need `Authorization: Bearer <key>` or "
                "`X-API-Key` when the server has an API key. State-changing requests from "
                "other origins are refused."
            ),
        },
        "tags": [{"name": name, "description": text} for name, text in TAGS.items()],
        "paths": paths,
        "components": {
            "schemas": SCHEMAS,
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "apiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
            },
        },
    }


def _schema(value: Any) -> dict[str, Any]:
    return ref(value) if isinstance(value, str) else value


def _operation(route: Route, method: str, spec: EndpointSpec) -> dict[str, Any]:
    operation: dict[str, Any] = {
        "operationId": route.endpoint.__name__,
        "summary": spec.summary,
        "tags": [spec.tag],
        "responses": _responses(spec, method),
        "security": [{"bearer": []}, {"apiKey": []}] if spec.auth else [],
    }
    if spec.description:
        operation["description"] = spec.description
    parameters = [
        {"name": name, "in": "path", "required": True, "schema": STR}
        for name in route.param_convertors
    ]
    for name, text in spec.query.items():
        kind, _, description = text.partition(" - ")
        parameter = {"name": name, "in": "query", "required": False, "schema": QUERY_TYPES[kind]}
        if description:
            parameter["description"] = description
        parameters.append(parameter)
    if parameters:
        operation["parameters"] = parameters
    if spec.body is not None:
        schema = _schema(spec.body)
        operation["requestBody"] = {
            "required": True,
            "content": {media: {"schema": schema} for media in spec.body_types},
        }
    return operation


def _responses(spec: EndpointSpec, method: str) -> dict[str, Any]:
    success: dict[str, Any] = {"description": REASONS.get(spec.status, "OK")}
    if spec.response is not None:
        success["content"] = {spec.media_type: {"schema": _schema(spec.response)}}
    elif spec.media_type != "application/json":
        success["content"] = {spec.media_type: {}}
    if spec.headers:
        success["headers"] = {
            name: {"description": text, "schema": STR} for name, text in spec.headers.items()
        }
    responses: dict[str, Any] = {str(spec.status): success}
    errors = set(spec.errors)
    if spec.body is not None:
        errors |= {400, 413, 415}
    if spec.auth:
        errors |= {401}
    if method != "GET":
        errors |= {403}  # cross-origin state changes
    for status in sorted(errors):
        responses[str(status)] = {
            "description": REASONS.get(status, "Error"),
            "content": {"application/json": {"schema": ref("Error")}},
        }
    return responses


@endpoint("This API as an OpenAPI 3.1 document", tag="docs", auth=False)
async def openapi_json(request: Request) -> JSONResponse:
    cache = request.app.state.tea.cache
    if "openapi" not in cache:
        cache["openapi"] = build_openapi(request.app.routes)
    return JSONResponse(cache["openapi"])


@endpoint("API documentation page (works offline)", tag="docs", auth=False, media_type="text/html")
async def docs_page(request: Request) -> HTMLResponse:
    return HTMLResponse(DOCS_HTML, headers={"Content-Security-Policy": DOCS_CSP})


def routes() -> list[Route]:
    return [
        Route("/openapi.json", openapi_json, methods=["GET"]),
        Route("/docs", docs_page, methods=["GET"]),
    ]
