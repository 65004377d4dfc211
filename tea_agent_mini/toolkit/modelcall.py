"""Calling the model endpoint from inside a tool.

A tool that calls the model is ``async def`` (the executor awaits it on the turn's event loop)
and builds a fresh client from the model's config, so a tool's settings (fewer retries, another
endpoint) never touch the runtime's pooled clients.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

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


async def call_model(config: ModelConfig, call: Callable[[OpenAIChatClient], Awaitable[T]]) -> T:
    """``await call(client)`` with a fresh client for ``config``; LLM errors become ToolErrors.

    Tools that call the model are ``async def``: they run on the turn's event loop, so no
    second loop or thread is needed.
    """
    from tea_agent_mini.llm.client import OpenAIChatClient

    try:
        async with OpenAIChatClient(config) as client:
            return await call(client)
    except LLMError as exc:
        raise ToolError(f"the model endpoint {mask_url(config.api_url)} failed: {exc}") from exc
