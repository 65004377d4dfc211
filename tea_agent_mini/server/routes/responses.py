"""``POST /v1/responses``: the OpenAI Responses API over the same turns as chat completions.

The request is read by ``responses_format.py``, the turn started and streamed by the helpers of
``chat.py``; only the encoding differs. ``previous_response_id`` (or ``session_id``) continues a
session, and its input items are added to that session before the last one runs as the turn.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from ...types import Done, Error, ReasoningDelta
from ..api_errors import ApiError
from ..bodies import read_json
from ..openai_format import error_api
from ..responses_format import ResponseEncoder, parse_responses_request, response_id
from ..spec import endpoint
from ..state import state
from .chat import CHAT_BODY_LIMIT, raise_with, start_turn, stream_turn


@endpoint(
    "Create a response (OpenAI Responses API)",
    tag="openai",
    body="ResponseRequest",
    response="Response",
    errors=(404, 429, 499, 502, 503),
    headers={"X-Session-Id": "the session the turn ran in"},
    description=(
        "The agent runs its own tools server-side and answers with the final message. `input` "
        "is a string or message items (input_text, output_text, input_image parts); "
        "`instructions` is the system prompt. `stream: true` sends the Responses events: "
        "`response.created`, `response.in_progress`, `response.output_item.added`, "
        "`response.content_part.added`, `response.output_text.delta` (and "
        "`response.reasoning_text.delta` for the model's thinking), their `.done` events, then "
        "`response.completed` (`response.incomplete` at the output limit, `response.failed` "
        "on an error). `temperature`, `top_p`, `max_output_tokens` and `text.format` "
        "(json_object, json_schema) go to every model call of the turn. Each response id names "
        "its session: `previous_response_id` continues it (`session_id` also works); "
        "`store: false` leaves no session behind. `tools` and `background` are refused (400)."
    ),
)
async def create_response(request: Request) -> Response:
    st = state(request)
    req = parse_responses_request(await read_json(request, limit=CHAT_BODY_LIMIT))
    started = await start_turn(st, request, req.chat, continue_history=True)
    encoder = ResponseEncoder(req, response_id(started.topic_id, started.turn), started.model)
    headers = {"X-Session-Id": started.topic_id}
    if req.chat.stream:
        return await stream_turn(st, started, encoder, headers)
    reasoning: list[str] = []
    async for entry in st.turns.follow(started.topic_id, started.since, turn=started.turn):
        event = entry.event if entry else None
        if isinstance(event, ReasoningDelta):
            reasoning.append(event.text)
        elif isinstance(event, Done):
            return JSONResponse(encoder.whole(event, "".join(reasoning)), headers=headers)
        elif isinstance(event, Error):
            raise_with(error_api(event), headers)
    raise_with(ApiError(500, "the turn ended without an answer"), headers)


def routes() -> list[Route]:
    return [Route("/v1/responses", create_response, methods=["POST"])]
