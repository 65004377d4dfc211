"""When to retry a model call, and how long to wait first.

Retried: HTTP 429, 500, 502, 503, 504, 529, and transport failures (connection refused or reset,
timeouts, a server that hangs up mid-response). Other 4xx are the caller's fault and fail at once.
Waits use exponential backoff with full jitter, unless the server said how long (Retry-After).
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

__all__ = [
    "RETRYABLE_STATUS",
    "RetryPolicy",
    "is_retryable_status",
    "is_retryable_transport",
    "parse_retry_after",
    "retry_after_from_headers",
]

RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504, 529})


@dataclass(frozen=True)
class RetryPolicy:
    """``max_retries`` extra attempts after the first; waits grow ``base_delay * 2**attempt``
    up to ``max_delay`` and a random fraction of that is slept (full jitter). A server-given
    Retry-After is honoured up to ``max_retry_after`` seconds."""

    max_retries: int = 3
    base_delay: float = 0.5
    max_delay: float = 20.0
    max_retry_after: float = 60.0

    def can_retry(self, attempt: int) -> bool:
        """``attempt`` counts the retries already made."""
        return attempt < self.max_retries

    def delay(
        self, attempt: int, rng: Callable[[], float], retry_after: float | None = None
    ) -> float:
        """Seconds to wait before retry number ``attempt + 1``."""
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.max_retry_after)
        ceiling = min(self.max_delay, self.base_delay * (2**attempt))
        return max(0.0, min(1.0, rng())) * ceiling


def is_retryable_status(status: int) -> bool:
    return status in RETRYABLE_STATUS


def is_retryable_transport(exc: BaseException) -> bool:
    """Transport failures worth another try: connect errors, timeouts, dropped connections."""
    import httpx

    retryable = (
        httpx.ConnectError,
        httpx.ConnectTimeout,
        httpx.ReadTimeout,
        httpx.WriteTimeout,
        httpx.PoolTimeout,
        httpx.RemoteProtocolError,
        httpx.ReadError,
        httpx.WriteError,
    )
    return isinstance(exc, retryable)


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """A Retry-After header value (delta-seconds or HTTP-date) as seconds from now, or None."""
    if value is None:
        return None
    value = value.strip()
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if seconds != seconds:  # NaN
        return None
    return max(0.0, seconds)


def retry_after_from_headers(headers: Mapping[str, str]) -> float | None:
    """Retry-After, preferring the millisecond form some providers add (``retry-after-ms``)."""
    lowered = {key.lower(): value for key, value in headers.items()}
    millis = lowered.get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    return parse_retry_after(lowered.get("retry-after"))
