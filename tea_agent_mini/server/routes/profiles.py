"""Profiles: ``<home>/<name>.yaml`` files. List them, create one from JSON or an uploaded YAML.

A profile is validated with ``config_from_dict`` (and the same checks as loading) before it is
written; names are plain words, never paths. Files are written with mode 0600: they hold keys.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ...config import (
    DEFAULT_PROFILE,
    config_from_dict,
    list_profiles,
    normalise,
    profile_path,
    read_yaml,
)
from ...errors import ConfigError
from ...private import private_dirs
from ...redact import mask_url
from ..api_errors import ApiError
from ..bodies import Fields, check_values, is_json_type, media_type, read_json
from ..spec import endpoint
from ..state import ServerState, blocking, state

YAML_LIMIT = 256 * 1024


def _profile_entry(name: str, home: Path, active: str) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": name, "active": name == active}
    try:
        config = config_from_dict(read_yaml(profile_path(name, home)), where=name)
        model = config.main_model
        entry.update(model_name=model.model_name, api_url=mask_url(model.api_url))
    except ConfigError as exc:
        entry["error"] = str(exc)
    return entry


def _list(st: ServerState) -> dict[str, Any]:
    config = st.runtime.config
    names = list_profiles(config.home)
    data = [_profile_entry(name, config.home, config.profile) for name in names]
    if config.profile not in names:
        data.insert(0, {"name": config.profile, "active": True, "file": False})
    return {"object": "list", "active": config.profile, "data": data}


@endpoint("Profiles in the home directory", tag="config", response="ProfileList")
async def list_profile_files(request: Request) -> JSONResponse:
    return JSONResponse(await blocking(_list, state(request)))


@endpoint(
    "Create a profile",
    tag="config",
    body="ProfileCreate",
    body_types=("application/json", "multipart/form-data"),
    response="ProfileCreated",
    status=201,
    errors=(409, 413, 415),
    description=(
        "JSON `{name, config, overwrite}`, or multipart with a `name` field and a YAML `file`. "
        "Validated before it is saved; an existing profile needs `overwrite: true`."
    ),
)
async def create_profile(request: Request) -> JSONResponse:
    st = state(request)
    if is_json_type(media_type(request)):
        body = await read_json(request)
        name = body.text("name", required=True, max_length=64)
        data = body.nested("config", required=True).data
        overwrite = body.flag("overwrite")
    elif media_type(request) == "multipart/form-data":
        name, data, overwrite = await _read_form(request)
    else:
        raise ApiError(415, "send JSON (application/json) or a YAML file (multipart/form-data)")
    saved = await blocking(save_profile, st.runtime.config.home, name, data, overwrite)
    return JSONResponse(
        {"name": name, "model_name": saved.main_model.model_name, "created": True},
        status_code=201,
    )


async def _read_form(request: Request) -> tuple[str, dict[str, Any], bool]:
    import yaml

    async with request.form(max_files=1, max_fields=5) as form:
        upload = form.get("file")
        if upload is None or isinstance(upload, str):
            raise ApiError(400, "multipart field 'file' (the YAML profile) is required")
        raw = await upload.read(YAML_LIMIT + 1)
        fields = Fields({k: v for k, v in form.items() if isinstance(v, str)})
        name = fields.text("name") or Path(upload.filename or "").stem
        overwrite = fields.text("overwrite", "") in ("1", "true", "yes")
    if len(raw) > YAML_LIMIT:
        raise ApiError(413, f"the YAML file is larger than {YAML_LIMIT} bytes")
    try:
        data = yaml.safe_load(raw.decode("utf-8")) or {}
    except RecursionError as exc:  # the YAML composer recurses once per level
        raise ApiError(400, "the YAML file nests too deeply") from exc
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise ApiError(400, f"the file is not valid UTF-8 YAML: {exc.__class__.__name__}") from exc
    if not isinstance(data, dict):
        raise ApiError(400, "the YAML file must be a mapping of sections")
    check_values(data)
    return name, data, overwrite


def save_profile(home: Path, name: str, data: dict[str, Any], overwrite: bool) -> Any:
    """Validate and write ``<home>/<name>.yaml`` (blocking). Returns the parsed Config."""
    import yaml

    if not name:
        raise ApiError(400, "field 'name' is required (the profile name)")
    try:
        path = profile_path(name, home)
        config = config_from_dict(data, where=f"profile {name!r}")
        config.source = path
        normalise(config)
    except ConfigError as exc:
        raise ApiError(400, str(exc)) from exc
    if path.exists() and not overwrite:
        shown = "config.yaml" if name == DEFAULT_PROFILE else f"{name}.yaml"
        raise ApiError(
            409, f"profile {name!r} exists ({shown}); send overwrite: true to replace it"
        )
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    private_dirs(home)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(temporary, path)
    return config


def routes() -> list[Route]:
    return [
        Route("/v1/profiles", list_profile_files, methods=["GET"]),
        Route("/v1/profiles", create_profile, methods=["POST"]),
    ]
