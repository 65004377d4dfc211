"""toolkit_send_email against a minimal SMTP server (asyncio, stdlib) running on 127.0.0.1."""

from __future__ import annotations

import asyncio
import base64
import email
import email.policy
import socket
import threading
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import Toolkit
from tea_agent_mini.tools import mail

PASSWORD = "s3cret-app-password"


@dataclass
class Delivery:
    mail_from: str
    recipients: list[str]
    data: bytes


@dataclass
class SmtpSink:
    """Speaks just enough SMTP for smtplib: EHLO, AUTH PLAIN, MAIL, RCPT, DATA, RSET, QUIT."""

    credentials: tuple[str, str] | None = None
    reject: tuple[str, ...] = ()
    deliveries: list[Delivery] = field(default_factory=list)
    logins: list[tuple[str, str]] = field(default_factory=list)
    port: int = 0

    def __enter__(self) -> SmtpSink:
        self._loop = asyncio.new_event_loop()
        ready = threading.Event()

        def run() -> None:
            asyncio.set_event_loop(self._loop)
            self._server = self._loop.run_until_complete(
                asyncio.start_server(self._session, "127.0.0.1", 0)
            )
            self.port = self._server.sockets[0].getsockname()[1]
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=run, daemon=True)
        self._thread.start()
        ready.wait(10)
        return self

    def __exit__(self, *exc) -> None:
        async def stop() -> None:
            self._server.close()
            await self._server.wait_closed()

        asyncio.run_coroutine_threadsafe(stop(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    async def _session(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        def say(*lines: str) -> None:
            for line in lines:
                writer.write(line.encode() + b"\r\n")

        say("220 sink.test ESMTP ready")
        mail_from, recipients = "", []
        while line := (await reader.readline()).decode().rstrip("\r\n"):
            verb, _, rest = line.partition(" ")
            verb = verb.upper()
            if verb in ("EHLO", "HELO"):
                extensions = ["8BITMIME"] + (["AUTH PLAIN"] if self.credentials else [])
                say(
                    "250-sink.test", *(f"250-{e}" for e in extensions[:-1]), f"250 {extensions[-1]}"
                )
            elif verb == "AUTH":
                _, user, password = base64.b64decode(rest.split()[1]).decode().split("\0")
                self.logins.append((user, password))
                ok = (user, password) == self.credentials
                say("235 2.7.0 accepted" if ok else "535 5.7.8 bad credentials")
            elif verb == "MAIL":
                mail_from, recipients = rest.split(":", 1)[1].split()[0].strip("<>"), []
                say("250 2.1.0 ok")
            elif verb == "RCPT":
                address = rest.split(":", 1)[1].strip().strip("<>")
                if address in self.reject:
                    say(f"550 5.1.1 <{address}> no such user")
                else:
                    recipients.append(address)
                    say("250 2.1.5 ok")
            elif verb == "DATA":
                say("354 end with <CRLF>.<CRLF>")
                await writer.drain()
                data = await reader.readuntil(b"\r\n.\r\n")
                body = data[: -len(b".\r\n")].replace(b"\r\n..", b"\r\n.")
                self.deliveries.append(Delivery(mail_from, recipients, body))
                say("250 2.0.0 queued")
            elif verb in ("RSET", "NOOP"):
                say("250 2.0.0 ok")
            elif verb == "QUIT":
                say("221 2.0.0 bye")
                break
            else:
                say("502 5.5.2 command not implemented")
            await writer.drain()
        await writer.drain()
        writer.close()


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    home = tmp_path / "home"
    home.mkdir()
    return ToolContext(workspace=tmp_path, home=home)


def configure(ctx: ToolContext, **settings) -> None:
    (ctx.home / "email.yaml").write_text(yaml.safe_dump(settings), encoding="utf-8")


def local_settings(port: int, **extra) -> dict:
    settings = {"host": "127.0.0.1", "port": port, "from": "Tea Agent <agent@example.org>"}
    settings["starttls"] = False
    settings.update(extra)
    return settings


def send(ctx, **kwargs) -> str:
    arguments = {"to": "ann@example.com", "subject": "Hello", "body": "Hi Ann"} | kwargs
    return mail.toolkit_send_email(ctx, **arguments)


def test_message_is_delivered_with_headers_and_body(ctx):
    with SmtpSink(credentials=("agent@example.org", PASSWORD)) as sink:
        configure(ctx, **local_settings(sink.port, username="agent@example.org", password=PASSWORD))
        result = send(
            ctx,
            to="Ann Example <ann@example.com>; bob@example.net",
            cc="carol@example.com",
            subject="Tea report 茶",
            body="Line one.\n.leading dot\nGreen tea: 80 °C.\n",
        )
    assert result == (
        "Email sent to ann@example.com, bob@example.net (cc: carol@example.com) via "
        f"127.0.0.1:{sink.port}, subject 'Tea report 茶'."
    )
    assert PASSWORD not in result
    assert sink.logins == [("agent@example.org", PASSWORD)]
    (delivery,) = sink.deliveries
    assert delivery.mail_from == "agent@example.org"
    assert delivery.recipients == ["ann@example.com", "bob@example.net", "carol@example.com"]
    message = email.message_from_bytes(delivery.data, policy=email.policy.default)
    assert message["From"] == "Tea Agent <agent@example.org>"
    assert message["To"] == "Ann Example <ann@example.com>, bob@example.net"
    assert message["Cc"] == "carol@example.com"
    assert message["Subject"] == "Tea report 茶"
    assert message["Message-ID"].endswith("@example.org>")
    assert message["Date"]
    assert "Bcc" not in message
    body = message.get_content().replace("\r\n", "\n")  # SMTP carries CRLF line ends
    assert body == "Line one.\n.leading dot\nGreen tea: 80 °C.\n"


def test_without_login_when_no_username(ctx):
    with SmtpSink() as sink:
        configure(ctx, **local_settings(sink.port))
        assert send(ctx).startswith("Email sent to ann@example.com via 127.0.0.1")
    assert sink.logins == [] and len(sink.deliveries) == 1


def test_wrong_password_is_reported_without_echoing_it(ctx):
    with SmtpSink(credentials=("agent@example.org", "the-right-one")) as sink:
        configure(ctx, **local_settings(sink.port, username="agent@example.org", password=PASSWORD))
        with pytest.raises(ToolError) as caught:
            send(ctx)
    assert "refused the login for 'agent@example.org' (535" in str(caught.value)
    assert PASSWORD not in str(caught.value)
    assert sink.deliveries == []


def test_refused_recipients(ctx):
    with SmtpSink(reject=("ghost@example.com",)) as sink:
        configure(ctx, **local_settings(sink.port))
        partly = send(ctx, to="ann@example.com, ghost@example.com")
        assert partly.endswith("The server refused: ghost@example.com.")
        with pytest.raises(ToolError, match="refused every recipient: ghost@example.com \\(550"):
            send(ctx, to="ghost@example.com")
    assert [d.recipients for d in sink.deliveries] == [["ann@example.com"]]


def test_starttls_required_but_not_offered(ctx):
    with SmtpSink() as sink:
        configure(ctx, **local_settings(sink.port, starttls=True))
        with pytest.raises(ToolError, match="does not support STARTTLS"):
            send(ctx)
    assert sink.deliveries == []


def test_missing_config_says_how_to_create_it(ctx):
    with pytest.raises(ToolError, match="email is not set up: .*email.yaml does not exist") as e:
        send(ctx)
    assert "host: smtp.example.com" in str(e.value)


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"port": 25}, "has no 'host'"),
        ({"host": "127.0.0.1"}, "needs 'from'"),
        ({"host": "127.0.0.1", "from": "a@b.c", "smtp_server": "x"}, "unknown setting"),
        ({"host": "127.0.0.1", "from": "a@b.c", "ssl": "yes"}, "'ssl' must be true or false"),
        ({"host": "127.0.0.1", "from": "a@b.c", "port": "many"}, "must be numbers"),
    ],
)
def test_bad_config(ctx, settings, message):
    configure(ctx, **settings)
    with pytest.raises(ToolError, match=message):
        send(ctx)


def test_config_that_is_not_a_mapping(ctx):
    (ctx.home / "email.yaml").write_text("- just\n- a list\n", encoding="utf-8")
    with pytest.raises(ToolError, match="must hold a mapping"):
        send(ctx)


def test_plaintext_password_to_a_remote_host_is_refused(ctx):
    configure(
        ctx,
        host="mail.example.com",
        username="me@example.com",
        password=PASSWORD,
        starttls=False,
    )
    with pytest.raises(ToolError, match="refusing to send the password unencrypted") as caught:
        send(ctx)
    assert PASSWORD not in str(caught.value)


@pytest.mark.parametrize(
    ("field_name", "value"), [("to", "not-an-address"), ("to", " "), ("cc", "a@b.c, oops")]
)
def test_invalid_addresses(ctx, field_name, value):
    configure(ctx, **local_settings(1))  # never contacted
    with pytest.raises(ToolError, match="invalid address|no recipient"):
        send(ctx, **{field_name: value})


def test_unreachable_server(ctx):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    configure(ctx, **local_settings(port, timeout=5))
    with pytest.raises(ToolError, match="could not talk to the SMTP server 127.0.0.1"):
        send(ctx)


def test_settings_repr_hides_the_password(ctx):
    configure(ctx, host="smtp.example.com", username="me@example.com", password=PASSWORD)
    settings = mail.load_settings(ctx.home)
    assert (settings.port, settings.starttls, settings.ssl) == (587, True, False)
    assert PASSWORD not in repr(settings)
    configure(ctx, host="smtp.example.com", username="me@example.com", ssl=True)
    assert (mail.load_settings(ctx.home).port, mail.load_settings(ctx.home).starttls) == (
        465,
        False,
    )


def test_registered_as_mutating():
    spec = Toolkit.load(["mail"]).get("toolkit_send_email")
    assert spec is not None and spec.mutates and spec.requires == ("yaml",)
