"""``GET /v1/models`` and ``/v1/models/{id}``: the OpenAI model list and one model of it: the
main and cheap models and the profiles.

A profile appears as ``profile:<name>``; sending that as ``model`` in a chat request runs the
turn with that profile (the same as the ``profile`` field).
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ...config import list_profiles
from ..api_errors import ApiError
from ..spec import endpoint
from ..state import blocking, state

PROFILE_PREFIX = "profile:"


def model_entry(model_id: str, kind: str, profile: str) -> dict[str, Any]:
    return {
        "id": model_id,
        "object": "model",
        "created": 0,
        "owned_by": "tea-agent-mini",
        "tea_agent": {"kind": kind, "profile": profile},
    }


async def _models(request: Request) -> list[dict[str, Any]]:
    config = state(request).runtime.config
    data = []
    main = config.main_model.model_name
    cheap = config.cheap_model.model_name
    if main:
        data.append(model_entry(main, "main", config.profile))
    if cheap and cheap != main:
        data.append(model_entry(cheap, "cheap", config.profile))
    for name in await blocking(list_profiles, config.home):
        data.append(model_entry(PROFILE_PREFIX + name, "profile", name))
    return data


@endpoint("Models and profiles (OpenAI list)", tag="models", response="ModelList")
async def list_models(request: Request) -> JSONResponse:
    return JSONResponse({"object": "list", "data": await _models(request)})


@endpoint("One model or profile (OpenAI retrieve)", tag="models", response="Model", errors=(404,))
async def get_model(request: Request) -> JSONResponse:
    model_id = request.path_params["id"]
    for entry in await _models(request):
        if entry["id"] == model_id:
            return JSONResponse(entry)
    raise ApiError(404, f"no model with id {model_id!r}", code="model_not_found")


def routes() -> list[Route]:
    return [
        Route("/v1/models", list_models, methods=["GET"]),
        # model names may hold slashes (org/model)
        Route("/v1/models/{id:path}", get_model, methods=["GET"]),
    ]
