"""What the routes share: the runtimes, the turn manager, uploads, static assets.

One ``ServerState`` per app, kept on ``app.state.tea``; routes reach it through :func:`state`.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from starlette.requests import Request

from .api_errors import ApiError

if TYPE_CHECKING:
    from ..runtime import Runtime
    from ..store import Store, Topic
    from .runtimes import RuntimePool
    from .static import PackageAssets
    from .turns import TurnManager
    from .uploads import UploadStore

T = TypeVar("T")


@dataclass
class ServerState:
    pool: RuntimePool
    turns: TurnManager
    uploads: UploadStore
    assets: PackageAssets
    api_key: str | None = None
    cache: dict[str, Any] = field(default_factory=dict)

    @property
    def runtime(self) -> Runtime:
        return self.pool.active

    @property
    def store(self) -> Store:
        return self.pool.active.store


def state(request: Request) -> ServerState:
    return request.app.state.tea


async def blocking(func: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run blocking work (SQLite, files, YAML) in a worker thread, off the event loop."""
    return await asyncio.to_thread(functools.partial(func, *args, **kwargs))


async def require_topic(request: Request, topic_id: str | None = None) -> Topic:
    """The session named in the path (``{id}``), or a 404."""
    topic_id = topic_id or request.path_params["id"]
    topic = await blocking(state(request).store.topics.get, topic_id)
    if topic is None:
        raise ApiError(404, f"no session with id {topic_id!r}")
    return topic


async def runtime_for(st: ServerState, profile: str | None) -> Runtime:
    """The runtime that runs a turn for ``profile``, with a configured model.

    Raises:
        ApiError: 400 for a name that is not a profile name, 404 for a missing profile,
            503 when that profile has no model configured.
    """
    from ..errors import ConfigError

    try:
        if profile:
            await blocking(st.pool.check_profile, profile)
        runtime = await blocking(st.pool.get, profile)
    except LookupError as exc:
        raise ApiError(404, str(exc)) from exc
    except ConfigError as exc:
        raise ApiError(400, str(exc)) from exc
    try:
        runtime.config.require_model()
    except ConfigError as exc:
        raise ApiError(503, str(exc), code="model_not_configured") from exc
    return runtime
