"""The Streamable HTTP transport: every message is a POST to one endpoint.

The server answers a POSTed request with either one JSON document or a Server-Sent Events stream
that may carry notifications and requests of its own before the response; notifications and
responses we POST are acknowledged with 202. The session id the server hands out with the
``initialize`` response goes back on every later request, with the negotiated protocol version.
A GET stream, when the server offers one, brings messages the server sends on its own initiative
(``notifications/tools/list_changed`` outside any call). A 404 for our session means the server
forgot it; the client then initializes again.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from tea_agent_mini.mcp.errors import (
    McpError,
    McpProtocolError,
    McpTransportError,
    SessionExpired,
)
from tea_agent_mini.mcp.jsonrpc import (
    ErrorObject,
    ErrorResponse,
    Message,
    Request,
    Response,
    dumps,
    loads,
)

if TYPE_CHECKING:
    import httpx

    from tea_agent_mini.llm.sse import SSEEvent

logger = logging.getLogger(__name__)

ACCEPT_BOTH = "application/json, text/event-stream"
SESSION_HEADER = "Mcp-Session-Id"
VERSION_HEADER = "MCP-Protocol-Version"
LISTEN_RETRIES = 3
ERROR_BODY_LIMIT = 2000

OnMessage = Callable[[Message], None]
OnClose = Callable[[McpError], None]


class HttpTransport:
    """Talks to the MCP endpoint at ``url`` (for example ``http://127.0.0.1:8000/mcp``)."""

    def __init__(
        self,
        url: str,
        headers: Mapping[str, str] | None = None,
        *,
        connect_timeout: float = 10.0,
        listen: bool = True,
    ) -> None:
        self.url = url
        self.headers = dict(headers or {})
        self.connect_timeout = connect_timeout
        self.listen = listen
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self._client: httpx.AsyncClient | None = None
        self._on_message: OnMessage | None = None
        self._listener: asyncio.Task[None] | None = None

    @property
    def description(self) -> str:
        return self.url

    @property
    def pid(self) -> int | None:
        return None

    async def start(self, on_message: OnMessage, on_close: OnClose) -> None:
        """Prepare the connection pool. ``on_close`` is unused: HTTP has no connection to lose."""
        import httpx

        self._on_message = on_message
        # no read timeout: a tool may legitimately stream for long; the client times requests
        timeout = httpx.Timeout(self.connect_timeout, read=None)
        self._client = httpx.AsyncClient(timeout=timeout, follow_redirects=True)

    async def ready(self, protocol_version: str) -> None:
        """The handshake is done: send the version header from now on, open the GET stream."""
        self.protocol_version = protocol_version
        if self.listen and self._listener is None:
            self._listener = asyncio.create_task(self._listen())

    async def send(self, message: Message) -> None:
        """POST one message and deliver whatever the server answers with."""
        client = self._require_client()
        import httpx

        headers = self._request_headers(accept=ACCEPT_BOTH)
        headers["Content-Type"] = "application/json"
        try:
            async with client.stream(
                "POST", self.url, content=dumps(message).encode("utf-8"), headers=headers
            ) as response:
                await self._handle(response, message, headers.get(SESSION_HEADER))
        except httpx.HTTPError as exc:
            raise McpTransportError(f"{self.url}: {type(exc).__name__}: {exc}") from exc

    async def close(self) -> None:
        """Stop listening, end the session on the server (DELETE), release the pool."""
        if self._listener is not None:
            self._listener.cancel()
            await asyncio.gather(self._listener, return_exceptions=True)
            self._listener = None
        client, self._client = self._client, None
        if client is None:
            return
        import httpx

        if self.session_id is not None:
            try:
                await client.delete(self.url, headers=self._request_headers(), timeout=2.0)
            except httpx.HTTPError as exc:  # the session will expire on its own
                logger.debug("DELETE %s failed: %s", self.url, exc)
        self.session_id = None
        await client.aclose()

    def _require_client(self) -> httpx.AsyncClient:
        if self._client is None:
            raise McpTransportError(f"{self.url}: the transport is not open")
        return self._client

    def _request_headers(self, accept: str | None = None) -> dict[str, str]:
        headers = dict(self.headers)
        if accept:
            headers["Accept"] = accept
        if self.session_id:
            headers[SESSION_HEADER] = self.session_id
        if self.protocol_version:
            headers[VERSION_HEADER] = self.protocol_version
        return headers

    async def _handle(
        self, response: httpx.Response, sent: Message, sent_session: str | None
    ) -> None:
        session = response.headers.get(SESSION_HEADER)
        if session and self.session_id is None:
            self.session_id = session
        status = response.status_code
        if status in (202, 204):
            return
        if status == 404 and sent_session is not None:
            if self.session_id == sent_session:  # a concurrent request may have renewed it
                self.session_id = None
            raise SessionExpired(f"{self.url}: the server ended the MCP session (HTTP 404)")
        if status >= 400:
            await self._handle_error_status(response, sent)
            return
        content_type = _media_type(response.headers.get("content-type", ""))
        if content_type == "text/event-stream":
            answered = await self._read_events(response, sent)
        elif content_type == "application/json":
            answered = self._deliver_json(await response.aread(), sent)
        elif isinstance(sent, Request):
            raise McpProtocolError(f"{self.url}: unexpected content type {content_type!r}")
        else:
            return
        if isinstance(sent, Request) and not answered:
            raise McpTransportError(f"{self.url}: the response to {sent.method} never came")

    async def _handle_error_status(self, response: httpx.Response, sent: Message) -> None:
        status = response.status_code
        body = (await response.aread())[:ERROR_BODY_LIMIT]
        error = _error_in_body(body)
        if error is not None and isinstance(sent, Request) and self._on_message is not None:
            # a JSON-RPC error the server chose to send with an HTTP error status
            self._on_message(ErrorResponse(sent.id, error))
            return
        text = body.decode("utf-8", errors="replace").strip()
        raise McpTransportError(f"{self.url}: HTTP {status} {response.reason_phrase}: {text}")

    def _deliver_json(self, body: bytes, sent: Message) -> bool:
        if not body.strip():
            return False
        answered = False
        for message in loads(body):
            answered = answered or _answers(message, sent)
            self._deliver(message)
        return answered

    async def _read_events(self, response: httpx.Response, sent: Message | None) -> bool:
        """Deliver each event's message; True once the response to ``sent`` went by."""
        from tea_agent_mini.llm.sse import SSEParser

        parser = SSEParser()
        answered = False
        async for chunk in response.aiter_text():
            for event in parser.feed(chunk):
                answered = self._deliver_event(event, sent) or answered
        for event in parser.finish():
            answered = self._deliver_event(event, sent) or answered
        return answered

    def _deliver_event(self, event: SSEEvent, sent: Message | None) -> bool:
        if event.event not in ("", "message") or not event.data.strip():
            return False  # priming events carry no data; other event types are not ours
        try:
            messages = loads(event.data)
        except McpProtocolError as exc:
            logger.warning("%s: ignored a malformed event (%s)", self.url, exc)
            return False
        answered = False
        for message in messages:
            answered = answered or (sent is not None and _answers(message, sent))
            self._deliver(message)
        return answered

    def _deliver(self, message: Message) -> None:
        if self._on_message is not None:
            self._on_message(message)

    async def _listen(self) -> None:
        """Keep a GET stream open for messages the server sends unprompted, if it offers one."""
        import httpx

        failures = 0
        while failures < LISTEN_RETRIES and self._client is not None:
            headers = self._request_headers(accept="text/event-stream")
            try:
                async with self._client.stream("GET", self.url, headers=headers) as response:
                    if response.status_code != 200:
                        logger.debug("%s offers no GET stream (%s)", self.url, response.status_code)
                        return
                    failures = 0
                    await self._read_events(response, None)
            except (httpx.HTTPError, McpError) as exc:
                logger.debug("%s: GET stream failed: %s", self.url, exc)
            failures += 1
            await asyncio.sleep(0.5 * 2**failures)


def _media_type(value: str) -> str:
    return value.split(";", 1)[0].strip().lower()


def _answers(message: Message, sent: Message) -> bool:
    return (
        isinstance(sent, Request)
        and isinstance(message, (Response, ErrorResponse))
        and message.id == sent.id
    )


def _error_in_body(body: bytes) -> ErrorObject | None:
    try:
        messages: list[Any] = loads(body)
    except McpError:
        return None
    first = messages[0]
    return first.error if isinstance(first, ErrorResponse) else None
