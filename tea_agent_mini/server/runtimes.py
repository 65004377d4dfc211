"""The server's runtimes: the active one, one per other profile a request names, and switching.

Only the runtime (composition root) builds stores, toolkits and model clients. A runtime for
another profile borrows the active one's store, toolkit and MCP servers (one database connection,
one tool registry per process) and brings its own model clients. Whatever the profile says, the
workspace, its confinement and the MCP servers stay those the server started with.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

from ..config import Config, load_config, profile_path
from ..home_sync import catch_up
from ..redact import guard_logs
from ..runtime import config_secrets

if TYPE_CHECKING:
    from ..agent.session import Session
    from ..runtime import Runtime
    from ..types import ApprovalCallback, AskUserCallback, NoticeCallback

log = logging.getLogger(__name__)

FIXED_AGENT_KEYS = ("allow_outside_workspace", "allow_private_fetch")


class RuntimePool:
    """The active runtime plus lazily built runtimes for other profiles."""

    def __init__(self, runtime: Runtime) -> None:
        self.active = runtime
        self._others: dict[str, Runtime] = {}
        self._stale: list[Runtime] = []  # built from a profile since changed, to close
        self._lock = threading.Lock()  # get() runs in worker threads
        runtime.config_loader = self.load  # a profile shared by another instance (catch_up)

    @property
    def home(self):
        return self.active.config.home

    def check_profile(self, name: str) -> None:
        """Raises ConfigError for a name that is not a profile here (never a path)."""
        path = profile_path(name, self.home)
        if not path.is_file() and name != self.active.config.profile:
            raise LookupError(f"no profile named {name!r}")

    def get(self, profile: str | None = None) -> Runtime:
        """The runtime for ``profile`` (blocking the first time: it reads the profile's YAML).

        Raises:
            ConfigError: the name is not a valid profile name, or its file is invalid.
        """
        if not profile or profile == self.active.config.profile:
            return self.active
        with self._lock:
            runtime = self._others.get(profile)
            if runtime is None:
                config = self.load(profile)
                runtime = self._others[profile] = self.active.derive(config)
        return runtime

    def load(self, profile: str) -> Config:
        """A profile's config, keeping what is fixed while the server runs: the server settings,
        the workspace, its confinement, private fetches, the MCP servers and the tools'
        endpoints. A profile that names its own takes effect only when the server starts with
        it; profiles can be written over the API, so a switch must never widen what tools may
        reach."""
        current = self.active.config
        config = load_config(profile, home=current.home)
        config.server = current.server
        config.agent.workspace = str(current.workspace)
        for key in FIXED_AGENT_KEYS:
            setattr(config.agent, key, getattr(current.agent, key))
        config.mcp_servers = current.mcp_servers
        config.tools = current.tools
        guard_logs(config_secrets(config))
        return config

    def open_session(
        self,
        topic_id: str,
        profile: str | None = None,
        *,
        approve: ApprovalCallback | None = None,
        ask_user: AskUserCallback | None = None,
        on_notice: NoticeCallback | None = None,
        follow_up: bool = True,
    ) -> Session:
        self.catch_up()
        runtime = self.get(profile)
        runtime.toolkit  # noqa: B018 - building it asks the MCP servers to start
        manager = runtime.mcp
        if manager is not None and manager.pending():
            # the first turn after a start offers the servers' tools too (bounded, in a thread)
            manager.wait_ready(manager.startup_timeout)
        return runtime.session(
            topic_id,
            approve=approve,
            ask_user=ask_user,
            on_notice=on_notice,
            follow_up=follow_up,
        )

    def catch_up(self) -> None:
        """Take what other instances on the same PostgreSQL shared (``home_sync.catch_up``):
        the active runtime adopts its changed profile, another profile's runtime is rebuilt
        on next use (the old one is closed with the pool)."""
        changed = set(catch_up(self.active))
        if not changed:
            return
        with self._lock:
            for name, runtime in list(self._others.items()):
                if runtime.profile_file() in changed:
                    self._stale.append(self._others.pop(name))

    def discard_session(self, topic_id: str) -> None:
        """Delete a session that was not to be kept (``store: false``)."""
        self.active.store.topics.delete(topic_id)

    async def switch(self, config: Config) -> None:
        """Make ``config`` the active one (the caller makes sure no turn is running)."""
        await self.active.reconfigure(config)
        await self._close_others()

    async def forget(self, profile: str) -> None:
        """Drop the runtime built for ``profile`` (its file changed); the next request that
        names it builds a new one. The caller makes sure no turn is running."""
        with self._lock:
            runtime = self._others.pop(profile, None)
        if runtime is not None:
            await runtime.aclose()

    async def _close_others(self) -> None:
        with self._lock:
            others, self._others = [*self._others.values(), *self._stale], {}
            self._stale = []
        for runtime in others:
            await runtime.aclose()

    async def aclose(self) -> None:
        await self._close_others()
        await self.active.aclose()
