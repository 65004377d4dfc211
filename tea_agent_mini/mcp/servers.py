"""Which MCP servers to run: read from ``mcp_servers:`` in config.yaml and ``mcp_servers.json``.

Both use the shape other MCP clients use, so existing files can be dropped in::

    {"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."],
                  "env": {"DEBUG": "1"}, "cwd": "/tmp"},
        "remote": {"url": "https://example.com/mcp",
                   "headers": {"Authorization": "Bearer ${TOKEN}"}}
    }}

``${NAME}`` in args, env, url and headers is replaced from the environment when the servers are
loaded. Keys other clients add (``autoApprove``, ``description`` ...) are ignored. A bad entry
becomes an error for that server alone.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tea_agent_mini.errors import ConfigError

SERVERS_FILE = "mcp_servers.json"
STDIO_TYPES = frozenset({"stdio"})
HTTP_TYPES = frozenset({"http", "streamable-http", "streamable_http", "streamablehttp"})
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


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

    @property
    def transport(self) -> str:
        return "http" if self.url else "stdio"

    @property
    def target(self) -> str:
        return self.url or " ".join([self.command, *self.args])


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
    url = _expand(_string(raw, "url", label), env)
    if kind == "sse":
        raise ConfigError(
            f"{label}: the old HTTP+SSE transport is not supported; use a "
            "streamable HTTP endpoint (type: http)"
        )
    if kind and kind not in STDIO_TYPES | HTTP_TYPES:
        raise ConfigError(f"{label}: unknown type {kind!r}; expected stdio or http")
    if kind in HTTP_TYPES or (url and not command):
        if not re.match(r"^https?://", url):
            raise ConfigError(f"{label}: url must start with http:// or https://, got {url!r}")
        command = ""
    elif not command:
        raise ConfigError(f"{label}: needs a command (stdio) or a url (streamable HTTP)")
    else:
        url = ""
    return ServerConfig(
        name=name,
        command=command,
        args=tuple(_expand(arg, env) for arg in _string_list(raw, "args", label)),
        env={key: _expand(value, env) for key, value in _string_map(raw, "env", label).items()},
        cwd=os.path.expanduser(_string(raw, "cwd", label)),
        url=url,
        headers={k: _expand(v, env) for k, v in _string_map(raw, "headers", label).items()},
        timeout=_timeout(raw, label),
        enabled=not raw.get("disabled", False) and raw.get("enabled", True) is not False,
        source=where,
    )


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
    return _VARIABLE.sub(lambda m: env.get(m.group(1), ""), text)
