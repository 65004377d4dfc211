"""Calling the model endpoint from inside a tool.

Tools run in worker threads (``asyncio.to_thread``), while the runtime's pooled clients belong to
the main event loop; a tool therefore builds a fresh client from the model's config and runs it
on its own short-lived loop.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Awaitable, Callable, Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from tea_agent_mini.errors import ConfigError, LLMError, ToolError
from tea_agent_mini.redact import mask_url
from tea_agent_mini.toolkit.context import ToolContext, ToolRuntime

if TYPE_CHECKING:
    from tea_agent_mini.config import ModelConfig
    from tea_agent_mini.llm.client import OpenAIChatClient

T = TypeVar("T")


def require_runtime(ctx: ToolContext) -> ToolRuntime:
    if ctx.runtime is None:
        raise ToolError(
            "this tool needs the agent runtime (configuration and models), which is not "
            "available in this context"
        )
    return ctx.runtime


def main_model_config(ctx: ToolContext) -> ModelConfig:
    """The configured main model, or a ToolError saying how to configure one."""
    try:
        return require_runtime(ctx).config.require_model()
    except ConfigError as exc:
        raise ToolError(f"no model is configured: {exc}") from exc


def run_sync(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run ``make()`` to completion from synchronous code, even in a thread whose loop runs."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(make())).result()


def call_model(config: ModelConfig, call: Callable[[OpenAIChatClient], Awaitable[T]]) -> T:
    """``await call(client)`` with a fresh client for ``config``; LLM errors become ToolErrors."""
    from tea_agent_mini.llm.client import OpenAIChatClient

    async def main() -> T:
        async with OpenAIChatClient(config) as client:
            return await call(client)

    try:
        return run_sync(main)
    except LLMError as exc:
        raise ToolError(f"the model endpoint {mask_url(config.api_url)} failed: {exc}") from exc
