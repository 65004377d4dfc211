"""The OpenAI-compatible chat client: streaming with retries, non-streaming calls, model list.

One pooled ``httpx.AsyncClient`` per instance (created on first use, closed by ``aclose``). A
pooled connection belongs to the event loop that opened it, so use an instance from one loop.
"""

from __future__ import annotations

import asyncio
import codecs
import json
import logging
import random
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterable, Mapping
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

from .._version import __version__
from ..errors import ConfigError, ContextTooLong, LLMError, StreamInterrupted, UpstreamError
from ..redact import header_secrets, mask_url, url_secrets
from ..types import Completion, LLMEvent, Message, Notice, ReasoningDelta, TextDelta
from .assemble import StreamAssembler, completion_events, completion_from_response
from .http_errors import (
    NotAModelServer,
    describe_transport_error,
    error_from_payload,
    error_from_status,
    lists_tea_agent_models,
    redact,
)
from .retry import (
    RetryPolicy,
    is_retryable_status,
    is_retryable_transport,
    retry_after_from_headers,
)
from .sse import SSEEvent, SSEParser

if TYPE_CHECKING:
    import httpx

    from ..config import ModelConfig

__all__ = ["INTERRUPTED", "OpenAIChatClient"]

logger = logging.getLogger(__name__)

INTERRUPTED = "stream ended before the model finished; the answer is incomplete"
_ERROR_BODY_LIMIT = 64 * 1024
_Delta = TextDelta | ReasoningDelta


class _Transient(Exception):
    """A failure worth retrying; ``error`` is raised once the retries run out. ``immediate``
    retries at once without counting (the request was adjusted, not the server failing)."""

    def __init__(
        self, error: LLMError, retry_after: float | None = None, *, immediate: bool = False
    ) -> None:
        super().__init__(str(error))
        self.error = error
        self.retry_after = retry_after
        self.immediate = immediate


class OpenAIChatClient:
    """An OpenAI-compatible ``/chat/completions`` endpoint (implements ``types.ChatModel``)."""

    def __init__(
        self,
        config: ModelConfig,
        *,
        http_client: httpx.AsyncClient | None = None,
        sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
        rng: Callable[[], float] = random.random,
        retry_policy: RetryPolicy | None = None,
    ) -> None:
        self.config = config
        self.model = config.model_name
        self.retry_policy = retry_policy or RetryPolicy(max_retries=max(0, config.max_retries))
        self._http = http_client
        self._owns_http = http_client is None
        self._sleep = sleep
        self._rng = rng
        self._include_usage = True

    async def __aenter__(self) -> OpenAIChatClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the pooled connections (an injected ``http_client`` is left to its owner)."""
        if self._http is not None and self._owns_http:
            http, self._http = self._http, None
            await http.aclose()

    # -- public calls --------------------------------------------------------------------------

    async def stream(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        **params: Any,
    ) -> AsyncIterator[LLMEvent]:
        """Yield TextDelta/ReasoningDelta as they arrive, ``Notice(kind="retry")`` before each
        retry, and one Completion last.

        Raises:
            LLMError: UpstreamError, RateLimited or ContextTooLong when the call fails (after
                retries where retrying makes sense); StreamInterrupted when the stream breaks off
                after part of the answer was already yielded.
            ConfigError: api_url is missing or not an http(s) URL.
        """
        attempt = 0
        while True:
            body = self.build_body(messages, tools, params, stream=True)
            try:
                async with aclosing(self._stream_attempt(body)) as events:
                    async for event in events:
                        yield event
                return
            except _Transient as failure:
                if failure.immediate:
                    continue
                delay = self._retry_delay(failure, attempt)
                attempt += 1
                yield Notice(self._retry_text(failure.error, delay, attempt), kind="retry")
                await self._sleep(delay)

    async def complete(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        **params: Any,
    ) -> Completion:
        """One non-streamed call (``stream: false``), retried like :meth:`stream`.

        Raises:
            LLMError: as :meth:`stream` (UpstreamError, RateLimited, ContextTooLong).
            ConfigError: api_url is missing or not an http(s) URL.
        """
        data = await self._request_json(
            "POST", "/chat/completions", lambda: self.build_body(messages, tools, params)
        )
        if not isinstance(data, dict):
            raise UpstreamError("the provider answered with something other than a JSON object")
        if data.get("error"):
            raise error_from_payload(data, secrets=self._secrets)
        return completion_from_response(data)

    async def list_models(self) -> list[str]:
        """The model ids the endpoint offers (``GET /models``).

        Raises:
            UpstreamError: the call failed, or api_url is a tea-agent-mini server (NotAModelServer).
        """
        data = await self._request_json("GET", "/models", None)
        if lists_tea_agent_models(data):
            raise NotAModelServer(mask_url(self.config.api_url))
        entries = (data.get("data") or data.get("models") or []) if isinstance(data, dict) else data
        if not isinstance(entries, list):
            return []
        ids = (entry.get("id") or entry.get("name") for entry in entries if isinstance(entry, dict))
        return [str(model_id) for model_id in ids if model_id]

    def build_body(
        self,
        messages: Iterable[dict[str, Any] | Message],
        tools: list[dict[str, Any]] | None = None,
        params: Mapping[str, Any] | None = None,
        *,
        stream: bool = False,
    ) -> dict[str, Any]:
        """The JSON request body; ``params`` override the config, a ``None`` value drops a key."""
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [m.to_openai() if isinstance(m, Message) else m for m in messages],
            "stream": stream,
        }
        if stream and self._include_usage:
            body["stream_options"] = {"include_usage": True}
        if tools:
            body["tools"] = tools
            body["tool_choice"] = "auto"
        if self.config.temperature is not None:
            body["temperature"] = self.config.temperature
        if self.config.max_tokens is not None:
            body["max_tokens"] = self.config.max_tokens
        for key, value in (params or {}).items():
            if value is None:
                body.pop(key, None)
            else:
                body[key] = value
        return body

    # -- one streamed attempt --------------------------------------------------------------------

    async def _stream_attempt(
        self, body: dict[str, Any]
    ) -> AsyncGenerator[_Delta | Completion, None]:
        import httpx

        assembler = StreamAssembler()
        done = False
        try:
            async with self._client().stream(
                "POST",
                self._url("/chat/completions"),
                json=body,
                headers=self._headers(stream=True),
                timeout=self._timeout(),
            ) as response:
                if response.status_code >= 400:
                    raw = await _read_limited(response)
                    status, headers = response.status_code, response.headers
                    raise await self._explained(self._status_failure(status, raw, headers, body))
                if "json" in response.headers.get("content-type", ""):
                    # The server ignored "stream": true and answered in one piece.
                    for event in completion_events(await self._whole_completion(response)):
                        yield event
                    return
                parser = SSEParser()
                decoder = codecs.getincrementaldecoder("utf-8")("replace")
                async for raw in response.aiter_bytes():
                    deltas, done = self._consume(parser.feed(decoder.decode(raw)), assembler)
                    for delta in deltas:
                        yield delta
                    if done:
                        break
                else:
                    tail = parser.feed(decoder.decode(b"", final=True)) + parser.finish()
                    deltas, done = self._consume(tail, assembler)
                    for delta in deltas:
                        yield delta
        except (httpx.RequestError, httpx.InvalidURL) as exc:
            # A finish_reason already arrived: only the usage chunk or [DONE] was lost.
            if not assembler.finished:
                raise self._transport_failure(exc, assembler.has_output) from exc
            logger.debug("stream closed after finish_reason: %s", exc)
        if not done and not assembler.finished:
            if assembler.has_output:
                raise StreamInterrupted(INTERRUPTED)
            raise _Transient(StreamInterrupted("the stream ended before the model sent anything"))
        yield assembler.result(default_finish="stop")

    def _consume(
        self, events: list[SSEEvent], assembler: StreamAssembler
    ) -> tuple[list[_Delta], bool]:
        """Feed SSE events to the assembler; return the deltas and whether [DONE] was seen."""
        deltas: list[_Delta] = []
        for event in events:
            if event.is_done:
                return deltas, True
            try:
                chunk = json.loads(event.data)
            except ValueError:
                logger.warning("skipping a stream event that is not JSON: %.80r", event.data)
                continue
            if not isinstance(chunk, dict):
                continue
            if chunk.get("error"):
                raise self._stream_error(chunk, assembler.has_output or bool(deltas))
            deltas.extend(assembler.feed(chunk))
        return deltas, False

    def _stream_error(self, chunk: dict[str, Any], has_output: bool) -> Exception:
        error = error_from_payload(chunk, secrets=self._secrets)
        if has_output:
            return StreamInterrupted(f"{INTERRUPTED}; the provider reported: {error}")
        if error.status is not None and is_retryable_status(error.status):
            return _Transient(error)
        return error

    async def _whole_completion(self, response: httpx.Response) -> Completion:
        data = self._parse_json(await response.aread())
        if isinstance(data, dict) and data.get("error"):
            raise error_from_payload(data, secrets=self._secrets)
        return completion_from_response(data if isinstance(data, dict) else {})

    # -- non-streamed requests ---------------------------------------------------------------

    async def _request_json(
        self, method: str, path: str, make_body: Callable[[], dict[str, Any]] | None
    ) -> Any:
        attempt = 0
        while True:
            body = make_body() if make_body is not None else None
            try:
                return await self._request_once(method, path, body)
            except _Transient as failure:
                if failure.immediate:
                    continue
                delay = self._retry_delay(failure, attempt)
                attempt += 1
                logger.warning("%s", self._retry_text(failure.error, delay, attempt))
                await self._sleep(delay)

    async def _request_once(self, method: str, path: str, body: dict[str, Any] | None) -> Any:
        import httpx

        try:
            response = await self._client().request(
                method,
                self._url(path),
                json=body,
                headers=self._headers(stream=False),
                timeout=self._timeout(),
            )
        except (httpx.RequestError, httpx.InvalidURL) as exc:
            raise self._transport_failure(exc, has_output=False) from exc
        if response.status_code >= 400:
            failure = self._status_failure(response.status_code, response.content, response.headers)
            raise await self._explained(failure) if body is not None else failure
        return self._parse_json(response.content)

    def _parse_json(self, raw: bytes) -> Any:
        try:
            return json.loads(raw)
        except ValueError as exc:
            snippet = redact(raw[:200].decode("utf-8", "replace"), self._secrets)
            raise UpstreamError(
                f"the provider sent a response that is not JSON: {snippet!r}",
                hint="check api_url (it should end in /v1 or similar)",
            ) from exc

    # -- failures and retries ------------------------------------------------------------------

    async def _explained(self, failure: Exception) -> Exception:
        """``failure``, or NotAModelServer when the request was refused because api_url is a
        tea-agent-mini server (which refuses requests with tools: a 400)."""
        status = getattr(failure, "status", None)
        if type(failure) is not UpstreamError or status is None or not 400 <= status < 500:
            return failure
        try:
            await self.list_models()
        except NotAModelServer as probed:
            return probed
        except LLMError:
            pass
        return failure

    def _status_failure(
        self,
        status: int,
        raw: bytes,
        headers: Mapping[str, str],
        body: dict[str, Any] | None = None,
    ) -> Exception:
        error = error_from_status(status, raw, headers, secrets=self._secrets)
        rejected = "stream_options" in str(error) and "stream_options" in (body or {})
        if status in (400, 422) and rejected:
            # Some servers reject stream_options; do without usage in the stream from now on.
            self._include_usage = False
            return _Transient(error, immediate=True)
        if is_retryable_status(status) and not isinstance(error, ContextTooLong):
            return _Transient(error, retry_after_from_headers(headers))
        return error

    def _transport_failure(self, exc: Exception, has_output: bool) -> Exception:
        config = self.config
        detail, hint = describe_transport_error(exc, config.connect_timeout, config.read_timeout)
        detail = redact(detail, self._secrets)
        if has_output:
            return StreamInterrupted(f"{INTERRUPTED} ({detail})")
        shown = mask_url(config.api_url)
        if hint is None:
            return ConfigError(f"api_url {shown!r} is not a usable URL ({detail})")
        error = UpstreamError(f"{shown}: {detail}", hint=hint)
        return _Transient(error) if is_retryable_transport(exc) else error

    def _retry_delay(self, failure: _Transient, attempt: int) -> float:
        """Seconds to wait before the next attempt; raises the error when retries are used up."""
        if not self.retry_policy.can_retry(attempt):
            error = failure.error
            if attempt:
                note = f"gave up after {attempt + 1} attempts"
                error.hint = f"{error.hint}; {note}" if error.hint else note
            raise error from failure.__cause__
        return self.retry_policy.delay(attempt, self._rng, failure.retry_after)

    def _retry_text(self, error: LLMError, delay: float, attempt: int) -> str:
        limit = self.retry_policy.max_retries
        return f"{error} — retrying in {delay:.1f}s (retry {attempt} of {limit})"

    # -- plumbing ------------------------------------------------------------------------------

    @property
    def _secrets(self) -> list[str]:
        """What a provider (or a proxy in front of it) might echo back in an error."""
        config = self.config
        return [config.api_key, *header_secrets(config.extra_headers), *url_secrets(config.api_url)]

    def _url(self, path: str) -> str:
        base = (self.config.api_url or "").strip().rstrip("/")
        if not base:
            raise ConfigError("the model has no api_url (e.g. https://api.openai.com/v1)")
        if not base.startswith(("http://", "https://")):
            raise ConfigError(f"api_url must start with http:// or https://, not {base!r}")
        return base.removesuffix("/chat/completions") + path

    def _headers(self, *, stream: bool) -> dict[str, str]:
        headers = {
            "Accept": "text/event-stream" if stream else "application/json",
            "User-Agent": f"tea_agent_mini/{__version__}",
        }
        if self.config.api_key:
            headers["Authorization"] = f"Bearer {self.config.api_key}"
        headers.update(self.config.extra_headers or {})
        return headers

    def _timeout(self) -> httpx.Timeout:
        import httpx

        return httpx.Timeout(self.config.read_timeout, connect=self.config.connect_timeout)

    def _client(self) -> httpx.AsyncClient:
        if self._http is None:
            import httpx

            self._http = httpx.AsyncClient(timeout=self._timeout())
            self._owns_http = True
        return self._http


async def _read_limited(response: httpx.Response, limit: int = _ERROR_BODY_LIMIT) -> bytes:
    """The response body, stopping after ``limit`` bytes (an error page can be huge)."""
    parts: list[bytes] = []
    async for part in response.aiter_bytes():
        parts.append(part)
        if sum(map(len, parts)) >= limit:
            break
    return b"".join(parts)
