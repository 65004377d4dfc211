"""The one exception tree of tea_agent_mini.

    TeaAgentError
    ├── ConfigError          config file missing a model, wrong type, unknown key ...
    │   ├── WindowTooSmall   (context/turn.py) not even the smallest request fits the window
    │   ├── SkillFormatError (skills/loader.py) a SKILL.md that cannot be read
    │   └── IdentityError    (agent/identities.py) a subagent identity file that cannot be used
    ├── SignatureError       (toolkit/signature.py) a tool function without types or docs
    ├── LLMError             anything that went wrong talking to the model endpoint
    │   ├── RateLimited      HTTP 429 (carries retry_after when the server sent one)
    │   ├── UpstreamError    HTTP 4xx/5xx or a transport failure after retries
    │   │   └── NotAModelServer (llm/http_errors.py) api_url reaches tea-agent-mini, not a model
    │   ├── ContextTooLong   the provider says the prompt exceeds its context window
    │   ├── StreamInterrupted the stream ended without finish_reason / [DONE]
    │   └── JSONRepairError  (llm/repair.py) model output that is not JSON, even read leniently
    ├── ToolError            a tool refused or failed; becomes a ToolResult(ok=False)
    │   ├── WorkspaceError   a path escapes the workspace
    │   ├── ToolArgumentsError (llm/repair.py) unrepairable tool-call arguments
    │   ├── UserToolError    (toolkit/usercode.py) a self-made tool's code or schema is wrong
    │   ├── TomlDecodeError  (tools/dev/tomlreader.py) a TOML file this reader cannot read
    │   └── McpError         (mcp/errors.py) transport, protocol, timeout, RPC errors
    ├── StoreError           the SQLite store could not do what was asked
    │   ├── UnknownSession   (export/session_markdown.py) no such session to export
    │   └── NothingToRate    (evaluation/feedback.py) no turn of that session to rate
    ├── SubagentError        (agent/subagents.py) unknown identity, depth or budget exceeded
    ├── TeamError            (agent/team.py) a bad teammate name, no role, an empty message
    │   ├── TeammateExists   the name belongs to a teammate that is running
    │   └── UnknownTeammate  no teammate has that name
    ├── PromptVersionError   (context/guidelines.py) a prompt version refused, missing, or not
    │                        allowed in the versions' state (accept a non-proposal ...)
    ├── LearnedSkillError    (evaluation/learned.py) a learned skill missing, an edit that does
    │                        not parse, a promotion onto a skill of the user's
    ├── ScheduleError        (scheduler/cron.py) a schedule that cannot be parsed or never fires
    ├── TaskError            (scheduler/errors.py) TaskNotFound, TaskBusy
    ├── FlowError            (flows/errors.py) a malformed flow, an unreadable checkpoint
    │   ├── RunNotFound      no checkpoint of the run asked for
    │   └── StepFailed       a step raised (the run is saved: resume it)
    ├── ApiError             (server/api_errors.py) an HTTP error for the API user, with status
    ├── UploadRejected       (server/uploads.py) an empty file, or one of a type not accepted
    ├── ShuttingDown         (server/turns.py) no new turns: the server is stopping
    └── UndocumentedRoute    (server/openapi.py) a route without its @endpoint spec

The subclasses named with a module live next to the code that raises them, so that module stays
importable on its own; they still root here. Those that were built-in errors before keep that
base too (``UploadRejected`` is still a ValueError), so no caller's ``except`` changed.

Third-party exceptions (httpx, sqlite3, yaml) are translated at the boundary with
``raise X(...) from exc`` so callers only ever catch these.
"""

from __future__ import annotations


class TeaAgentError(Exception):
    """Root of every error this package raises on purpose."""


class ConfigError(TeaAgentError):
    """The configuration is missing, malformed or inconsistent."""


class LLMError(TeaAgentError):
    """A model call failed. ``status`` is the HTTP status when there was one."""

    def __init__(self, message: str, *, status: int | None = None, hint: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.hint = hint

    def __str__(self) -> str:
        text = super().__str__()
        if self.status is not None:
            text = f"HTTP {self.status}: {text}"
        if self.hint:
            text = f"{text} ({self.hint})"
        return text


class RateLimited(LLMError):
    """HTTP 429 from the provider."""

    def __init__(self, message: str, *, retry_after: float | None = None, **kw) -> None:
        super().__init__(message, status=kw.pop("status", 429), **kw)
        self.retry_after = retry_after


class UpstreamError(LLMError):
    """The provider answered with an error status, or could not be reached."""


class ContextTooLong(LLMError):
    """The provider rejected the request because the prompt is too long."""


class StreamInterrupted(LLMError):
    """The stream ended before the provider said it was finished."""


class ToolError(TeaAgentError):
    """A tool could not do what it was asked; the message is shown to the model."""


class WorkspaceError(ToolError):
    """A path resolves outside the workspace while confinement is on."""


class StoreError(TeaAgentError):
    """The persistent store failed."""
