"""Tools on the running agent: runtime settings, where things live, models, the reasoning display.

Nothing here ever returns a secret: settings are a whitelist of harmless keys, model URLs lose
their user info and query, and keys are only reported as set or not.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal
from urllib.parse import urlsplit, urlunsplit

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.modelcall import call_model, require_runtime
from tea_agent_mini.toolkit.registry import tool
from tea_agent_mini.tools.history import require_store

if TYPE_CHECKING:
    from tea_agent_mini.config import Config, ModelConfig

RUNTIME_SCOPE = "runtime"
HISTORY_KEY = "config_history"
REASONING_KEY = "show_reasoning"
MAX_HISTORY = 100


@dataclass(frozen=True)
class Setting:
    """A runtime key the model may read and change; ``kind`` is int, float or choice."""

    key: str
    kind: str
    description: str
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    nullable: bool = False

    def parse(self, value: Any) -> Any:
        """``value`` as this setting's type, or a ToolError saying what is expected."""
        if isinstance(value, str):
            value = value.strip()
            if value.lower() in ("", "null", "none"):
                value = None
        if value is None:
            if self.nullable:
                return None
            raise ToolError(f"{self.key} needs a value ({self.expected()})")
        if self.kind == "choice":
            if value not in self.choices:
                raise ToolError(f"{self.key} must be one of {', '.join(self.choices)}")
            return value
        number = _number(value, integer=self.kind == "int")
        if number is None or not self._in_range(number):
            raise ToolError(f"{self.key} must be {self.expected()}, not {value!r}")
        return number

    def _in_range(self, number: float) -> bool:
        low_ok = self.minimum is None or number >= self.minimum
        return low_ok and (self.maximum is None or number <= self.maximum)

    def expected(self) -> str:
        if self.kind == "choice":
            return "one of " + ", ".join(self.choices)
        kind = "an integer" if self.kind == "int" else "a number"
        bounds = f" from {self.minimum:g}" if self.minimum is not None else ""
        bounds += f" to {self.maximum:g}" if self.maximum is not None else ""
        return kind + bounds + (" (or null for the provider default)" if self.nullable else "")


def _number(value: Any, *, integer: bool) -> float | int | None:
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    if not integer:
        return number
    return int(number) if number.is_integer() else None


SETTINGS: dict[str, Setting] = {
    s.key: s
    for s in (
        Setting("agent.max_iterations", "int", "model calls per turn", 1, 1000),
        Setting(
            "agent.approval",
            "choice",
            "auto: run tools; ask: confirm changes; never: read-only",
            choices=("auto", "ask", "never"),
        ),
        Setting("agent.exec_timeout", "float", "seconds a shell command may stay silent", 1, 86400),
        Setting("agent.tool_output_limit", "int", "bytes of tool output kept", 1024, 16 << 20),
        Setting("main_model.temperature", "float", "sampling temperature", 0, 2, nullable=True),
        Setting("main_model.max_tokens", "int", "answer length cap", 1, 1 << 20, nullable=True),
        Setting("main_model.max_context_tokens", "int", "context budget (0: auto)", 0, 1 << 24),
        Setting("main_model.read_timeout", "float", "seconds to wait for the model", 1, 3600),
        Setting("cheap_model.temperature", "float", "cheap model temperature", 0, 2, nullable=True),
        Setting(
            "cheap_model.max_tokens", "int", "cheap model answer cap", 1, 1 << 20, nullable=True
        ),
    )
}


def _current(config: Any, key: str) -> Any:
    section, name = key.split(".", 1)
    return getattr(getattr(config, section), name)


def _setting(key: str | None) -> Setting:
    setting = SETTINGS.get((key or "").strip())
    if setting is None:
        raise ToolError(f"{key!r} is not a runtime setting; settings: {', '.join(SETTINGS)}")
    return setting


@tool("toolkit_config", mutates=True, mutating_actions=("set",))
def toolkit_config(
    ctx: ToolContext,
    action: Literal["list", "get", "set", "history"],
    key: str | None = None,
    value: Annotated[Any, {"type": ["string", "number", "integer", "null"]}] = None,
) -> str:
    """Read or change runtime settings of this agent (a fixed list: iteration limit, approval
    policy, command timeout, output limit, model temperature and token limits). set changes the
    running agent only (not config.yaml) and is recorded; history shows the changes. Keys and
    secrets are never shown.

    Args:
        action: list the runtime keys, get or set one, or show the change history
        key: [get/set] e.g. agent.max_iterations
        value: [set] the new value (null: back to the provider default)
    """
    config = require_runtime(ctx).config
    if action == "list":
        lines = ["Runtime settings (change with action 'set'):"]
        for setting in SETTINGS.values():
            current = _current(config, setting.key)
            lines.append(f"- {setting.key} = {_show(current)}  ({setting.description})")
        return "\n".join(lines)
    if action == "get":
        setting = _setting(key)
        current = _show(_current(config, setting.key))
        return f"{setting.key} = {current}  ({setting.description}; {setting.expected()})"
    if action == "history":
        return _history(ctx)
    if action != "set":
        raise ToolError(f"unknown action {action!r}; use list, get, set or history")
    setting = _setting(key)
    new = setting.parse(value)
    old = _current(config, setting.key)
    section, name = setting.key.split(".", 1)
    setattr(getattr(config, section), name, new)
    _apply_to_context(ctx, setting.key, new)
    _record(ctx, {"key": setting.key, "old": old, "new": new, "topic": ctx.topic_id})
    return (
        f"{setting.key}: {_show(old)} → {_show(new)}. It applies to this running agent (new "
        "turns and sessions) until it restarts; config.yaml is unchanged."
    )


def _show(value: Any) -> str:
    return "null (provider default)" if value is None else repr(value)


def _apply_to_context(ctx: ToolContext, key: str, value: Any) -> None:
    # The current session copied these when it started; keep it in step with the change.
    if key == "agent.approval":
        ctx.approval = value
    elif key == "agent.exec_timeout":
        ctx.exec_timeout = value


def _record(ctx: ToolContext, entry: dict[str, Any]) -> None:
    if ctx.store is None:
        return
    entry["at"] = time.time()
    history = ctx.store.state.get(RUNTIME_SCOPE, HISTORY_KEY) or []
    history = [*history, entry][-MAX_HISTORY:]
    ctx.store.state.put(RUNTIME_SCOPE, HISTORY_KEY, history)


def _history(ctx: ToolContext) -> str:
    history = require_store(ctx).state.get(RUNTIME_SCOPE, HISTORY_KEY) or []
    if not history:
        return "No runtime setting has been changed."
    lines = [f"{len(history)} change(s), newest first:"]
    for entry in reversed(history[-20:]):
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(entry.get("at", 0)))
        change = f"{_show(entry.get('old'))} → {_show(entry.get('new'))}"
        lines.append(f"- {stamp} {entry.get('key')}: {change}")
    return "\n".join(lines)


# ---- where things are, which models -------------------------------------------------------


@tool("toolkit_get_config_path", concurrency_safe=True)
def toolkit_get_config_path(ctx: ToolContext) -> dict[str, Any]:
    """Where this agent keeps its files: home directory, active config file and profile,
    database, workspace, and the folders for tools, skills, commands and the knowledge base."""
    from tea_agent_mini.config import list_profiles, profile_path

    config = require_runtime(ctx).config
    home = config.home
    config_file = config.source or profile_path(config.profile, home)
    db = config.db_path
    database: dict[str, Any] = {"database": str(db)}
    if config.store.url:  # PostgreSQL: the URL without its credentials
        database = {"database": public_url(config.store.url)}
    else:
        database["database_bytes"] = db.stat().st_size if db.is_file() else 0
    return {
        "home": str(home),
        "config_file": str(config_file),
        "config_file_exists": config_file.is_file(),
        "profile": config.profile,
        "profiles": list_profiles(home),
        **database,
        "workspace": str(config.workspace),
        "folders": {name: str(home / name) for name in ("tools", "skills", "commands", "kb")},
    }


def public_url(url: str) -> str:
    """``url`` without user info, query or fragment (where credentials sometimes hide)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "(invalid URL)"
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def model_summary(model: ModelConfig) -> dict[str, Any]:
    """A model's settings for display: no key, only whether one is set."""
    return {
        "model_name": model.model_name,
        "api_url": public_url(model.api_url),
        "api_key_set": bool(model.api_key),
        "max_context_tokens": model.max_context_tokens,
        "temperature": model.temperature,
        "max_tokens": model.max_tokens,
    }


def models_overview(config: Config) -> dict[str, Any]:
    cheap = config.cheap_model
    embedding = config.embedding
    return {
        "main": model_summary(config.main_model),
        "cheap": model_summary(cheap) if cheap.model_name else "same as main",
        "embedding": {
            "provider": embedding.provider or "local",
            "model": embedding.model,
            "api_url": public_url(embedding.api_url) if embedding.api_url else "",
        },
    }


@tool("toolkit_get_models", concurrency_safe=True)
def toolkit_get_models(ctx: ToolContext) -> dict[str, Any]:
    """The models this agent is configured to use (main, cheap, embedding): names, endpoints,
    limits. API keys are never shown."""
    return models_overview(require_runtime(ctx).config)


@tool("toolkit_list_provider_models", concurrency_safe=True)
async def toolkit_list_provider_models(
    ctx: ToolContext, which: Literal["main", "cheap"] = "main"
) -> dict[str, Any]:
    """Ask the model provider's endpoint (GET /models) which models it offers, e.g. to pick a
    model name or check that the configured one exists.

    Args:
        which: whose endpoint to ask (default main)
    """
    config = require_runtime(ctx).config
    model = config.cheap if which == "cheap" else config.main_model
    if not model.api_url:
        raise ToolError(f"the {which} model has no api_url configured")
    # One retry at most: this is a quick look-up, not worth a long backoff on a dead endpoint.
    quick = dataclasses.replace(model, max_retries=min(model.max_retries, 1))

    async def ask(client: Any) -> list[str]:
        return await client.list_models()

    names = await call_model(quick, ask)
    return {
        "endpoint": public_url(model.api_url),
        "models": names,
        "configured": model.model_name,
        "configured_offered": model.model_name in names,
    }


@tool("toolkit_toggle_reasoning")
def toolkit_toggle_reasoning(ctx: ToolContext, show: bool | None = None) -> str:
    """Show or hide the model's reasoning (thinking) in the chat display. Without 'show' the
    setting is flipped.

    Args:
        show: true: show, false: hide
    """
    store = require_store(ctx)
    current = bool(store.state.get(RUNTIME_SCOPE, REASONING_KEY, False))
    new = (not current) if show is None else bool(show)
    store.state.put(RUNTIME_SCOPE, REASONING_KEY, new)
    return f"Reasoning display is now {'on' if new else 'off'} (was {'on' if current else 'off'})."
