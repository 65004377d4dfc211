"""toolkit_send_email: plain-text email over SMTP, with settings from ``<home>/email.yaml`` only.

The module is not called ``email`` so that it never shadows the standard library package.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import tool

CONFIG_NAME = "email.yaml"
EXAMPLE = (
    "host: smtp.example.com\nport: 587\nusername: me@example.com\npassword: app-password\n"
    "from: Me <me@example.com>\nstarttls: true"
)
KNOWN_KEYS = frozenset(
    {"host", "port", "username", "password", "from", "starttls", "ssl", "timeout"}
)
_ADDRESS = re.compile(r"^[^@\s<>,;]+@[^@\s<>,;]+$")


@dataclass(frozen=True)
class SmtpSettings:
    host: str
    port: int
    sender: str
    username: str = ""
    password: str = field(default="", repr=False)
    starttls: bool = True
    ssl: bool = False
    timeout: float = 30.0


def load_settings(home: Path) -> SmtpSettings:
    """Read ``<home>/email.yaml``. Raises ToolError saying what is missing or wrong."""
    path = Path(home) / CONFIG_NAME
    if not path.is_file():
        raise ToolError(
            f"email is not set up: {path} does not exist. The user has to create it, e.g.\n"
            f"{EXAMPLE}\n(use ssl: true and port 465 for SMTPS)"
        )
    import yaml

    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ToolError(f"cannot read {path}: {exc}") from exc
    if not isinstance(raw, dict):
        raise ToolError(f"{path} must hold a mapping of settings (host, port, ...)")
    unknown = set(raw) - KNOWN_KEYS
    if unknown:
        raise ToolError(f"{path}: unknown setting(s) {', '.join(sorted(map(str, unknown)))}")
    host = str(raw.get("host") or "").strip()
    if not host:
        raise ToolError(f"{path} has no 'host' (the SMTP server)")
    use_ssl = _flag(raw, "ssl", False, path)
    starttls = _flag(raw, "starttls", not use_ssl, path) and not use_ssl
    username = str(raw.get("username") or "")
    sender = str(raw.get("from") or username)
    if not _ADDRESS.match(_bare_address(sender)):
        raise ToolError(f"{path} needs 'from' (or a username that is an email address)")
    try:
        port = int(raw.get("port") or (465 if use_ssl else 587 if starttls else 25))
        timeout = float(raw.get("timeout") or 30.0)
    except (TypeError, ValueError) as exc:
        raise ToolError(f"{path}: port and timeout must be numbers") from exc
    return SmtpSettings(
        host, port, sender, username, str(raw.get("password") or ""), starttls, use_ssl, timeout
    )


def _flag(raw: dict[str, Any], key: str, default: bool, path: Path) -> bool:
    value = raw.get(key, default)
    if not isinstance(value, bool):
        raise ToolError(f"{path}: '{key}' must be true or false")
    return value


def _bare_address(text: str) -> str:
    from email.utils import parseaddr

    return parseaddr(text)[1]


@tool("toolkit_send_email", requires=("yaml",), mutates=True)
def toolkit_send_email(
    ctx: ToolContext, to: str, subject: str, body: str, cc: str | None = None
) -> str:
    """Send a plain-text email through the user's SMTP server. The server, account and sender
    come from the user's email settings file, never from arguments; if it is missing the
    result says how to create it. Sending cannot be undone: only send what the user asked
    for, to the addresses they gave.

    Args:
        to: recipient address(es), comma-separated, e.g.
            'Ann <ann@example.com>, bob@example.com'
        subject: subject line
        body: the message, plain text
        cc: optional copy recipient(s), comma-separated
    """
    recipients = parse_addresses(to, "to")
    copies = parse_addresses(cc, "cc") if cc and cc.strip() else []
    if not recipients:
        raise ToolError("'to' has no recipient address")
    settings = load_settings(ctx.home)
    if settings.username and not (settings.ssl or settings.starttls) and not _local(settings.host):
        raise ToolError(
            f"refusing to send the password unencrypted to {settings.host}; set 'starttls: true' "
            f"or 'ssl: true' in {ctx.home / CONFIG_NAME}"
        )
    message = build_message(settings.sender, recipients, copies, subject, body)
    envelope = [address for _, address in recipients + copies]
    try:
        refused = _deliver(settings, message, envelope)
    except ToolError as exc:
        raise ToolError(_redact(str(exc), settings.password)) from None
    where = f"{settings.host}:{settings.port}"
    text = f"Email sent to {', '.join(a for _, a in recipients)}"
    if copies:
        text += f" (cc: {', '.join(a for _, a in copies)})"
    text += f" via {where}, subject {subject!r}."
    if refused:
        text += f" The server refused: {', '.join(sorted(refused))}."
    return text


def parse_addresses(text: str | None, what: str) -> list[tuple[str, str]]:
    """(display name, address) pairs; raises ToolError for anything that is not an address."""
    from email.utils import getaddresses

    if not text:
        return []
    pairs = getaddresses([text.replace(";", ",")])
    bad = [address or name for name, address in pairs if not _ADDRESS.match(address)]
    if bad or not pairs:
        raise ToolError(f"'{what}' has an invalid address: {', '.join(bad) or text!r}")
    return pairs


def build_message(
    sender: str,
    recipients: list[tuple[str, str]],
    copies: list[tuple[str, str]],
    subject: str,
    body: str,
) -> Any:
    from email.message import EmailMessage
    from email.utils import formataddr, formatdate, make_msgid

    message = EmailMessage()
    message["From"] = sender
    message["To"] = ", ".join(formataddr(pair) for pair in recipients)
    if copies:
        message["Cc"] = ", ".join(formataddr(pair) for pair in copies)
    message["Subject"] = subject
    message["Date"] = formatdate(localtime=True)
    # An explicit domain: without one make_msgid looks up this host's FQDN, which can hang.
    message["Message-ID"] = make_msgid(domain=_bare_address(sender).rpartition("@")[2])
    message.set_content(body)
    return message


def _deliver(settings: SmtpSettings, message: Any, envelope: list[str]) -> dict[str, Any]:
    import smtplib
    import ssl

    target = f"{settings.host}:{settings.port}"
    context = ssl.create_default_context()
    client: smtplib.SMTP
    try:
        if settings.ssl:
            client = smtplib.SMTP_SSL(
                settings.host, settings.port, timeout=settings.timeout, context=context
            )
        else:
            client = smtplib.SMTP(settings.host, settings.port, timeout=settings.timeout)
        with client:
            if settings.starttls:
                client.starttls(context=context)
            if settings.username:
                client.login(settings.username, settings.password)
            return client.send_message(
                message, from_addr=_bare_address(settings.sender), to_addrs=envelope
            )
    except smtplib.SMTPNotSupportedError as exc:
        raise ToolError(f"{target} does not support {_command_of(exc)}: {exc}") from exc
    except smtplib.SMTPAuthenticationError as exc:
        raise ToolError(
            f"{target} refused the login for {settings.username!r} ({exc.smtp_code} "
            f"{_reply(exc.smtp_error)}); check username and password in {CONFIG_NAME}"
        ) from exc
    except smtplib.SMTPRecipientsRefused as exc:
        refused = ", ".join(f"{a} ({c} {_reply(r)})" for a, (c, r) in exc.recipients.items())
        raise ToolError(f"{target} refused every recipient: {refused}; nothing was sent") from exc
    except smtplib.SMTPSenderRefused as exc:
        raise ToolError(
            f"{target} refused the sender {exc.sender} ({exc.smtp_code} {_reply(exc.smtp_error)})"
        ) from exc
    except smtplib.SMTPException as exc:
        raise ToolError(f"sending through {target} failed: {exc}") from exc
    except OSError as exc:  # refused connection, timeout, TLS failure
        raise ToolError(f"could not talk to the SMTP server {target}: {exc}") from exc


def _command_of(exc: Exception) -> str:
    return "STARTTLS" if "STARTTLS" in str(exc) else "that command"


def _reply(raw: Any) -> str:
    return raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)


def _redact(text: str, password: str) -> str:
    return text.replace(password, "***") if password else text


def _local(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
