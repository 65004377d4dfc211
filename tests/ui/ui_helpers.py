"""Helpers for the web UI tests: Debian's Chromium driven by Playwright, the page's usual moves."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(__file__).resolve().parent.parent / "artifacts"
TIMEOUT_MS = 10_000


def missing_browser() -> str | None:
    """Why the UI tests cannot run here (None when they can)."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install playwright; never 'playwright install')"
    if not Path(CHROMIUM).exists():
        return f"Debian's chromium is not installed ({CHROMIUM}; apt-get install chromium)"
    return None


def open_app(page: Any, url: str) -> Any:
    page.goto(url + "/")
    page.wait_for_selector("#app.ready", timeout=TIMEOUT_MS)
    return page


def turn_count(page: Any) -> int:
    return page.locator(".chat-log .turn").count()


def send(page: Any, text: str) -> int:
    """Type and send a message; returns how many turns the shown session had before."""
    before = turn_count(page)
    page.fill("#input", text)
    page.press("#input", "Enter")
    return before


def wait_turns_finished(page: Any, count: int) -> None:
    """Until the shown session has ``count`` finished turns and none running."""
    page.wait_for_function(
        """(count) => document.querySelectorAll('.chat-log .turn.finished').length >= count
            && document.querySelector('#stop').hidden""",
        arg=count,
        timeout=TIMEOUT_MS,
    )


def new_chat(page: Any) -> str:
    """Click "New chat" and wait until the new, empty session is shown; returns its id."""
    before = page.evaluate("() => document.querySelector('.tab.active')?.dataset.id || ''")
    page.click("#new-chat")
    page.wait_for_function(
        """(before) => {
            const tab = document.querySelector('.tab.active');
            return tab && tab.dataset.id !== before
                && document.querySelectorAll('.chat-log .turn').length === 0;
        }""",
        arg=before,
        timeout=TIMEOUT_MS,
    )
    return page.evaluate("() => document.querySelector('.tab.active').dataset.id")


def chat(page: Any, text: str) -> None:
    """Send a message and wait for its turn to finish."""
    before = send(page, text)
    wait_turns_finished(page, before + 1)


def last_answer(page: Any) -> Any:
    return page.locator(".chat-log .msg.assistant").last


def answer_text(page: Any) -> str:
    return last_answer(page).inner_text()


def png_bytes(
    width: int = 24, height: int = 16, rgb: tuple[int, int, int] = (40, 120, 220)
) -> bytes:
    """A small valid PNG, made here (no image library)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    row = b"\x00" + bytes(rgb) * width
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(row * height))
        + chunk(b"IEND", b"")
    )


def is_main_turn(request: dict) -> bool:
    """Chat turns send the tool schemas; background jobs (titles, memory extraction) do not."""
    return bool(request.get("tools"))
