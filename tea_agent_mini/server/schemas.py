"""JSON schemas of the API's bodies, the ``components/schemas`` of the OpenAPI document."""

from __future__ import annotations

from typing import Any

from ..store.topics import SOURCES
from .ui_events import UI_EVENT_TYPES

STR: dict[str, Any] = {"type": "string"}
INT: dict[str, Any] = {"type": "integer"}
NUM: dict[str, Any] = {"type": "number"}
BOOL: dict[str, Any] = {"type": "boolean"}
ANY_OBJECT: dict[str, Any] = {"type": "object", "additionalProperties": True}


def ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{name}"}


def nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {"anyOf": [schema, {"type": "null"}]}


def obj(properties: dict[str, Any], required: tuple[str, ...] = (), **extra: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties, **extra}
    if required:
        schema["required"] = list(required)
    return schema


def list_of(item: str) -> dict[str, Any]:
    return obj({"object": {"const": "list"}, "data": {"type": "array", "items": ref(item)}})


def page_schema(items: dict[str, Any], **extra: dict[str, Any]) -> dict[str, Any]:
    """A page of a list route (see ``paging.py``)."""
    more = {**BOOL, "description": "more items exist beyond this page (ask with the cursor)"}
    return obj(
        {
            "object": {"const": "list"},
            "data": {"type": "array", "items": items},
            "has_more": more,
            **extra,
        },
        ("object", "data", "has_more"),
    )


ID_BOUNDS = {
    "first_id": {**nullable(INT), "description": "the id of the first item of the page"},
    "last_id": {**nullable(INT), "description": "the id of the last item of the page"},
}

USAGE = obj(
    {"prompt_tokens": INT, "completion_tokens": INT, "total_tokens": INT, "cached_tokens": INT}
)

SESSION = obj(
    {
        "id": STR,
        "object": {"const": "session"},
        "title": STR,
        "created": NUM,
        "updated": NUM,
        "profile": STR,
        "source": {"enum": list(SOURCES)},
        "parent_id": {**nullable(STR), "description": "the session whose subagent this is"},
        "agent": {**nullable(STR), "description": "the identity a subagent runs as"},
        "prompt_tokens": INT,
        "completion_tokens": INT,
        "total_tokens": INT,
        "message_count": INT,
        "system_prompt": nullable(STR),
        "busy": BOOL,
        "running": nullable(STR),
        "queued": INT,
    },
    ("id", "title", "created", "updated", "busy", "message_count"),
)

MESSAGE = obj(
    {
        "id": INT,
        "session_id": STR,
        "role": {"enum": ["system", "user", "assistant", "tool"]},
        "content": {"anyOf": [STR, {"type": "array", "items": ANY_OBJECT}, {"type": "null"}]},
        "reasoning": nullable(STR),
        "tool_calls": {
            "type": "array",
            "items": obj({"id": STR, "name": STR, "arguments": STR}),
        },
        "tool_call_id": nullable(STR),
        "name": nullable(STR),
        "tokens": INT,
        "created": NUM,
        "status": {
            **nullable({"enum": ["completed", "stopped", "failed", "ok"]}),
            "description": "how the turn ended (its last assistant message) or how the tool "
            "call went (a tool message); null when not recorded",
        },
        "error": {**nullable(STR), "description": "why a turn or a tool call failed or stopped"},
        "duration": {**nullable(NUM), "description": "a tool call's run time, seconds"},
    }
)

QUEUE_ITEM = obj({"id": STR, "position": INT, "text": STR, "attachments": INT, "created": NUM})

UI_EVENT = obj(
    {
        "type": {"enum": list(UI_EVENT_TYPES)},
        "turn": {"type": "string", "description": "id of the queued message the turn runs"},
        "text": STR,
        "position": INT,
        "call_id": STR,
        "name": STR,
        "arguments": STR,
        "ok": BOOL,
        "preview": STR,
        "error": nullable(STR),
        "duration": NUM,
        "message": STR,
        "kind": STR,
        "usage": ref("Usage"),
        "context": obj({"tokens": INT, "limit": INT}),
        "id": {"type": "string", "description": "question id (question, question_closed)"},
        "question": STR,
        "choices": {"type": "array", "items": STR},
        "default": nullable(STR),
        "timeout": NUM,
        "deadline": {"type": "number", "description": "Unix time the question expires"},
        "expires_in": {"type": "number", "description": "seconds left when sent"},
        "status": {"enum": ["answered", "timeout"]},
        "answer": nullable(STR),
        "title": STR,
        "urgency": STR,
        "time": NUM,
        "agent": {"type": "string", "description": "the subagent's identity (child)"},
        "topic_id": {"type": "string", "description": "the subagent's session (child)"},
        "event": {**ANY_OBJECT, "description": "the subagent's own event: {type, ...} (child)"},
    },
    ("type", "turn"),
    description=(
        "The data of one SSE event (`event:` is the type, `id:` the log id). start {text}; "
        "queued {position}; token/reasoning {text}; tool_start {call_id, name, arguments}; "
        "tool_result {call_id, name, ok, preview, error, duration}; notice {message, kind} "
        "(kind `notify`: also title, urgency, time); question {id, kind, question, choices, "
        "default, timeout, deadline, expires_in} (answer with POST .../questions/{id}; kind "
        "`approval` asks to allow a tool call under `approval: ask`, with name and arguments, "
        "choices Allow/Deny, denied when nobody answers); question_closed {id, status, answer}; "
        "error {message, kind}; done {text, usage, iterations, finish_reason, context}; child "
        "{call_id, agent, topic_id, event}: an event of a subagent that the tool call `call_id` "
        "runs, `event` being its token, reasoning, tool_start, tool_result, notice, error or "
        "done (with the subagent's usage), `topic_id` its session."
    ),
)

CHAT_MESSAGE = obj(
    {
        "role": {"enum": ["system", "developer", "user", "assistant"]},
        "content": {"anyOf": [STR, {"type": "array", "items": ANY_OBJECT}, {"type": "null"}]},
    },
    ("role",),
)

SAMPLING = {
    "temperature": {"type": "number", "minimum": 0, "maximum": 2},
    "top_p": {"type": "number", "minimum": 0, "maximum": 1},
}
FORMAT_TYPE = {"enum": ["text", "json_object", "json_schema"]}
SESSION_CHOICE = {
    "session_id": {"type": "string", "description": "continue this stored session"},
    "profile": {"type": "string", "description": "a profile name (never a path)"},
    "store": {"type": "boolean", "description": "false: leave no session behind"},
}

CHAT_REQUEST = obj(
    {
        "model": STR,
        "messages": {"type": "array", "items": ref("ChatMessage"), "minItems": 1},
        "stream": BOOL,
        "stream_options": obj({"include_usage": BOOL}),
        **SESSION_CHOICE,
        **SAMPLING,
        "max_tokens": {"type": "integer", "minimum": 1},
        "max_completion_tokens": {"type": "integer", "minimum": 1},
        "stop": {"anyOf": [STR, {"type": "array", "items": STR, "maxItems": 4}]},
        "seed": INT,
        "presence_penalty": {"type": "number", "minimum": -2, "maximum": 2},
        "frequency_penalty": {"type": "number", "minimum": -2, "maximum": 2},
        "response_format": obj(
            {"type": FORMAT_TYPE, "json_schema": obj({"name": STR, "schema": ANY_OBJECT})}
        ),
    },
    ("messages",),
)

RESPONSE_REQUEST = obj(
    {
        "model": STR,
        "input": {"anyOf": [STR, {"type": "array", "items": ref("ChatMessage"), "minItems": 1}]},
        "instructions": STR,
        "stream": BOOL,
        "previous_response_id": STR,
        **SESSION_CHOICE,
        **SAMPLING,
        "max_output_tokens": {"type": "integer", "minimum": 1},
        "text": obj({"format": obj({"type": FORMAT_TYPE, "name": STR, "schema": ANY_OBJECT})}),
        "metadata": ANY_OBJECT,
    },
    ("input",),
)

RESPONSE = obj(
    {
        "id": STR,
        "object": {"const": "response"},
        "created_at": INT,
        "status": {"enum": ["completed", "incomplete", "failed", "in_progress"]},
        "model": STR,
        "output": {"type": "array", "items": ANY_OBJECT},
        "usage": obj({"input_tokens": INT, "output_tokens": INT, "total_tokens": INT}),
        "error": nullable(ANY_OBJECT),
    }
)

CHAT_COMPLETION = obj(
    {
        "id": STR,
        "object": {"const": "chat.completion"},
        "created": INT,
        "model": STR,
        "choices": {
            "type": "array",
            "items": obj(
                {
                    "index": INT,
                    "message": obj(
                        {"role": {"const": "assistant"}, "content": STR, "reasoning_content": STR}
                    ),
                    "finish_reason": {"enum": ["stop", "length"]},
                }
            ),
        },
        "usage": ref("Usage"),
    }
)

CONFIG_VIEW = obj(
    {
        "profile": STR,
        "model_configured": BOOL,
        "auth_required": BOOL,
        "workspace": STR,
        "config": ANY_OBJECT,
        "runtime_keys": {"type": "object", "additionalProperties": {"type": "array"}},
    }
)

PROFILE = obj(
    {"name": STR, "active": BOOL, "file": BOOL, "model_name": STR, "api_url": STR, "error": STR}
)

SCHEMAS: dict[str, dict[str, Any]] = {
    "Error": obj(
        {
            "error": obj(
                {"message": STR, "type": STR, "param": nullable(STR), "code": nullable(STR)},
                ("message", "type"),
            )
        },
        ("error",),
    ),
    "Health": obj({"status": {"const": "ok"}, "version": STR}, ("status", "version")),
    "Model": obj(
        {"id": STR, "object": {"const": "model"}, "owned_by": STR, "tea_agent": ANY_OBJECT}
    ),
    "ModelList": list_of("Model"),
    "Usage": USAGE,
    "Session": SESSION,
    "SessionList": page_schema(ref("Session")),
    "SessionCreate": obj({"title": STR, "system_prompt": STR}),
    "SessionUpdate": obj({"title": STR, "system_prompt": nullable(STR)}),
    "Deleted": obj({"id": STR, "object": STR, "deleted": BOOL}),
    "SessionsDelete": obj({"ids": {"type": "array", "items": STR, "maxItems": 1000}}, ("ids",)),
    "SessionsDeleted": obj(
        {
            "object": {"const": "list"},
            "deleted": {"type": "array", "items": STR},
            "not_found": {"type": "array", "items": STR},
        }
    ),
    "Message": MESSAGE,
    "MessageList": page_schema(ref("Message"), **ID_BOUNDS),
    "MessageCreate": obj(
        {
            "content": STR,
            "attachments": {"type": "array", "items": STR, "description": "upload ids"},
            "profile": STR,
        },
        ("content",),
    ),
    "UIEvent": UI_EVENT,
    "QueueItem": QUEUE_ITEM,
    "Queue": obj(
        {
            "running": nullable(ref("QueueItem")),
            "data": {"type": "array", "items": ref("QueueItem")},
        }
    ),
    "Cancelled": obj({"cancelled": INT, "id": STR}),
    "Aborted": obj({"aborted": BOOL}),
    "QuestionAnswer": obj({"answer": STR}, ("answer",)),
    "QuestionAnswered": obj({"id": STR, "status": {"const": "answered"}, "answer": STR}),
    "Notice": obj(
        {
            "title": STR,
            "message": STR,
            "urgency": {"enum": ["low", "normal", "critical"]},
            "time": {"type": "string", "description": "ISO 8601, UTC"},
            "session_id": nullable(STR),
            "session_title": STR,
        }
    ),
    "NoticeList": page_schema(ref("Notice")),
    "Tool": obj(
        {
            "name": STR,
            "description": STR,
            "parameters": ANY_OBJECT,
            "mutates": BOOL,
            "concurrency_safe": BOOL,
        }
    ),
    "ToolList": list_of("Tool"),
    "ToolRun": obj({"arguments": ANY_OBJECT, "confirm": BOOL, "session_id": STR}),
    "ToolRunResult": obj(
        {
            "name": STR,
            "ok": BOOL,
            "output": STR,
            "error": nullable(STR),
            "duration": NUM,
            "truncated": BOOL,
        }
    ),
    "ConfigView": CONFIG_VIEW,
    "ConfigPatch": obj(
        {"agent": ANY_OBJECT, "main_model": ANY_OBJECT, "cheap_model": ANY_OBJECT},
        additionalProperties=False,
    ),
    "ProfileSwitch": obj({"profile": STR}, ("profile",)),
    "Profile": PROFILE,
    "ProfileList": obj(
        {
            "object": {"const": "list"},
            "active": STR,
            "data": {"type": "array", "items": ref("Profile")},
        }
    ),
    "ProfileCreate": obj(
        {
            "name": STR,
            "config": ANY_OBJECT,
            "overwrite": BOOL,
            "file": {"type": "string", "format": "binary"},
        },
        description="JSON: name + config; multipart: name + file (YAML).",
    ),
    "ProfileCreated": obj({"name": STR, "model_name": STR, "created": BOOL}),
    "ProfileDetail": obj(
        {**PROFILE["properties"], "config": {**nullable(ANY_OBJECT), "description": "masked"}}
    ),
    "ProfilePatch": obj(
        {"config": {**ANY_OBJECT, "description": "a JSON merge patch of the profile's file"}},
        ("config",),
    ),
    "ConnectionTest": obj(
        {
            "api_url": {**STR, "description": "the model server's base URL, e.g. …/v1"},
            "api_key": STR,
            "profile": {**STR, "description": "without api_key: use this profile's stored key"},
        },
        ("api_url",),
    ),
    "ConnectionResult": obj(
        {
            "ok": BOOL,
            "api_url": {**STR, "description": "masked"},
            "models": {"type": "array", "items": STR},
            "reason": nullable(STR),
            "error": nullable(STR),
            "status": nullable(INT),
        },
        ("ok", "models"),
    ),
    "UploadForm": obj({"file": {"type": "string", "format": "binary"}}, ("file",)),
    "Upload": obj({"id": STR, "name": STR, "type": STR, "size": INT, "created": NUM, "url": STR}),
    "ChatMessage": CHAT_MESSAGE,
    "ChatCompletionRequest": CHAT_REQUEST,
    "ChatCompletion": CHAT_COMPLETION,
    "ResponseRequest": RESPONSE_REQUEST,
    "Response": RESPONSE,
}
