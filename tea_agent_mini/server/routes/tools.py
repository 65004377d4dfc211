"""Tools: the list with schemas, and running one tool directly.

A direct run obeys ``agent.approval`` for calls that change something: ``auto`` runs them,
``never`` refuses, and ``ask`` — which cannot prompt anyone over REST — refuses unless the body
says ``"confirm": true``.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from ...errors import ToolError
from ...types import ToolCall
from ..api_errors import ApiError
from ..bodies import read_json
from ..spec import endpoint
from ..state import blocking, require_topic, state


def tool_json(spec: Any) -> dict[str, Any]:
    return {
        "name": spec.name,
        "description": spec.description,
        "parameters": spec.parameters,
        "mutates": spec.mutates,
        "concurrency_safe": spec.concurrency_safe,
    }


async def _toolkit(request: Request) -> Any:
    runtime = state(request).runtime
    return await blocking(lambda: runtime.toolkit)


@endpoint("Tools with their JSON schemas", tag="tools", response="ToolList")
async def list_tools(request: Request) -> JSONResponse:
    toolkit = await _toolkit(request)
    specs = sorted(toolkit.specs(), key=lambda s: s.name)
    return JSONResponse({"object": "list", "data": [tool_json(s) for s in specs]})


@endpoint(
    "Run one tool",
    tag="tools",
    body="ToolRun",
    response="ToolRunResult",
    errors=(403, 404),
    description=(
        "Arguments are checked against the tool's schema (400). A call that writes files or "
        'runs commands needs `agent.approval: auto`, or `ask` plus `"confirm": true`; '
        "otherwise 403. A tool that fails answers 200 with `ok: false` and the error."
    ),
)
async def run_tool(request: Request) -> JSONResponse:
    from ...toolkit.arguments import validate_arguments
    from ...toolkit.executor import ToolExecutor

    st = state(request)
    body = await read_json(request)
    name = request.path_params["name"]
    toolkit = await _toolkit(request)
    spec = toolkit.get(name)
    if spec is None:
        raise ApiError(404, f"no tool named {name!r}")
    arguments = body.nested("arguments").data
    confirm = body.flag("confirm")
    session_id = body.text("session_id", max_length=64)
    try:
        arguments = validate_arguments(spec.name, spec.parameters, arguments)
    except ToolError as exc:
        raise ApiError(400, str(exc)) from exc
    _check_approval(spec, arguments, st.runtime.config.agent.approval, confirm)
    if session_id:
        await require_topic(request, session_id)
    runtime = st.runtime
    context = runtime.tool_context(session_id, approve=lambda _name, _args: confirm)
    executor = ToolExecutor(
        toolkit, context, max_output_bytes=runtime.config.agent.tool_output_limit
    )
    call = ToolCall(f"rest_{uuid.uuid4().hex[:12]}", name, json.dumps(arguments))
    result = await executor.run(call)
    return JSONResponse(
        {
            "name": result.name,
            "ok": result.ok,
            "output": result.output,
            "error": result.error,
            "duration": round(result.duration, 3),
            "truncated": result.truncated,
        }
    )


def _check_approval(spec: Any, arguments: dict[str, Any], policy: str, confirm: bool) -> None:
    from ...policy import decide

    decision = decide(policy, spec.name, changes=spec.mutates_with(arguments), confirmed=confirm)
    if decision.runs:
        return
    if policy == "ask":  # nobody to ask over REST: the caller confirms in the request
        raise ApiError(
            403,
            f"{spec.name} changes files or runs commands and approval is 'ask': "
            'send "confirm": true to run it',
            code="confirmation_required",
        )
    raise ApiError(403, decision.reason)


def routes() -> list[Route]:
    return [
        Route("/v1/tools", list_tools, methods=["GET"]),
        Route("/v1/tools/{name}/run", run_tool, methods=["POST"]),
    ]
