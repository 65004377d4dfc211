"""Opening the server's socket before anything else starts, and what to say once it listens.

The socket is bound here rather than by uvicorn so that a port in use is one clear line before
the scheduler or the database are touched, and so that "serving" is printed only once the
server really listens.
"""

from __future__ import annotations

import errno
import socket
from urllib.parse import urlsplit

from ..config import Config
from .security import is_loopback, url_host

WILDCARDS = ("0.0.0.0", "::", "")


def open_socket(host: str, port: int) -> socket.socket:
    """A bound TCP socket for ``host`` (an address or a name, without brackets) and ``port``.

    Raises:
        OSError: the address cannot be bound; ``bind_problem`` says it in words.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)  # as asyncio binds
        sock.bind((host, port))
    except OSError:
        sock.close()
        raise
    return sock


def bind_problem(host: str, port: int, exc: OSError) -> str:
    where = f"{url_host(host)}:{port}"
    if exc.errno == errno.EADDRINUSE:
        return (
            f"port {port} is already in use on {url_host(host)} (another tea-agent-mini, or a "
            "model server?); stop that program, or pass --port / set server.port"
        )
    if exc.errno == errno.EACCES:
        return f"not allowed to listen on {where} (ports below 1024 need privileges); use --port"
    return f"cannot listen on {where}: {exc.strerror or exc}"


def started_lines(config: Config, host: str, port: int, log_file: object = None) -> list[str]:
    """What to print once the server listens: where, its log, and what to fix first."""
    url = f"http://{url_host(host)}:{port}/"
    log = f"; log: {log_file}" if log_file else ""
    lines = [f"tea-agent-mini serving {url} (API docs: /docs{log})"]
    for key in ("main_model", "cheap_model"):
        api_url = getattr(config, key).api_url
        if api_url and points_at(api_url, host, port):
            lines.append(
                f"warning: {key}.api_url {api_url} is this server itself, so chats will fail; "
                "point it at the model server (e.g. llama.cpp on port 8090, Ollama on 11434) "
                f"in {url} Settings or in the config file"
            )
    if not config.main_model.is_set:
        lines.append(f"no model is configured yet: open {url} to set one up")
    return lines


def points_at(api_url: str, host: str, port: int) -> bool:
    """Whether ``api_url`` reaches a server listening on ``host``:``port``."""
    try:
        parts = urlsplit(api_url)
        url_port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return False
    name = (parts.hostname or "").lower()
    if url_port != port:
        return False
    if host in WILDCARDS:
        return is_loopback(name) or name == socket.gethostname().lower()
    return name == host.lower() or (is_loopback(name) and is_loopback(host))
