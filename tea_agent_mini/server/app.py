"""The app factory and the server: ``create_app(runtime)`` and ``serve(config)``.

Routes, middleware and exception handlers are handed to Starlette as explicit lists. The
lifespan owns shutdown: running turns are cancelled (the session stores what they had done),
follower streams end, model clients close and the database is checkpointed and closed.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.routing import BaseRoute

from ..store.database import is_postgres_url
from . import openapi, static
from .api_errors import EXCEPTION_HANDLERS, LastResort, handle_shutting_down
from .listen import bind_problem, open_socket, started_lines
from .routes import (
    chat,
    config,
    connection,
    evaluations,
    export,
    flows,
    health,
    memory,
    models,
    notices,
    profiles,
    prompts,
    responses,
    search,
    session_turns,
    sessions,
    skills_learned,
    tasks,
    team,
    tools,
    uploads,
)
from .runtimes import RuntimePool
from .security import (
    MIN_KEY_LENGTH,
    HostGuard,
    RequestGuard,
    SecurityPolicy,
    access_key,
    bind_address,
    cors_middleware_options,
    is_loopback,
)
from .serverlog import AccessLog
from .state import ServerState, blocking
from .static import PackageAssets
from .turn_records import ShuttingDown
from .turns import TurnManager
from .uploads import UploadStore
from .warmup import WarmUp

if TYPE_CHECKING:
    import uvicorn

    from ..config import Config
    from ..runtime import Runtime

log = logging.getLogger(__name__)

EXIT_OK, EXIT_FAILED, EXIT_REFUSED = 0, 1, 2
SHUTDOWN_GRACE = 5.0
# Tasks add their module here when they land.
ROUTE_MODULES = (
    health,
    models,
    chat,
    responses,
    sessions,
    session_turns,
    tools,
    config,
    connection,
    profiles,
    prompts,
    uploads,
    memory,
    export,
    tasks,
    team,
    search,
    notices,
    flows,
    evaluations,
    skills_learned,
    openapi,
    static,
)


def all_routes() -> list[BaseRoute]:
    return [route for module in ROUTE_MODULES for route in module.routes()]


def create_app(runtime: Runtime, *, api_key: str | None = None) -> Starlette:
    """The ASGI app over ``runtime``; ``api_key`` (else ``server.api_key``) guards ``/v1``."""
    server = runtime.config.server
    key = access_key(api_key, server.api_key)
    policy = SecurityPolicy.build(
        api_key=key,
        bind_host=server.host,
        allowed_hosts=server.allowed_hosts,
        cors_origins=server.cors_origins,
    )
    pool = RuntimePool(runtime)
    tea = ServerState(
        pool=pool,
        turns=turn_manager(runtime, pool),
        uploads=UploadStore(runtime.config.home / "uploads"),
        assets=PackageAssets(),
        api_key=key,
    )
    # the access log outermost: it sees every answer, the last-resort 500 included
    middleware = [
        Middleware(AccessLog),
        Middleware(LastResort),
        Middleware(HostGuard, policy=policy),
    ]
    if policy.cors_origins:
        middleware.append(
            Middleware(CORSMiddleware, **cors_middleware_options(policy.cors_origins))
        )
    middleware.append(Middleware(RequestGuard, policy=policy))
    middleware.append(Middleware(WarmUp, runtime=runtime, keyed=key is not None))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        # open (and migrate) the database now: a broken one stops the start, not a request
        await blocking(lambda: runtime.store)
        from ..scheduler.service import start_scheduler, stop_scheduler
        from ..shell.orphans import reap_orphans

        # commands a crashed server left running: killed before anything new starts
        await blocking(reap_orphans, runtime.config.home)
        await runtime.resume_jobs()  # follow-up work a stopped or crashed process left

        await start_scheduler(runtime)  # scheduled tasks run inside the server process
        await tea.turns.start()
        try:
            yield
        finally:
            await stop_scheduler(runtime)
            await shutdown(tea)

    app = Starlette(
        routes=all_routes(),
        middleware=middleware,
        exception_handlers={**EXCEPTION_HANDLERS, ShuttingDown: handle_shutting_down},
        lifespan=lifespan,
    )
    app.state.tea = tea
    return app


def turn_manager(runtime: Runtime, pool: RuntimePool) -> TurnManager:
    """In memory on SQLite; in the database, shared with the other instances, on PostgreSQL."""
    if not is_postgres_url(runtime.config.store_target):
        return TurnManager(pool.open_session, discard=pool.discard_session)
    from .shared_turns import SharedTurnManager

    return SharedTurnManager(
        pool.open_session,
        lambda: runtime.store,
        discard=pool.discard_session,
        lease=max(1.0, float(runtime.config.server.turn_lease)),  # at least a second
    )


async def shutdown(tea: ServerState) -> None:
    """Stop the turns, then close the model clients and the database. Safe to call twice."""
    await tea.turns.shutdown(SHUTDOWN_GRACE)
    await tea.pool.aclose()


def build_server(
    app: Starlette, host: str, port: int, on_started: Callable[[], None] | None = None
) -> uvicorn.Server:
    """A uvicorn server for ``app`` that ends the event streams as soon as shutdown begins and
    calls ``on_started`` once it listens."""
    import uvicorn

    class Server(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            if self.started and on_started is not None:
                on_started()

        async def shutdown(self, sockets: Any = None) -> None:
            # Streams following a turn would otherwise hold the connections open until the
            # graceful timeout; ending the turns first lets them close at once.
            await app.state.tea.turns.shutdown(SHUTDOWN_GRACE)
            await super().shutdown(sockets)

    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_config=None,
        access_log=False,
        lifespan="on",
        ws="none",
        proxy_headers=False,
        server_header=False,
        timeout_graceful_shutdown=int(SHUTDOWN_GRACE),
    )
    return Server(config)


def bind_refusal(host: str, api_key: str | None) -> str | None:
    """Why the server must not listen on ``host`` (None when it may)."""
    if is_loopback(host):
        return None
    key = access_key(api_key)
    if key is None:
        return (
            f"refusing to listen on {host} without an API key: anyone on the network could run "
            "commands; set server.api_key or pass --api-key (or bind 127.0.0.1)"
        )
    if len(key) < MIN_KEY_LENGTH:
        return (
            f"refusing to listen on {host} with an API key of {len(key)} characters: beyond "
            f"loopback the key must have at least {MIN_KEY_LENGTH}, so it cannot be guessed "
            "(e.g. python -c 'import secrets; print(secrets.token_urlsafe(24))')"
        )
    return None


def serve(
    config: Config,
    host: str | None = None,
    port: int | None = None,
    api_key: str | None = None,
) -> int:
    """Run the server until interrupted; returns the exit code."""
    from ..errors import TeaAgentError
    from ..runtime import Runtime, config_secrets
    from .serverlog import configure

    host = bind_address(host or config.server.host or "127.0.0.1")
    port = config.server.port if port is None else port
    key = access_key(api_key, config.server.api_key)
    refusal = bind_refusal(host, key)
    if refusal:
        print(f"error: {refusal}", file=sys.stderr)
        return EXIT_REFUSED
    config.server = replace(config.server, host=host, port=port)
    try:
        sock = open_socket(host, port)
    except OSError as exc:
        print(f"error: {bind_problem(host, port, exc)}", file=sys.stderr)
        return EXIT_FAILED
    log_file = configure(config.home, [*config_secrets(config), key or ""])
    runtime = Runtime(config)
    try:
        runtime.store  # noqa: B018 - open (and migrate) the database before taking requests
    except TeaAgentError as exc:
        sock.close()
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAILED

    def started() -> None:
        lines = started_lines(config, host, port, log_file)
        print("\n".join(lines), file=sys.stderr, flush=True)

    server = build_server(create_app(runtime, api_key=key), host, port, started)
    try:
        server.run(sockets=[sock])
    except SystemExit as exc:  # uvicorn exits when the app's startup fails
        return int(exc.code or EXIT_FAILED)
    finally:
        sock.close()
        runtime.close_store()
    return EXIT_OK if server.started else EXIT_FAILED
