"""The active configuration: read it (secrets masked), change runtime keys, switch profile.

Server settings (host, port, API key, allowed hosts, CORS) are fixed when the server starts and
never change through the API; neither do the workspace, its confinement
(``agent.allow_outside_workspace``), ``agent.allow_private_fetch`` and the MCP servers: a profile
switch (or a chat naming a profile) keeps the ones the server started with, whatever the profile
says (see ``RuntimePool.load``).
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ...config import APPROVAL_MODES, Config, config_from_dict, config_to_dict
from ...errors import ConfigError
from ...redact import MASK
from ..api_errors import ApiError
from ..bodies import Fields, read_json
from ..spec import endpoint
from ..state import ServerState, blocking, state

RUNTIME_KEYS: dict[str, tuple[str, ...]] = {
    "agent": ("max_iterations", "approval", "exec_timeout", "tool_output_limit"),
    "main_model": ("temperature", "max_tokens"),
    "cheap_model": ("temperature", "max_tokens"),
}


def masked_config(config: Config) -> dict[str, Any]:
    data = config_to_dict(config, mask=True)
    data["server"]["api_key"] = MASK if config.server.api_key else ""
    return data


def config_json(st: ServerState) -> dict[str, Any]:
    config = st.runtime.config
    return {
        "profile": config.profile,
        "model_configured": config.main_model.is_set,
        "auth_required": st.api_key is not None,
        "workspace": str(config.workspace),
        "config": masked_config(config),
        "runtime_keys": {section: list(keys) for section, keys in RUNTIME_KEYS.items()},
    }


@endpoint("The active configuration (secrets masked)", tag="config", response="ConfigView")
async def get_config(request: Request) -> JSONResponse:
    return JSONResponse(config_json(state(request)))


@endpoint(
    "Change runtime settings",
    tag="config",
    body="ConfigPatch",
    response="ConfigView",
    description=(
        "Only the keys listed in `runtime_keys` (e.g. `agent.max_iterations`, "
        "`agent.approval`, `main_model.temperature`); all are checked before any is applied. "
        "Changes last until the server stops or switches profile."
    ),
)
async def patch_config(request: Request) -> JSONResponse:
    st = state(request)
    body = await read_json(request)
    changes = validate_patch(body)
    config = st.runtime.config
    for section, values in changes.items():
        target = getattr(config, section)
        for key, value in values.items():
            setattr(target, key, value)
    return JSONResponse(config_json(st))


def validate_patch(body: Fields) -> dict[str, dict[str, Any]]:
    if not body.data:
        raise ApiError(400, 'nothing to change: send e.g. {"agent": {"max_iterations": 20}}')
    raw: dict[str, dict[str, Any]] = {}
    for section, values in body.data.items():
        allowed = RUNTIME_KEYS.get(section)
        if allowed is None:
            raise ApiError(400, f"section {section!r} cannot change at runtime; {_allowed()}")
        values = body.nested(section).data
        for key in values:
            if key not in allowed:
                raise ApiError(400, f"{section}.{key} cannot change at runtime; {_allowed()}")
        raw[section] = values
    try:
        parsed = config_from_dict(raw, where="PATCH /v1/config")
    except ConfigError as exc:
        raise ApiError(400, str(exc)) from exc
    changes = {s: {k: getattr(getattr(parsed, s), k) for k in v} for s, v in raw.items()}
    for section, values in changes.items():
        for key, value in values.items():
            _check_range(f"{section}.{key}", key, value)
    return changes


def _allowed() -> str:
    keys = [f"{s}.{k}" for s, names in RUNTIME_KEYS.items() for k in names]
    return "expected one of " + ", ".join(keys)


def _check_range(label: str, key: str, value: Any) -> None:
    problem = None
    if key == "approval" and value not in APPROVAL_MODES:
        problem = f"one of {', '.join(APPROVAL_MODES)}"
    elif key == "max_iterations" and not 1 <= value <= 1000:
        problem = "1-1000"
    elif key == "exec_timeout" and not 0 < value <= 86_400:
        problem = "a number of seconds above 0"
    elif key == "tool_output_limit" and not 1024 <= value <= 64 * 1024 * 1024:
        problem = "1024-67108864 bytes"
    elif key == "temperature" and value is not None and not 0 <= value <= 2:
        problem = "0-2 or null"
    elif key == "max_tokens" and value is not None and value < 1:
        problem = "a positive integer or null"
    if problem:
        raise ApiError(400, f"{label}: expected {problem}, got {value!r}")


@endpoint(
    "Switch the active profile",
    tag="config",
    body="ProfileSwitch",
    response="ConfigView",
    errors=(404, 409),
    description=(
        "Refused (409) while a turn is running or messages are queued. The workspace, its "
        "confinement, private fetches and the MCP servers stay those the server started with."
    ),
)
async def switch_profile(request: Request) -> JSONResponse:
    st = state(request)
    body = await read_json(request)
    name = body.text("profile", required=True, max_length=64)
    try:
        await blocking(st.pool.check_profile, name)
        config = await blocking(st.pool.load, name)
    except LookupError as exc:
        raise ApiError(404, str(exc)) from exc
    except ConfigError as exc:
        raise ApiError(400, str(exc)) from exc
    if st.turns.any_busy():
        raise ApiError(409, "a turn is running or queued; switch profiles when it has finished")
    await st.pool.switch(config)
    return JSONResponse(config_json(st))


def routes() -> list[Route]:
    return [
        Route("/v1/config", get_config, methods=["GET"]),
        Route("/v1/config", patch_config, methods=["PATCH"]),
        Route("/v1/config/switch", switch_profile, methods=["POST"]),
    ]
