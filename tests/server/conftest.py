"""Fixtures for the server tests: a live server over a Runtime whose config points at the
scripted model server (see ``server_helpers``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.server.server_helpers import LiveServer, start_server


@pytest.fixture
def live_factory() -> Iterator[Callable[..., LiveServer]]:
    started: list[LiveServer] = []

    def start(**kwargs: Any) -> LiveServer:
        live = start_server(**kwargs)
        started.append(live)
        return live

    yield start
    for live in started:
        live.stop()


@pytest.fixture
def live(model_config, live_factory) -> LiveServer:
    """The server with a model configured (the scripted one) and no API key."""
    return live_factory()


@pytest.fixture
def http(live: LiveServer) -> Iterator[httpx.Client]:
    with live.client() as client:
        yield client
