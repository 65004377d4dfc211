"""Configuration: typed dataclasses loaded from ``<home>/config.yaml`` or a named profile.

The keys follow tea_agent's ``config.yaml`` so existing users can drop theirs in. Environment
variables fill what the file leaves empty: ``OPENAI_API_KEY``, ``OPENAI_BASE_URL``,
``TEA_AGENT_MODEL``, ``TEA_AGENT_API_KEY`` for the server's access token, and
``TEA_AGENT_SEARCH_URL``, ``TEA_AGENT_OPEN_METEO_URL``, ``TEA_AGENT_GEOCODING_URL`` for the
endpoints of the ``tools:`` section, ``TEA_AGENT_STORE_URL`` for ``store.url``. The home
directory is ``$TEA_AGENT_HOME`` or ``~/.tea_agent``, read at call time. Secrets never appear
in reprs or error messages (see :func:`mask_secret`).
"""

from __future__ import annotations

import dataclasses
import os
import re
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .config_values import coerce
from .errors import ConfigError
from .redact import MASK, mask_secret, mask_url

DEFAULT_PROFILE = "default"
PROFILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
APPROVAL_MODES = ("auto", "ask", "never")
PROMPT_PROFILES = ("auto", "compact", "full")
SANDBOX_MODES = ("auto", "off", "required")
SECRET_FIELDS = frozenset({"api_key", "password", "token"})


def home_dir(env: Mapping[str, str] | None = None) -> Path:
    """The user data directory: ``$TEA_AGENT_HOME`` or ``~/.tea_agent`` (not created here)."""
    env = os.environ if env is None else env
    configured = env.get("TEA_AGENT_HOME", "").strip()
    return Path(configured).expanduser() if configured else Path.home() / ".tea_agent"


def _is_url(name: str) -> bool:
    """Fields holding a URL, whose credentials and query values are masked for display."""
    return name == "url" or name.endswith("_url")


def _masked_repr(obj: Any) -> str:
    parts = []
    for f in dataclasses.fields(obj):
        value = getattr(obj, f.name)
        if f.name in SECRET_FIELDS and isinstance(value, str):
            value = mask_secret(value)
        elif _is_url(f.name):
            value = mask_url(value)
        elif f.name == "extra_headers":
            value = {name: MASK for name in value}
        parts.append(f"{f.name}={value!r}")
    return f"{type(obj).__name__}({', '.join(parts)})"


@dataclass(repr=False)
class ModelConfig:
    api_key: str = ""
    api_url: str = ""
    model_name: str = ""
    max_context_tokens: int = 0
    connect_timeout: float = 10.0
    read_timeout: float = 120.0
    max_retries: int = 3
    temperature: float | None = None
    max_tokens: int | None = None
    extra_headers: dict[str, str] = field(default_factory=dict)

    __repr__ = _masked_repr

    @property
    def is_set(self) -> bool:
        return bool(self.model_name and self.api_url)


@dataclass(repr=False)
class EmbeddingConfig:
    provider: str = (
        ""  # "" / "local" (built-in hashing embedder) or "openai" (an /embeddings endpoint)
    )
    model: str = ""
    api_url: str = ""
    api_key: str = ""
    dimension: int = 0

    __repr__ = _masked_repr


@dataclass
class SubagentsConfig:
    """Limits on the subagents a turn starts (``agent.subagents``); a subagent never starts
    subagents of its own."""

    max_parallel: int = 3  # children running at once, across the process
    timeout: float = 600.0  # seconds one child may run (an identity may ask for less)
    turn_tokens: int = 200_000  # tokens all children of one turn may use (0: no limit)
    turn_seconds: float = 1800.0  # wall time all children of one turn may take (0: no limit)


@dataclass
class EvolutionConfig:
    """The evolution pass (``agent.evolution``; ``evaluation/evolution.py``): tool usage
    statistics, suggestions, ``TOOLS.md`` and skill housekeeping on the background worker."""

    interval: float = 3600.0  # seconds between passes at most; 0 turns the pass off
    window_days: float = 30.0  # how far back the statistics look
    retire_skills: bool = True  # weak skills of the user's move to <home>/skills/.retired


@dataclass
class AgentConfig:
    max_iterations: int = 50
    workspace: str = ""  # empty: the current directory at start
    # auto: run tools; ask: confirm mutating tools; never: refuse them (the agent's own records —
    # conversation, memories, todos, plans — are still written; see README "Safety")
    approval: str = "auto"
    allow_outside_workspace: bool = False
    allow_private_fetch: bool = False  # toolkit_web_fetch may read loopback/private addresses
    exec_timeout: float = 30.0
    tool_output_limit: int = 128 * 1024
    prompt: str = "auto"  # compact | full | auto (compact for windows of 16k tokens or less)
    # shell commands under bubblewrap: auto (where it works) | off | required (refuse without)
    sandbox: str = "auto"
    sandbox_network: bool = True
    subagents: SubagentsConfig = field(default_factory=SubagentsConfig)
    evolution: EvolutionConfig = field(default_factory=EvolutionConfig)


@dataclass(repr=False)
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 8080
    api_key: str = ""
    cors_origins: list[str] = field(default_factory=list)
    allowed_hosts: list[str] = field(default_factory=list)
    # PostgreSQL store: seconds an instance holds a session's turns without renewing; another
    # instance takes over the session's queue when a dead instance's lease runs out
    turn_lease: float = 20.0

    __repr__ = _masked_repr


@dataclass(repr=False)
class ToolsConfig:
    """Endpoints of the tools that call public services; empty means the public service. Point
    them at a mirror, a self-hosted service or a test server; URLs may carry a key (masked)."""

    search_url: str = ""  # toolkit_search: an endpoint serving DuckDuckGo's HTML results page
    open_meteo_url: str = ""  # toolkit_weather_my: an Open-Meteo forecast endpoint
    geocoding_url: str = ""  # toolkit_weather_my: an Open-Meteo geocoding (place search) endpoint

    __repr__ = _masked_repr


@dataclass(repr=False)
class StoreConfig:
    """Where conversations, memories and tasks are kept: empty for the SQLite file
    ``<home>/chat.db``, or ``postgresql://user:password@host:port/database`` for a PostgreSQL
    database that several instances share (needs the ``postgres`` extra; the password is
    masked wherever the URL is shown)."""

    url: str = ""

    __repr__ = _masked_repr


STORE_SCHEMES = ("postgresql://", "postgres://")

# Which environment variable fills which tools: key the file leaves empty.
TOOLS_ENV = {
    "search_url": "TEA_AGENT_SEARCH_URL",
    "open_meteo_url": "TEA_AGENT_OPEN_METEO_URL",
    "geocoding_url": "TEA_AGENT_GEOCODING_URL",
}


@dataclass
class Config:
    main_model: ModelConfig = field(default_factory=ModelConfig)
    cheap_model: ModelConfig = field(default_factory=ModelConfig)
    embedding: EmbeddingConfig = field(default_factory=EmbeddingConfig)
    agent: AgentConfig = field(default_factory=AgentConfig)
    server: ServerConfig = field(default_factory=ServerConfig)
    tools: ToolsConfig = field(default_factory=ToolsConfig)
    store: StoreConfig = field(default_factory=StoreConfig)
    mcp_servers: dict[str, Any] = field(default_factory=dict, repr=False)  # args may hold tokens
    profile: str = DEFAULT_PROFILE
    source: Path | None = None
    home: Path = field(default_factory=home_dir)

    @property
    def cheap(self) -> ModelConfig:
        """The cheap model, falling back to the main model when it is not configured."""
        return self.cheap_model if self.cheap_model.model_name else self.main_model

    @property
    def workspace(self) -> Path:
        raw = self.agent.workspace.strip()
        return Path(raw).expanduser().resolve() if raw else Path.cwd().resolve()

    @property
    def db_path(self) -> Path:
        """The SQLite file, used unless ``store.url`` names a PostgreSQL database."""
        return self.home / "chat.db"

    @property
    def store_target(self) -> str | Path:
        """What ``Store.open`` opens: ``store.url`` when set, else :attr:`db_path`."""
        return self.store.url or self.db_path

    def require_model(self) -> ModelConfig:
        """The main model, or a ConfigError that says how to configure one."""
        where = str(self.source) if self.source else f"{self.home / 'config.yaml'} (not found)"
        if not self.main_model.model_name:
            raise ConfigError(
                f"{where}: main_model.model_name is not set; expected the model's name "
                "(or set TEA_AGENT_MODEL)"
            )
        if not self.main_model.api_url:
            raise ConfigError(
                f"{where}: main_model.api_url is not set; expected the model server's base URL "
                "such as http://127.0.0.1:11434/v1 (Ollama) (or set OPENAI_BASE_URL)"
            )
        if not self.main_model.api_url.startswith(("http://", "https://")):
            raise ConfigError(
                f"{where}: main_model.api_url: expected an http:// or https:// URL, "
                f"got {self.main_model.api_url!r}"
            )
        return self.main_model


SECTIONS: dict[str, type] = {
    "main_model": ModelConfig,
    "cheap_model": ModelConfig,
    "embedding": EmbeddingConfig,
    "agent": AgentConfig,
    "server": ServerConfig,
    "tools": ToolsConfig,
    "store": StoreConfig,
}
ALIASES = {"embedding_model": "embedding"}
SECTION_ALIASES = {"embedding": {"model_name": "model"}}


def profile_path(name: str, home: Path) -> Path:
    """The YAML file of a profile; names are plain words, never paths."""
    if name == DEFAULT_PROFILE:
        return home / "config.yaml"
    if not PROFILE_NAME.match(name) or name.endswith((".yaml", ".yml")):
        raise ConfigError(
            f"profile {name!r}: expected a name of letters, digits, '-', '_' or '.', not a path"
        )
    return home / f"{name}.yaml"


def list_profiles(home: Path | None = None) -> list[str]:
    home = home_dir() if home is None else home
    names = [DEFAULT_PROFILE] if (home / "config.yaml").is_file() else []
    if home.is_dir():
        for path in sorted(home.glob("*.yaml")):
            if path.stem != "config" and PROFILE_NAME.match(path.stem):
                names.append(path.stem)
    return names


def load_config(
    profile: str | None = None,
    *,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> Config:
    """Read the profile's YAML (if present), validate it, then apply environment fallbacks.

    Raises:
        ConfigError: the profile is missing or unreadable, or its values are wrong (every
            problem of the file in one error).
    """
    env = os.environ if env is None else env
    home = home_dir(env) if home is None else home
    name = profile or env.get("TEA_AGENT_PROFILE", "") or DEFAULT_PROFILE
    path = profile_path(name, home)
    data: dict[str, Any] = {}
    source = None
    if path.is_file():
        data = read_yaml(path)
        source = path
    elif name != DEFAULT_PROFILE:
        known = ", ".join(list_profiles(home)) or "none"
        raise ConfigError(f"profile {name!r} not found: no {path} (profiles: {known})")
    config, problems = _parse(data)
    config.profile, config.source, config.home = name, source, home
    apply_env(config, env)
    _normalise_urls(config)
    problems += value_problems(config)
    if problems:
        raise ConfigError(_report(str(path), problems))
    return config


def read_yaml(path: Path) -> dict[str, Any]:
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
        data = yaml.safe_load(text)
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read ({exc.__class__.__name__}: {exc})") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: invalid YAML{_yaml_problem(exc)}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of sections, got {type(data).__name__}")
    return data


def _yaml_problem(exc: Exception) -> str:
    """`` at line L, column C: reason (while …, from line L2, column C2)`` as far as known."""
    mark = getattr(exc, "problem_mark", None)
    text = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    problem = getattr(exc, "problem", None)
    if problem:
        text += f": {problem}"
    context, context_mark = getattr(exc, "context", None), getattr(exc, "context_mark", None)
    if context and context_mark is not None:
        text += f" ({context}, from line {context_mark.line + 1}, column {context_mark.column + 1})"
    elif context:
        text += f" ({context})"
    return text


def config_from_dict(data: Mapping[str, Any], *, where: str = "config") -> Config:
    """Build a Config from parsed YAML, checking keys and types (values: see :func:`normalise`).

    Raises:
        ConfigError: naming ``where`` and, for every wrong key, the key and what was expected.
    """
    config, problems = _parse(data)
    if problems:
        raise ConfigError(_report(where, problems))
    return config


def _report(where: str, problems: list[str]) -> str:
    if len(problems) == 1:
        return f"{where}: {problems[0]}"
    return f"{where}: {len(problems)} problems:\n" + "\n".join(f"  {p}" for p in problems)


def _parse(data: Mapping[str, Any]) -> tuple[Config, list[str]]:
    """The Config, with defaults where a value is wrong, and every problem found."""
    config = Config()
    problems: list[str] = []
    for raw_key, value in data.items():
        key = ALIASES.get(str(raw_key), str(raw_key))
        if key == "mcp_servers":
            config.mcp_servers = _check_mapping(value, key, problems)
        elif key in SECTIONS:
            setattr(config, key, _build_section(SECTIONS[key], value, key, problems))
        else:
            known = ", ".join([*SECTIONS, "mcp_servers"])
            problems.append(f"unknown top-level key {raw_key!r}; expected one of {known}")
    return config, problems


def _check_mapping(value: Any, key: str, problems: list[str]) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        problems.append(f"{key} must be a mapping, got {type(value).__name__}")
        return {}
    return dict(value)


def _build_section(cls: type, value: Any, key: str, problems: list[str]) -> Any:
    values = _check_mapping(value, key, problems)
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    renames = SECTION_ALIASES.get(key, {})
    kwargs: dict[str, Any] = {}
    for raw_name, item in values.items():
        name = renames.get(raw_name, raw_name)
        if name not in names:
            expected = ", ".join(sorted(names))
            problems.append(f"unknown key {key}.{raw_name}; expected one of {expected}")
            continue
        if dataclasses.is_dataclass(hints[name]):  # a nested section, e.g. agent.subagents
            kwargs[name] = _build_section(hints[name], item, f"{key}.{raw_name}", problems)
            continue
        try:
            secret = raw_name in SECRET_FIELDS
            kwargs[name] = coerce(item, hints[name], f"{key}.{raw_name}", secret=secret)
        except ConfigError as exc:
            problems.append(str(exc))
    return cls(**kwargs)


def apply_env(config: Config, env: Mapping[str, str]) -> None:
    """Environment variables fill only what the file left empty."""
    main = config.main_model
    main.api_key = main.api_key or env.get("OPENAI_API_KEY", "")
    main.api_url = main.api_url or env.get("OPENAI_BASE_URL", "")
    main.model_name = main.model_name or env.get("TEA_AGENT_MODEL", "")
    if main.model_name and not main.api_url and main.api_key:
        main.api_url = "https://api.openai.com/v1"
    config.server.api_key = config.server.api_key or env.get("TEA_AGENT_API_KEY", "")
    for name, variable in TOOLS_ENV.items():
        if not getattr(config.tools, name):
            setattr(config.tools, name, env.get(variable, ""))
    config.store.url = config.store.url or env.get("TEA_AGENT_STORE_URL", "")


def normalise(config: Config) -> None:
    """Tidy the model URLs and check the values whose type alone does not make them valid.

    Raises:
        ConfigError: every value that is out of range, in one error.
    """
    _normalise_urls(config)
    problems = value_problems(config)
    if problems:
        raise ConfigError(_report(str(config.source or config.home / "config.yaml"), problems))


def _normalise_urls(config: Config) -> None:
    for model in (config.main_model, config.cheap_model):
        url = model.api_url.strip().rstrip("/")
        for suffix in ("/chat/completions", "/completions"):
            if url.endswith(suffix):
                url = url[: -len(suffix)]
        model.api_url = url


def value_problems(config: Config) -> list[str]:
    """What is wrong with values of the right type (an unknown mode, a port out of range)."""
    agent = config.agent
    problems = [
        f"agent.{key}: expected one of {', '.join(allowed)}, got {value!r}"
        for key, value, allowed in (
            ("approval", agent.approval, APPROVAL_MODES),
            ("prompt", agent.prompt, PROMPT_PROFILES),
            ("sandbox", agent.sandbox, SANDBOX_MODES),
        )
        if value not in allowed
    ]
    if agent.max_iterations < 1:
        problems.append(
            f"agent.max_iterations: expected a positive integer, got {agent.max_iterations}"
        )
    if agent.subagents.max_parallel < 1:
        problems.append(
            "agent.subagents.max_parallel: expected a positive integer, "
            f"got {agent.subagents.max_parallel}"
        )
    if agent.evolution.interval < 0 or agent.evolution.window_days <= 0:
        problems.append("agent.evolution: interval must be 0 or more, window_days above 0")
    if not 0 < config.server.port < 65536:
        problems.append(f"server.port: expected 1-65535, got {config.server.port}")
    url = config.store.url
    if url and not url.startswith(STORE_SCHEMES):
        problems.append(
            "store.url: expected empty (the SQLite file chat.db) or "
            f"postgresql://user:password@host/database, got {mask_url(url)!r}"
        )
    return problems


def config_to_dict(config: Config, *, mask: bool = True) -> dict[str, Any]:
    """The config as plain data for display or saving. Unless ``mask=False``, keys show their
    last four characters, URLs lose credentials and query values, header values and MCP server
    entries (whose args, env and headers may hold tokens) are hidden."""
    out: dict[str, Any] = {}
    for key in SECTIONS:
        section = dataclasses.asdict(getattr(config, key))
        if mask:
            for name in SECRET_FIELDS & section.keys():
                section[name] = mask_secret(section[name])
            for name in [name for name in section if _is_url(name)]:
                section[name] = mask_url(section[name])
            if "extra_headers" in section:
                section["extra_headers"] = {name: MASK for name in section["extra_headers"]}
        out[key] = section
    if config.mcp_servers:
        servers = config.mcp_servers
        out["mcp_servers"] = {name: MASK for name in servers} if mask else servers
    return out
