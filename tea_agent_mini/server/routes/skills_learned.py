"""The skills the agent learned from its work (``<home>/skills/learned``) over REST: list, read
with the older versions, edit, promote to the user's own skills, delete.

The file work is ``evaluation/learned.py``'s, which the CLI's ``skills learned`` shares.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ...evaluation.learned import MAX_TEXT, LearnedSkillError, LearnedSkills
from ..api_errors import ApiError
from ..bodies import query_int, read_json
from ..paging import MAX_OFFSET, limit_of, page_json
from ..schemas import BOOL, INT, NUM, STR, nullable, obj, page_schema
from ..spec import endpoint
from ..state import blocking, state

if TYPE_CHECKING:
    from ...evaluation.learned import LearnedSkill, OldVersion

STATUS = {"invalid": 400, "missing": 404, "conflict": 409}
MAX_LIMIT = 500

SKILL_SCHEMA = obj(
    {
        "object": {"const": "learned_skill"},
        "name": STR,
        "description": STR,
        "version": INT,
        "score": {**nullable(INT), "description": "the quality (1-5) of the task it came from"},
        "learned_from": {**STR, "description": "the session it was learned from"},
        "learned_at": {**STR, "description": "the day (ISO date)"},
        "tools": {"type": "array", "items": STR},
        "modified": NUM,
        "problem": {**STR, "description": "why its SKILL.md cannot be read (empty: none)"},
        "uses": nullable(INT),
        "successes": nullable(INT),
        "failures": nullable(INT),
        "last_used": nullable(NUM),
        "retired": BOOL,
    },
    ("name", "description", "version"),
)
VERSION_SCHEMA = obj({"version": INT, "text": STR, "saved_at": NUM}, ("version", "text"))
DETAIL_SCHEMA = obj(
    {
        **SKILL_SCHEMA["properties"],
        "text": {**STR, "description": "the whole SKILL.md"},
        "versions": {"type": "array", "items": VERSION_SCHEMA, "description": "newest first"},
    },
    ("name", "text", "versions"),
)
EDIT_SCHEMA = obj({"text": {**STR, "maxLength": MAX_TEXT}}, ("text",))
PROMOTED_SCHEMA = obj(
    {"object": {"const": "learned_skill"}, "name": STR, "promoted": BOOL, "path": STR}
)
DELETED_SCHEMA = obj({"object": {"const": "learned_skill"}, "name": STR, "deleted": BOOL})


def skill_json(skill: LearnedSkill) -> dict[str, Any]:
    return {"object": "learned_skill", **skill.to_dict()}


def version_json(version: OldVersion) -> dict[str, Any]:
    return {"version": version.version, "text": version.text, "saved_at": version.saved_at}


def _skills(request: Request) -> LearnedSkills:
    runtime = state(request).runtime
    return LearnedSkills.of(runtime.config.home, runtime.store)


def _name(request: Request) -> str:
    return str(request.path_params["name"])


async def _run(func: Any, *args: Any) -> Any:
    try:
        return await blocking(func, *args)
    except LearnedSkillError as exc:
        raise ApiError(STATUS[exc.reason], str(exc)) from exc


def _detail(skills: LearnedSkills, name: str) -> dict[str, Any]:
    return {
        **skill_json(skills.get(name)),
        "text": skills.text(name),
        "versions": [version_json(v) for v in skills.versions(name)],
    }


@endpoint(
    "List the learned skills",
    tag="skills",
    query={"limit": f"int - at most {MAX_LIMIT} (default 100)", "offset": "int"},
    response=page_schema(SKILL_SCHEMA),
    errors=(400,),
    description=(
        "The skills crystallised from tasks that went well, by name, with their provenance and, "
        "where the store keeps them, how often each was used and how those turns ended."
    ),
)
async def list_learned(request: Request) -> JSONResponse:
    limit = limit_of(request, 100, MAX_LIMIT)
    offset = query_int(request, "offset", 0, maximum=MAX_OFFSET)
    found = await _run(_skills(request).all)
    page = found[offset : offset + limit]
    more = len(found) > offset + limit
    return JSONResponse(page_json([skill_json(skill) for skill in page], more))


@endpoint(
    "Get a learned skill",
    tag="skills",
    response=DETAIL_SCHEMA,
    errors=(400, 404),
    description="With its whole SKILL.md and the texts it had before (`versions`).",
)
async def get_learned(request: Request) -> JSONResponse:
    return JSONResponse(await _run(_detail, _skills(request), _name(request)))


@endpoint(
    "Edit a learned skill",
    tag="skills",
    body=EDIT_SCHEMA,
    response=DETAIL_SCHEMA,
    errors=(400, 404),
    description=(
        "`text` replaces its SKILL.md. It must parse as a skill with the same name (400 says "
        "why not, and nothing changes); the old text is kept as a version and the new one "
        "records the next version number."
    ),
)
async def edit_learned(request: Request) -> JSONResponse:
    body = await read_json(request)
    unknown = sorted(set(body.data) - {"text"})
    if unknown:
        raise ApiError(400, f"unknown field(s) {', '.join(unknown)}; expected text")
    text = body.text("text", required=True, max_length=MAX_TEXT)
    skills, name = _skills(request), _name(request)
    await _run(skills.edit, name, text)
    return JSONResponse(await _run(_detail, skills, name))


@endpoint(
    "Promote a learned skill to the user's own",
    tag="skills",
    response=PROMOTED_SCHEMA,
    errors=(400, 404, 409),
    description=(
        "Moves it to `<home>/skills/<name>/`: crystallisation no longer versions or replaces "
        "it. 409 when the user already has a skill folder of that name."
    ),
)
async def promote_learned(request: Request) -> JSONResponse:
    name = _name(request)
    path = await _run(_skills(request).promote, name)
    return JSONResponse(
        {"object": "learned_skill", "name": name, "promoted": True, "path": str(path)}
    )


@endpoint(
    "Delete a learned skill",
    tag="skills",
    response=DELETED_SCHEMA,
    errors=(400, 404),
    description="Its folder goes, older versions included.",
)
async def delete_learned(request: Request) -> JSONResponse:
    name = _name(request)
    await _run(_skills(request).delete, name)
    return JSONResponse({"object": "learned_skill", "name": name, "deleted": True})


def routes() -> list[Route]:
    return [
        Route("/v1/skills/learned", list_learned, methods=["GET"]),
        Route("/v1/skills/learned/{name}", get_learned, methods=["GET"]),
        Route("/v1/skills/learned/{name}", edit_learned, methods=["PUT"]),
        Route("/v1/skills/learned/{name}", delete_learned, methods=["DELETE"]),
        Route("/v1/skills/learned/{name}/promote", promote_learned, methods=["POST"]),
    ]
