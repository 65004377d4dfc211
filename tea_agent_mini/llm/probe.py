"""Trying a model endpoint before it is saved: ``GET {api_url}/models`` once, with a short
timeout, and what went wrong as a reason a person can act on.

The reasons: ``invalid_url`` (not an http(s) URL), ``unreachable`` (nothing answers, or not in
time), ``wrong_key`` (401/403), ``not_openai`` (no JSON model list at that address),
``tea_agent`` (a tea-agent-mini server, not a model server) and ``error`` (any other failure).
Messages never hold the key: the client masks it in whatever the server echoes back.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import ConfigError, LLMError
from ..redact import mask_url
from .http_errors import NotAModelServer

if TYPE_CHECKING:
    from ..config import ModelConfig

__all__ = ["PROBE_TIMEOUT", "ProbeResult", "probe_endpoint"]

PROBE_TIMEOUT = 8.0


@dataclass(frozen=True)
class ProbeResult:
    ok: bool
    models: list[str] = field(default_factory=list)
    reason: str = ""
    error: str = ""
    status: int | None = None


async def probe_endpoint(model: ModelConfig, timeout: float = PROBE_TIMEOUT) -> ProbeResult:
    """List the endpoint's models (no retries, ``timeout`` seconds at most per phase)."""
    from .client import OpenAIChatClient

    quick = dataclasses.replace(
        model,
        connect_timeout=min(model.connect_timeout, timeout),
        read_timeout=min(model.read_timeout, timeout),
        max_retries=0,
    )
    client = OpenAIChatClient(quick)
    try:
        return ProbeResult(True, await client.list_models())
    except ConfigError as exc:
        return ProbeResult(False, reason="invalid_url", error=str(exc))
    except NotAModelServer as exc:
        return ProbeResult(False, reason="tea_agent", error=str(exc))
    except LLMError as exc:
        return _failure(exc, mask_url(model.api_url))
    finally:
        await client.aclose()


def _failure(exc: LLMError, shown: str) -> ProbeResult:
    import httpx

    status = exc.status
    if status in (401, 403):
        return ProbeResult(
            False,
            reason="wrong_key",
            error=f"wrong API key: the server answered {status} ({exc.args[0]})",
            status=status,
        )
    if status in (404, 405) or (status is None and isinstance(exc.__cause__, ValueError)):
        return ProbeResult(
            False,
            reason="not_openai",
            error=f"{shown} does not answer like an OpenAI-compatible API (GET /models: {exc}); "
            "the base URL usually ends in /v1",
            status=status,
        )
    if status is None and isinstance(exc.__cause__, httpx.TransportError):
        return ProbeResult(False, reason="unreachable", error=f"cannot reach {exc}")
    return ProbeResult(False, reason="error", error=str(exc), status=status)
