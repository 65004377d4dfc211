"""Which MCP servers to run: read from ``mcp_servers:`` in config.yaml and ``mcp_servers.json``.

Both use the shape other MCP clients use, so existing files can be dropped in::

    {"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."],
                  "env": {"DEBUG": "1"}, "cwd": "/tmp"},
        "remote": {"url": "https://example.com/mcp",
                   "headers": {"Authorization": "Bearer ${TOKEN}"}}
    }}

``${NAME}`` in args, env, url and headers is replaced from the environment when the servers are
loaded; a server's ``target`` (what toolkit_mcp shows) is built from the unexpanded entry, with
URL credentials and query values masked, and its ``secrets`` (the expanded values, header values,
secret-looking env values) are masked in its errors and its tools' output.

Keys other clients add (``autoApprove``, ``description`` ...) are ignored. A bad entry
becomes an error for that server alone.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tea_agent_mini.errors import ConfigError
from tea_agent_mini.redact import (
    SECRET_NAME,
    TEMPLATE,
    arg_secrets,
    header_secrets,
    mask_args,
    mask_url,
    url_secrets,
)

SERVERS_FILE = "mcp_servers.json"
STDIO_TYPES = frozenset({"stdio"})
HTTP_TYPES = frozenset({"http", "streamable-http", "streamable_http", "streamablehttp"})


@dataclass(frozen=True)
class ServerConfig:
    """One server: a command to run (stdio) or a URL to POST to (streamable HTTP)."""

    name: str
    command: str = ""
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    cwd: str = ""
    url: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    timeout: float | None = None  # per-request timeout; None: the manager's default
    enabled: bool = True
    source: str = ""
    shown: str = field(default="", compare=False)  # the target as configured, credentials masked
    secrets: tuple[str, ...] = field(default=(), compare=False)

    def __repr__(self) -> str:
        return f"ServerConfig(name={self.name!r}, target={self.target!r})"

    @property
    def transport(self) -> str:
        return "http" if self.url else "stdio"

    @property
    def target(self) -> str:
        """What to show: never an expanded ``${VAR}``, a URL credential or a query value."""
        if self.shown:
            return self.shown
        return mask_url(self.url) if self.url else " ".join([self.command, *mask_args(self.args)])


@dataclass
class ServerList:
    """The parsed servers, and the entries (or files) that could not be used, with why."""

    servers: dict[str, ServerConfig] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)  # server name -> what is wrong
    file_errors: list[str] = field(default_factory=list)


def load_servers(
    config_servers: Mapping[str, Any] | None,
    home: Path,
    env: Mapping[str, str] | None = None,
) -> ServerList:
    """Servers from ``<home>/mcp_servers.json``, then from config.yaml (which wins on a name)."""
    env = os.environ if env is None else env
    found = ServerList()
    path = home / SERVERS_FILE
    if path.is_file():
        try:
            _add_entries(found, _read_json(path), str(path), env)
        except ConfigError as exc:
            found.file_errors.append(str(exc))
    _add_entries(found, dict(config_servers or {}), "config.yaml: mcp_servers", env)
    return found


def parse_server(name: str, raw: Any, where: str, env: Mapping[str, str]) -> ServerConfig:
    """One entry. Raises ConfigError naming the entry, the key and what was expected."""
    label = f"{where}: server {name!r}"
    if not isinstance(raw, dict):
        raise ConfigError(f"{label}: expected a mapping, got {type(raw).__name__}")
    kind = str(raw.get("type") or raw.get("transport") or "").strip().lower()
    command = _string(raw, "command", label)
    raw_url = _string(raw, "url", label)
    url = _expand(raw_url, env)
    if kind == "sse":
        raise ConfigError(
            f"{label}: the old HTTP+SSE transport is not supported; use a "
            "streamable HTTP endpoint (type: http)"
        )
    if kind and kind not in STDIO_TYPES | HTTP_TYPES:
        raise ConfigError(f"{label}: unknown type {kind!r}; expected stdio or http")
    if kind in HTTP_TYPES or (url and not command):
        if not re.match(r"^https?://", url):
            shown = mask_url(raw_url)
            raise ConfigError(f"{label}: url must start with http:// or https://, got {shown!r}")
        command = ""
    elif not command:
        raise ConfigError(f"{label}: needs a command (stdio) or a url (streamable HTTP)")
    else:
        url = raw_url = ""
    templates = _Templates(
        args=_string_list(raw, "args", label),
        env=_string_map(raw, "env", label),
        headers=_string_map(raw, "headers", label),
    )
    server = ServerConfig(
        name=name,
        command=command,
        args=tuple(_expand(arg, env) for arg in templates.args),
        env={key: _expand(value, env) for key, value in templates.env.items()},
        cwd=os.path.expanduser(_string(raw, "cwd", label)),
        url=url,
        headers={key: _expand(value, env) for key, value in templates.headers.items()},
        timeout=_timeout(raw, label),
        enabled=not raw.get("disabled", False) and raw.get("enabled", True) is not False,
        source=where,
    )
    shown = mask_url(raw_url) if url else " ".join([command, *mask_args(templates.args)])
    secrets = _secrets(server, [raw_url, *templates.strings()], env)
    return dataclasses.replace(server, shown=shown, secrets=secrets)


@dataclass(frozen=True)
class _Templates:
    """An entry's strings as written, before ``${VAR}`` expansion."""

    args: list[str]
    env: dict[str, str]
    headers: dict[str, str]

    def strings(self) -> list[str]:
        return [*self.args, *self.env.values(), *self.headers.values()]


def _secrets(server: ServerConfig, templates: list[str], env: Mapping[str, str]) -> tuple[str, ...]:
    """What must not be shown: every value put in by ``${VAR}``, URL credentials and query
    values, secret-looking arguments, header values and the values of secret-looking env keys."""
    found = [env.get(name, "") for text in templates for name in TEMPLATE.findall(text)]
    found += url_secrets(server.url) + arg_secrets(server.args) + header_secrets(server.headers)
    found += [value for key, value in server.env.items() if SECRET_NAME.search(key)]
    return tuple(dict.fromkeys(value for value in found if value))


def _add_entries(found: ServerList, data: dict[str, Any], where: str, env: Mapping[str, str]):
    entries = data.get("mcpServers", data) if isinstance(data, dict) else data
    if not isinstance(entries, dict):
        found.file_errors.append(f"{where}: expected a mapping of server names")
        return
    for name, raw in entries.items():
        name = str(name)
        try:
            found.servers[name] = parse_server(name, raw, where, env)
            found.errors.pop(name, None)
        except ConfigError as exc:
            found.servers.pop(name, None)
            found.errors[name] = str(exc)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc})") from exc
    except ValueError as exc:
        raise ConfigError(f"{path}: invalid JSON ({exc})") from exc


def _string(raw: dict[str, Any], key: str, label: str) -> str:
    value = raw.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ConfigError(f"{label}: {key} must be a string, got {type(value).__name__}")
    return value.strip()


def _string_list(raw: dict[str, Any], key: str, label: str) -> list[str]:
    value = raw.get(key) or []
    if not isinstance(value, list) or any(isinstance(v, (dict, list)) for v in value):
        raise ConfigError(f"{label}: {key} must be a list of strings")
    return [str(v) for v in value]


def _string_map(raw: dict[str, Any], key: str, label: str) -> dict[str, str]:
    value = raw.get(key) or {}
    if not isinstance(value, dict):
        raise ConfigError(f"{label}: {key} must be a mapping of strings")
    return {str(k): "" if v is None else str(v) for k, v in value.items()}


def _timeout(raw: dict[str, Any], label: str) -> float | None:
    value = raw.get("timeout")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ConfigError(f"{label}: timeout must be a positive number of seconds")
    # other clients write milliseconds; nobody waits more than an hour for one call
    return value / 1000 if value > 3600 else float(value)


def _expand(text: str, env: Mapping[str, str]) -> str:
    return TEMPLATE.sub(lambda m: env.get(m.group(1), ""), text)
