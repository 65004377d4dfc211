"""Profiles: ``<home>/<name>.yaml`` files. List them, create one from JSON or an uploaded YAML,
read one (secrets masked) and change one (a JSON merge patch: only what is sent changes).

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
    ALIASES,
    DEFAULT_PROFILE,
    config_from_dict,
    config_to_dict,
    list_profiles,
    normalise,
    profile_path,
    read_yaml,
)
from ...errors import ConfigError
from ...home_sync import share_files
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
    await blocking(share_profile, st, name)
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


def _stored(home: Path, name: str) -> tuple[Path, dict[str, Any]]:
    """The profile's file and its YAML as written (``${VAR}`` templates kept)."""
    try:
        path = profile_path(name, home)
    except ConfigError as exc:
        raise ApiError(400, str(exc)) from exc
    if not path.is_file():
        raise ApiError(404, f"no profile file named {name!r}")
    try:
        return path, read_yaml(path)
    except ConfigError as exc:
        raise ApiError(409, str(exc)) from exc


def _detail(st: ServerState, name: str) -> dict[str, Any]:
    home = st.runtime.config.home
    _, data = _stored(home, name)
    entry = _profile_entry(name, home, st.runtime.config.profile)
    try:
        entry["config"] = config_to_dict(config_from_dict(data, where=name), mask=True)
    except ConfigError:
        entry["config"] = None  # the entry says what is wrong
    return entry


@endpoint(
    "One profile (secrets masked)",
    tag="config",
    response="ProfileDetail",
    errors=(404,),
    description="The file's own settings, keys showing their last four characters at most.",
)
async def get_profile(request: Request) -> JSONResponse:
    return JSONResponse(await blocking(_detail, state(request), request.path_params["name"]))


@endpoint(
    "Change a profile",
    tag="config",
    body="ProfilePatch",
    response="ProfileDetail",
    errors=(404, 409),
    description=(
        "`config` is a JSON merge patch of the file: only the keys sent change, `null` removes "
        "a key, so a key left out (`api_key`) is kept. Validated before it is saved; comments "
        "in the file are not kept. The active profile is reloaded at once. Refused (409) "
        "while a turn is running or messages are queued."
    ),
)
async def patch_profile(request: Request) -> JSONResponse:
    st = state(request)
    name = request.path_params["name"]
    body = await read_json(request)
    patch = body.nested("config", required=True).data
    if not patch:
        raise ApiError(400, 'nothing to change: send e.g. {"config": {"main_model": {...}}}')
    if st.turns.any_busy():
        raise ApiError(409, "a turn is running or queued; change profiles when it has finished")
    home = st.runtime.config.home
    _, data = await blocking(_stored, home, name)
    merged = merge_patch(_canonical(data), _canonical(patch))
    await blocking(save_profile, home, name, merged, True)
    await blocking(share_profile, st, name)
    await reload_profile(st, name)
    return JSONResponse(await blocking(_detail, st, name))


def share_profile(st: ServerState, name: str) -> None:
    """The saved file reaches the other instances on the same PostgreSQL at their next turn
    (``home_sync.catch_up``); nothing happens on SQLite."""
    share_files(st.runtime, [st.runtime.profile_file(name)], "config")


async def reload_profile(st: ServerState, name: str) -> None:
    """Make a changed profile's file count: the active one is loaded again, another one's
    runtime (built when a request named it) is dropped."""
    if name == st.runtime.config.profile:
        try:
            config = await blocking(st.pool.load, name)
        except ConfigError as exc:
            raise ApiError(400, str(exc)) from exc
        await st.pool.switch(config)
    else:
        await st.pool.forget(name)


def _canonical(data: dict[str, Any]) -> dict[str, Any]:
    """Section names as the loader reads them (``embedding_model`` is ``embedding``), so a
    patch and the file name a section the same way."""
    return {ALIASES.get(str(key), str(key)): value for key, value in data.items()}


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge key by key, ``None`` removes a key, anything else replaces."""
    if not isinstance(patch, dict):
        return patch
    merged = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            merged.pop(key, None)
        else:
            merged[key] = merge_patch(merged.get(key), value)
    return merged


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
        Route("/v1/profiles/{name}", get_profile, methods=["GET"]),
        Route("/v1/profiles/{name}", patch_profile, methods=["PATCH"]),
    ]
