"""Versions of the agent's guidelines over REST (prompt evolution): the list with each version's
turns and how they ended, one version with its diff, set, evolve, accept, rollback.

Every call goes to the active runtime's ``PromptVersions`` (``Runtime.prompts``), as
``toolkit_prompt_evolve`` does. A change applies from the next turn of every session.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ...context.guidelines import LIMITS, PromptVersionError
from ...errors import ConfigError, LLMError
from ...store.prompts import TurnOutcomes
from ..api_errors import ApiError
from ..bodies import Fields, media_type, path_id, query_int, read_json, read_limited
from ..paging import MAX_OFFSET, limit_of, page_json
from ..schemas import BOOL, INT, NUM, STR, nullable, obj, page_schema
from ..spec import endpoint
from ..state import blocking, state

if TYPE_CHECKING:
    from ...context.prompt_versions import PromptVersions
    from ...store.prompts import PromptVersion

NOTE_LIMIT = 500
TEXT_LIMIT = max(LIMITS.values()) * 2  # longer cannot be a version; the check says why
STATUS = {"invalid": 400, "missing": 404, "conflict": 409}

TURNS_SCHEMA = obj(
    {"total": INT, "completed": INT, "stopped": INT, "failed": INT, "unknown": INT},
    description="the turns that ran with this version, by how they ended",
)
VERSION_SCHEMA = obj(
    {
        "object": {"const": "prompt_version"},
        "version": {**INT, "description": "0 is the built-in text"},
        "status": {"enum": ["proposed", "active", "retired"]},
        "source": {"enum": ["builtin", "user", "evolved"]},
        "parent": {**nullable(INT), "description": "the version this one was made from"},
        "note": STR,
        "text": STR,
        "created_at": NUM,
        "activated_at": nullable(NUM),
        "in_use": {**BOOL, "description": "the next turn's system prompt carries it"},
        "turns": TURNS_SCHEMA,
    },
    ("version", "status", "text", "in_use"),
)
VERSION_DETAIL = obj(
    {**VERSION_SCHEMA["properties"], "diff": {**STR, "description": "from its parent"}},
    ("version", "status", "text", "diff"),
)
PROMPT_LIST = page_schema(VERSION_SCHEMA, current=VERSION_SCHEMA)
PROMPT_SET = obj({"text": STR, "note": STR}, ("text",))
PROMPT_EVOLVE = obj({"note": STR})
PROMPT_ROLLBACK = obj({"to": {**INT, "minimum": 0, "description": "default: the parent"}})
PROPOSAL = obj(
    {
        "object": {"const": "prompt_proposal"},
        "proposal": VERSION_SCHEMA,
        "base": {**INT, "description": "the version it revises"},
        "diff": STR,
        "evidence": {"type": "object", "additionalProperties": INT},
        "summary": STR,
    }
)


def version_json(
    version: PromptVersion, outcomes: TurnOutcomes | None, in_use: int
) -> dict[str, Any]:
    tally = outcomes or TurnOutcomes()  # None: no turn ran with it
    return {
        "object": "prompt_version",
        "version": version.version,
        "status": version.status,
        "source": version.source,
        "parent": version.parent,
        "note": version.note,
        "text": version.text,
        "created_at": version.created_at,
        "activated_at": version.activated_at,
        "in_use": version.version == in_use,
        "turns": {
            "total": tally.turns,
            "completed": tally.completed,
            "stopped": tally.stopped,
            "failed": tally.failed,
            "unknown": tally.unknown,
        },
    }


def _api_error(exc: PromptVersionError, invalid: int = 400) -> ApiError:
    return ApiError(invalid if exc.reason == "invalid" else STATUS[exc.reason], str(exc))


def _prompts(request: Request) -> PromptVersions:
    return state(request).runtime.prompts


def _with_usage(prompts: PromptVersions, versions: list[PromptVersion]) -> list[dict[str, Any]]:
    outcomes, in_use = prompts.outcomes(), prompts.in_use()
    return [version_json(v, outcomes.get(v.version), in_use) for v in versions]


async def _body(request: Request, allowed: tuple[str, ...]) -> Fields:
    """The JSON body; none at all (no content type, nothing sent) reads as ``{}``."""
    if not media_type(request) and not (await read_limited(request, 1024)).strip():
        return Fields({})
    body = await read_json(request)
    unknown = sorted(set(body.data) - set(allowed))
    if unknown:
        raise ApiError(400, f"unknown field(s) {', '.join(unknown)}; expected {', '.join(allowed)}")
    return body


def _list(prompts: PromptVersions, limit: int, offset: int) -> dict[str, Any]:
    stored = prompts.newest(limit + 1, offset)
    more = len(stored) > limit
    page = stored[:limit]
    if not more and len(page) < limit:  # the list ends with the built-in version 0
        page.append(prompts.get(0))
    current = _with_usage(prompts, [prompts.current()])[0]
    return page_json(_with_usage(prompts, page), more, current=current)


@endpoint(
    "List the versions of the guidelines",
    tag="prompts",
    query={"limit": "int - at most 200 (default 50)", "offset": "int"},
    response=PROMPT_LIST,
    errors=(400,),
    description=(
        "Newest first, ending with version 0 (the built-in text). `current` is the active "
        "version; each version's `turns` count the turns that ran with it by how they ended, so "
        "outcomes can be compared by version."
    ),
)
async def list_prompts(request: Request) -> JSONResponse:
    limit = limit_of(request, 50, 200)
    offset = query_int(request, "offset", 0, maximum=MAX_OFFSET)
    return JSONResponse(await blocking(_list, _prompts(request), limit, offset))


def _detail(prompts: PromptVersions, number: int) -> dict[str, Any]:
    version = prompts.get(number)
    return {**_with_usage(prompts, [version])[0], "diff": prompts.diff(number)}


@endpoint(
    "Get a version of the guidelines",
    tag="prompts",
    response=VERSION_DETAIL,
    errors=(404,),
    description="With `diff`: a unified diff from the version it was made from.",
)
async def get_prompt(request: Request) -> JSONResponse:
    number = path_id(request, "prompt version", "version")
    try:
        return JSONResponse(await blocking(_detail, _prompts(request), number))
    except PromptVersionError as exc:
        raise _api_error(exc) from exc


@endpoint(
    "Set new guidelines",
    tag="prompts",
    body=PROMPT_SET,
    response=VERSION_SCHEMA,
    status=201,
    errors=(409,),
    description=(
        "Stores `text` as a new version and makes it the active one. It must keep the required "
        "rules, fit the prompt profile's limit and hold no secret (400 says which failed)."
    ),
)
async def set_prompt(request: Request) -> JSONResponse:
    body = await _body(request, ("text", "note"))
    text = body.text("text", required=True, max_length=TEXT_LIMIT)
    note = body.text("note", "", max_length=NOTE_LIMIT)
    prompts = _prompts(request)
    try:
        added = await blocking(prompts.set, text, note)
    except PromptVersionError as exc:
        raise _api_error(exc) from exc
    data = await blocking(_with_usage, prompts, [added])
    return JSONResponse(data[0], status_code=201)


@endpoint(
    "Propose a revision of the guidelines",
    tag="prompts",
    body=PROMPT_EVOLVE,
    response=PROPOSAL,
    status=201,
    errors=(409, 422, 502, 503),
    description=(
        "The cheap model revises the active version from recent evaluations, lessons and the "
        "user's remembered instructions and preferences. The revision is stored as a proposal "
        "(nothing changes until it is accepted) and returned with its diff. 409: nothing to "
        "learn from yet; 422: the model's text broke the rules or changed nothing."
    ),
)
async def evolve_prompt(request: Request) -> JSONResponse:
    body = await _body(request, ("note",))
    note = body.text("note", "", max_length=NOTE_LIMIT)
    runtime = state(request).runtime
    try:
        llm = runtime.cheap_llm
        proposal = await runtime.prompts.evolve(llm, note.strip())
    except ConfigError as exc:
        raise ApiError(503, str(exc), code="model_not_configured") from exc
    except PromptVersionError as exc:
        raise _api_error(exc, invalid=422) from exc
    except LLMError as exc:
        raise ApiError(502, f"the model could not propose a revision: {exc}") from exc
    version = await blocking(_with_usage, runtime.prompts, [proposal.version])
    return JSONResponse(
        {
            "object": "prompt_proposal",
            "proposal": version[0],
            "base": proposal.base.version,
            "diff": proposal.diff,
            "evidence": proposal.evidence.counts(),
            "summary": proposal.evidence.summary(),
        },
        status_code=201,
    )


@endpoint(
    "Accept a proposed version",
    tag="prompts",
    response=VERSION_SCHEMA,
    errors=(400, 404, 409),
    description="The proposal becomes the active version; 409 for a version that is not one.",
)
async def accept_prompt(request: Request) -> JSONResponse:
    number = path_id(request, "prompt version", "version")
    prompts = _prompts(request)
    try:
        accepted = await blocking(prompts.accept, number)
    except PromptVersionError as exc:
        raise _api_error(exc) from exc
    return JSONResponse((await blocking(_with_usage, prompts, [accepted]))[0])


@endpoint(
    "Roll the guidelines back",
    tag="prompts",
    body=PROMPT_ROLLBACK,
    response=VERSION_SCHEMA,
    errors=(404, 409),
    description=(
        "Without `to`: back to the version the active one was made from. With `to`: back to "
        "that version (0: the built-in text). Answers with the version now active."
    ),
)
async def rollback_prompt(request: Request) -> JSONResponse:
    body = await _body(request, ("to",))
    to = body.integer("to", minimum=0)
    prompts = _prompts(request)
    try:
        active = await blocking(prompts.rollback, to)
    except PromptVersionError as exc:
        raise _api_error(exc) from exc
    return JSONResponse((await blocking(_with_usage, prompts, [active]))[0])


def routes() -> list[Route]:
    return [
        Route("/v1/prompts", list_prompts, methods=["GET"]),
        Route("/v1/prompts", set_prompt, methods=["POST"]),
        Route("/v1/prompts/evolve", evolve_prompt, methods=["POST"]),
        Route("/v1/prompts/rollback", rollback_prompt, methods=["POST"]),
        Route("/v1/prompts/{version}", get_prompt, methods=["GET"]),
        Route("/v1/prompts/{version}/accept", accept_prompt, methods=["POST"]),
    ]
