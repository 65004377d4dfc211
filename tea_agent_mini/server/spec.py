"""Route metadata for the OpenAPI document: each endpoint function carries an ``EndpointSpec``.

    @endpoint("List sessions", tag="sessions", query={"limit": "int"}, response="SessionList")
    async def list_sessions(request): ...

Schemas are JSON-Schema dicts or names of components in :mod:`schemas`; ``openapi.py`` turns the
specs of the registered routes into the document, so an undocumented route cannot be added.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

SchemaRef = str | dict[str, Any]
"""A component name (``"Session"``) or an inline JSON schema."""

QUERY_TYPES = {"int": {"type": "integer"}, "str": {"type": "string"}, "bool": {"type": "boolean"}}


@dataclass(frozen=True)
class EndpointSpec:
    summary: str
    tag: str
    description: str = ""
    body: SchemaRef | None = None
    body_types: tuple[str, ...] = ("application/json",)
    query: Mapping[str, str] = field(default_factory=dict)
    response: SchemaRef | None = None
    status: int = 200
    media_type: str = "application/json"
    errors: tuple[int, ...] = ()
    auth: bool = True
    headers: Mapping[str, str] = field(default_factory=dict)


def endpoint(
    summary: str,
    *,
    tag: str,
    description: str = "",
    body: SchemaRef | None = None,
    body_types: tuple[str, ...] = ("application/json",),
    query: Mapping[str, str] | None = None,
    response: SchemaRef | None = None,
    status: int = 200,
    media_type: str = "application/json",
    errors: tuple[int, ...] = (),
    auth: bool = True,
    headers: Mapping[str, str] | None = None,
) -> Callable[[F], F]:
    """Attach an :class:`EndpointSpec` to a route function (which is returned unchanged).

    ``query`` maps parameter names to ``"int"``, ``"str"`` or ``"bool"`` (append ``" - text"``
    for a description); ``headers`` documents response headers by name and description.
    """
    spec = EndpointSpec(
        summary=summary,
        tag=tag,
        description=description,
        body=body,
        body_types=body_types,
        query=dict(query or {}),
        response=response,
        status=status,
        media_type=media_type,
        errors=errors,
        auth=auth,
        headers=dict(headers or {}),
    )

    def attach(func: F) -> F:
        func.endpoint_spec = spec  # type: ignore[attr-defined]  # a function takes attributes
        return func

    return attach


def spec_of(func: Any) -> EndpointSpec | None:
    spec = getattr(func, "endpoint_spec", None)
    return spec if isinstance(spec, EndpointSpec) else None
