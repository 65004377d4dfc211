"""Fixtures for the web UI tests: a real server (uvicorn on 127.0.0.1, the scripted model) and a
headless Chromium page. Each test module skips itself, with the reason, where Chromium or
Playwright is missing (``ui_helpers.missing_browser``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.fakes.scripted_server import Reply
from tests.server.server_helpers import LiveServer, start_server
from tests.ui.ui_helpers import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, TIMEOUT_MS, is_main_turn


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    # module scope: Playwright's event loop lives only while this module's tests run
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def start_live() -> Iterator[Callable[..., LiveServer]]:
    started: list[LiveServer] = []

    def start(**kwargs: Any) -> LiveServer:
        live = start_server(**kwargs)
        started.append(live)
        return live

    yield start
    for live in started:
        live.stop()


@pytest.fixture
def model(scripted_server):
    """The scripted model; background requests (titles, memory extraction) get an empty answer so
    they never take the replies a test queued for its turns."""
    scripted_server.on(lambda request: not is_main_turn(request), Reply(text=""))
    return scripted_server


@pytest.fixture
def live(model, model_config, start_live) -> LiveServer:
    return start_live()


FAILED = pytest.StashKey[bool]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        item.stash[FAILED] = report.failed


@pytest.fixture
def page_factory(browser, request) -> Iterator[Callable[..., Any]]:
    contexts: list[Any] = []
    pages: list[Any] = []
    problems: list[str] = []

    def make(width: int = 1280, height: int = 800, **options: Any) -> Any:
        context = browser.new_context(viewport={"width": width, "height": height}, **options)
        context.set_default_timeout(TIMEOUT_MS)
        contexts.append(context)
        page = context.new_page()
        pages.append(page)
        page.on("pageerror", lambda error: problems.append(f"page error: {error}"))
        page.on(
            "console",
            lambda message: (
                problems.append(f"console: {message.text}")
                if message.type == "error" and "Content Security Policy" in message.text
                else None
            ),
        )
        return page

    yield make
    if request.node.stash.get(FAILED, False):
        # what the page looked like when the test failed, for the CI artifacts
        ARTIFACTS.mkdir(exist_ok=True)
        for index, shown in enumerate(pages):
            shown.screenshot(path=str(ARTIFACTS / f"failed-{request.node.name}-{index}.png"))
    for context in contexts:
        context.close()
    assert not problems, problems


@pytest.fixture
def page(page_factory) -> Any:
    return page_factory()
