"""``/v1/team``: the teammates of this server (``agent/team.py``) and their messages.

The user is the team's ``lead``: messages sent here come from ``lead``, and the teammates'
answers arrive in the ``lead`` inbox (``GET /v1/team/inbox``). Teammates run on the server's
event loop; after a restart they are ``offline`` until spawned again (``POST /v1/team`` with
the same name revives one in its topic).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ...agent.team import (
    LEAD,
    MAX_PROMPT_CHARS,
    MAX_ROLE_CHARS,
    SEND_KINDS,
    TeamError,
    TeammateExists,
    UnknownTeammate,
)
from ...store.agents import MAX_UNREAD, MESSAGE_KINDS, TEAMMATE_STATUSES
from ..api_errors import ApiError
from ..bodies import query_bool, read_json
from ..paging import page_json
from ..schemas import ANY_OBJECT, INT, NUM, STR, nullable, obj, page_schema
from ..spec import endpoint
from ..state import blocking, state

if TYPE_CHECKING:
    from ...agent.team import Team
    from ...store.agents import AgentMessage

MAX_ADDRESS = 200
MAX_TEXT = 100_000

MEMBER = obj(
    {
        "name": STR,
        "role": STR,
        "status": {"enum": list(TEAMMATE_STATUSES)},
        "agent": {**nullable(STR), "description": "the identity whose tools it uses"},
        "topic_id": {**nullable(STR), "description": "the session it works in"},
        "unread": {**INT, "description": "messages it has not read yet"},
    },
    ("name", "role", "status", "agent", "topic_id", "unread"),
)
SHUTDOWN = obj(
    {
        **MEMBER["properties"],
        "requested": {
            "type": "boolean",
            "description": "true: it was running and was asked to stop; false: marked at once",
        },
    },
    ("name", "status", "requested"),
)
MESSAGE = obj(
    {
        "id": INT,
        "created_at": NUM,
        "sender": STR,
        "recipient": STR,
        "kind": {"enum": list(MESSAGE_KINDS)},
        "text": STR,
        "data": {**ANY_OBJECT, "description": "in_reply_to, ok, approved ..."},
        "read_at": nullable(NUM),
    },
    ("id", "created_at", "sender", "recipient", "kind", "text"),
)
SPAWN = obj(
    {
        "name": {**STR, "description": "lowercase letters, digits, - or _ (not 'lead')"},
        "role": {**STR, "description": "required for a new teammate", "maxLength": MAX_ROLE_CHARS},
        "prompt": {**STR, "maxLength": MAX_PROMPT_CHARS},
        "agent": {**nullable(STR), "description": "an identity (default: worker's tools)"},
    },
    ("name",),
)
SEND = obj(
    {
        "to": {**STR, "description": "a teammate's name"},
        "text": STR,
        "kind": {"enum": list(SEND_KINDS), "description": "plan_approval: approve ... / reject"},
    },
    ("to", "text"),
)


def team(request: Request) -> Team:
    return state(request).runtime.team  # the first use marks an earlier process's team offline


def refused(exc: TeamError) -> ApiError:
    if isinstance(exc, TeammateExists):
        return ApiError(409, str(exc))
    if isinstance(exc, UnknownTeammate):
        return ApiError(404, str(exc))
    return ApiError(400, str(exc))


def message_json(message: AgentMessage) -> dict[str, Any]:
    return dataclasses.asdict(message)


@endpoint(
    "The teammates",
    tag="team",
    response=page_schema(MEMBER),
    description="Every teammate, running or not, with its status and unread messages.",
)
async def list_team(request: Request) -> JSONResponse:
    members = await blocking(team(request).members)
    return JSONResponse(page_json([m.as_json() for m in members], False))


@endpoint(
    "Spawn a teammate, or revive one",
    tag="team",
    body=SPAWN,
    response=MEMBER,
    status=201,
    errors=(400, 409),
    description=(
        "Starts a teammate with its own session and inbox. A teammate that is offline or shut "
        "down is revived in its session (its role and prompt stay those it was given first). "
        "409 when one of that name is running, 400 for an invalid name or a missing role."
    ),
)
async def spawn_teammate(request: Request) -> JSONResponse:
    body = await read_json(request)
    name = body.text("name", required=True, max_length=MAX_ADDRESS)
    role = body.text("role", "", max_length=MAX_ROLE_CHARS)
    prompt = body.text("prompt", "", max_length=MAX_PROMPT_CHARS)
    agent = body.text("agent", None, max_length=MAX_ADDRESS)
    try:
        member = await team(request).spawn(name, role, prompt, agent or None)
    except TeamError as exc:
        raise refused(exc) from exc
    return JSONResponse(member.as_json(), status_code=201)


@endpoint(
    "Ask a teammate to stop",
    tag="team",
    response=SHUTDOWN,
    status=202,
    errors=(404,),
    description=(
        "Sends a running teammate a shutdown_request: it finishes its current turn, answers "
        "with a shutdown_response in the lead's inbox and stops (status shutdown). One that is "
        "not running is marked shut down at once. Spawning it again revives it."
    ),
)
async def stop_teammate(request: Request) -> JSONResponse:
    the_team = team(request)
    name = request.path_params["name"]
    try:
        requested = await the_team.shutdown(name)
        member = await blocking(the_team.member, name)
    except TeamError as exc:
        raise refused(exc) from exc
    return JSONResponse({**member.as_json(), "requested": requested}, status_code=202)


@endpoint(
    "Unread messages of an inbox",
    tag="team",
    query={
        "address": "str - lead (default), a teammate's name, or topic:<session id>",
        "peek": "bool - true: leave them unread (default false: reading marks them read)",
    },
    response=page_schema(MESSAGE),
    errors=(400,),
    description=f"Oldest first, at most {MAX_UNREAD}; the rest stay for the next read.",
)
async def read_team_inbox(request: Request) -> JSONResponse:
    address = request.query_params.get("address") or LEAD
    if len(address) > MAX_ADDRESS:
        raise ApiError(400, f"query parameter 'address' is longer than {MAX_ADDRESS} characters")
    peek = bool(query_bool(request, "peek", False))
    store = state(request).store
    found = await blocking(store.inbox.read, address, peek=peek)
    left = len(found) if peek else 0  # what is still unread of this page
    more = len(found) >= MAX_UNREAD and await blocking(store.inbox.unread_count, address) > left
    return JSONResponse(page_json([message_json(m) for m in found], more))


@endpoint(
    "Send a teammate a message from the lead",
    tag="team",
    body=SEND,
    response=MESSAGE,
    status=201,
    errors=(400, 404),
    description=(
        "The teammate answers in a turn of its own; the answer arrives in the lead's inbox. "
        "A message to a teammate that is offline waits until it is spawned again. "
        "kind plan_approval answers a teammate's plan: the text starts with approve or reject."
    ),
)
async def send_team_message(request: Request) -> JSONResponse:
    body = await read_json(request)
    to = body.text("to", required=True, max_length=MAX_ADDRESS)
    text = body.text("text", required=True, max_length=MAX_TEXT)
    kind = body.text("kind", "message", max_length=MAX_ADDRESS)
    try:
        sent = await team(request).message(LEAD, to, text, kind)
    except TeamError as exc:
        raise refused(exc) from exc
    return JSONResponse(message_json(sent), status_code=201)


def routes() -> list[Route]:
    return [
        Route("/v1/team", list_team, methods=["GET"]),
        Route("/v1/team", spawn_teammate, methods=["POST"]),
        Route("/v1/team/inbox", read_team_inbox, methods=["GET"]),
        Route("/v1/team/messages", send_team_message, methods=["POST"]),
        Route("/v1/team/{name}", stop_teammate, methods=["DELETE"]),
    ]
