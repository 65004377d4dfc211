"""Keeping configured secrets out of what is shown: URLs, command lines, error texts, log lines.

A secret reaches text in three ways, each with its guard here:

- inside a URL (``user:pass@host``, ``?api_key=…``): :func:`mask_url` keeps the scheme, host,
  path and query keys and masks the rest;
- expanded from ``${VAR}`` into a command line: a command is shown from its unexpanded template,
  with the values of secret-looking flags masked (:func:`mask_args`);
- echoed back by a server or a library in an error or a log line: :func:`mask_text` replaces
  every known secret, and :class:`SecretFilter` does that for each record a log handler writes.

Every secret a configuration holds is listed by ``runtime.config_secrets`` (it needs the MCP
servers' entries, which this leaf module does not read).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Iterator, Sequence
from urllib.parse import unquote, urlsplit, urlunsplit

MASK = "****"
MIN_SECRET = 4  # shorter values ("1", "dev") would mask ordinary words everywhere
TEMPLATE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
SECRET_NAME = re.compile(r"key|token|secret|passw|auth|credential|cookie", re.IGNORECASE)
_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")


def mask_secret(value: str) -> str:
    """``sk-abcdef1234`` -> ``****1234``; short or empty values are fully hidden."""
    if not value:
        return ""
    return MASK + value[-4:] if len(value) > 8 else MASK


def mask_url(url: str) -> str:
    """``https://u:p@host/x?api_key=k&v=2`` -> ``https://****@host/x?api_key=****&v=****``."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return MASK
    netloc = parts.netloc
    if "@" in netloc:
        netloc = MASK + "@" + netloc.rpartition("@")[2]
    return urlunsplit(
        (parts.scheme, netloc, parts.path, _mask_pairs(parts.query), _mask_pairs(parts.fragment))
    )


def _mask_pairs(text: str) -> str:
    if not text:
        return text
    pairs = []
    for pair in text.split("&"):
        key, eq, value = pair.partition("=")
        pairs.append(f"{key}={MASK}" if eq and value else pair if eq else MASK)
    return "&".join(pairs)


def url_secrets(url: str) -> list[str]:
    """The parts of ``url`` that :func:`mask_url` hides, as written and percent-decoded."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return [url]
    found: list[str] = []
    if "@" in parts.netloc:
        user, _, password = parts.netloc.rpartition("@")[0].partition(":")
        found += [user, password]
    for text in (parts.query, parts.fragment):
        for pair in text.split("&") if text else ():
            key, eq, value = pair.partition("=")
            found.append(value if eq else key)
    return usable_secrets([*found, *(unquote(value) for value in found)])


def mask_args(args: Sequence[str]) -> list[str]:
    """A command's arguments for display: URLs masked, and the value of a secret-looking flag
    (``--token X``, ``--api-key=X``, ``API_KEY=X``) masked unless it is a ``${VAR}`` template."""
    return [shown for shown, _ in _split_args(args)]


def arg_secrets(args: Sequence[str]) -> list[str]:
    """The values in ``args`` that :func:`mask_args` hides."""
    return usable_secrets(value for _, hidden in _split_args(args) for value in hidden)


def _split_args(args: Sequence[str]) -> Iterator[tuple[str, list[str]]]:
    """Each argument as shown, with the values hidden from it."""
    hide_next = False
    for arg in args:
        hiding, hide_next = hide_next, False
        name, eq, value = arg.partition("=")
        if hiding and not arg.startswith("-"):
            yield (arg, []) if TEMPLATE.fullmatch(arg) else (MASK, [arg])
        elif _URL.match(arg):
            yield mask_url(arg), url_secrets(arg)
        elif eq and _URL.match(value):
            yield f"{name}={mask_url(value)}", url_secrets(value)
        elif eq and SECRET_NAME.search(name) and not TEMPLATE.fullmatch(value):
            yield f"{name}={MASK}", [value]
        else:
            hide_next = arg.startswith("-") and not eq and bool(SECRET_NAME.search(arg))
            yield arg, []


def header_secrets(headers: dict[str, str]) -> list[str]:
    """Every header value, and its last word (the token of ``Bearer <token>``)."""
    found: list[str] = []
    for value in headers.values():
        found += [value, *value.split()[-1:]]
    return usable_secrets(found)


def mask_text(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every occurrence of each known secret (longest first) masked."""
    for secret in sorted(set(secrets), key=len, reverse=True):
        if len(secret) >= MIN_SECRET and secret in text:
            text = text.replace(secret, mask_secret(secret))
    return text


def usable_secrets(values: Iterable[str]) -> list[str]:
    """The values long enough to mask, each once, in their order."""
    return list(dict.fromkeys(v for v in values if len(v) >= MIN_SECRET))


class SecretFilter(logging.Filter):
    """Masks known secrets in the message and traceback of every record a handler writes."""

    def __init__(self) -> None:
        super().__init__()
        self.secrets: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.secrets:
            return True
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # a malformed call; logging reports it when formatting
            return True
        masked = mask_text(message, self.secrets)
        if masked != message:
            record.msg, record.args = masked, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = mask_text(record.exc_text, self.secrets)
        return True


def guard_logs(secrets: Iterable[str], logger: logging.Logger | None = None) -> None:
    """Mask ``secrets`` in everything the handlers of ``logger`` (the root logger) write."""
    wanted = usable_secrets(secrets)
    for handler in (logger or logging.getLogger()).handlers:
        found = next((f for f in handler.filters if isinstance(f, SecretFilter)), None)
        if found is None:
            found = SecretFilter()
            handler.addFilter(found)
        found.secrets.update(wanted)
