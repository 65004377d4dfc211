from __future__ import annotations

import asyncio
import base64
import json
import struct
import threading
import zlib
from pathlib import Path

import pytest

from tea_agent_mini.config import load_config
from tea_agent_mini.errors import ToolError
from tea_agent_mini.runtime import Runtime
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.executor import ToolExecutor
from tea_agent_mini.toolkit.registry import Toolkit
from tea_agent_mini.tools import vision
from tea_agent_mini.tools.question import toolkit_question
from tea_agent_mini.tools.vision import sniff_image_type, toolkit_vision_analyze
from tea_agent_mini.types import ToolCall
from tests.fakes.scripted_server import Reply

# ---- question -------------------------------------------------------------------------------


@pytest.fixture
def ctx(workspace: Path, tea_home: Path) -> ToolContext:
    return ToolContext(workspace=workspace, home=tea_home)


def test_question_returns_the_users_answer(ctx):
    asked = []

    def ask_user(question, choices, timeout, default):
        asked.append((question, choices, timeout, default))
        return "  Postgres "

    ctx.ask_user = ask_user
    choices = ["SQLite", "Postgres", "SQLite"]
    out = toolkit_question(ctx, " Which database? ", choices=choices, default=" SQLite ")
    assert out == "The user answered: Postgres"
    assert asked == [("Which database?", ["SQLite", "Postgres"], 120.0, "SQLite")]
    toolkit_question(ctx, "Again?", default="  ")
    assert asked[-1] == ("Again?", None, 120.0, None)


def test_a_number_picks_a_choice(ctx):
    ctx.ask_user = lambda question, choices, timeout, default: "2"
    assert toolkit_question(ctx, "Pick", choices=["red", "green"]) == "The user answered: green"
    assert toolkit_question(ctx, "Pick", choices=["1", "2"]) == "The user answered: 2"
    assert toolkit_question(ctx, "How many?") == "The user answered: 2"


def test_timeout_falls_back_to_the_default(ctx):
    waited = []

    def ask_user(question, choices, timeout, default):
        waited.append(timeout)
        threading.Event().wait(timeout)  # nobody answers
        return None

    ctx.ask_user = ask_user
    out = toolkit_question(ctx, "Proceed?", default="yes", timeout=0)
    assert out == "Nobody answered within 1 seconds; going with the default answer: yes"
    assert waited == [1.0]  # the timeout is kept within bounds


def test_no_answer_and_no_default_says_what_to_do(ctx):
    ctx.ask_user = lambda question, choices, timeout, default: ""
    out = toolkit_question(ctx, "Proceed?", timeout=30)
    assert out.startswith("Nobody answered within 30 seconds, and there is no default.")


def test_without_a_front_end_the_default_is_used(ctx):
    out = toolkit_question(ctx, "Proceed?", default="no")
    assert out == (
        "No one can be asked here (this front end has no way to ask); "
        "going with the default answer: no"
    )
    assert "make a reasonable assumption" in toolkit_question(ctx, "Proceed?")


def test_question_errors(ctx):
    with pytest.raises(ToolError, match="must not be empty"):
        toolkit_question(ctx, "  ")
    with pytest.raises(ToolError, match="at most 20 choices"):
        toolkit_question(ctx, "Pick", choices=[str(n) for n in range(21)])


# ---- vision ---------------------------------------------------------------------------------


def tiny_png() -> bytes:
    """A real 1x1 red PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


@pytest.fixture
def runtime(model_config):
    runtime = Runtime(load_config())
    yield runtime
    asyncio.run(runtime.aclose())


def run_tool(runtime: Runtime, module: str, name: str, **arguments):
    """Run a tool the way a session does: through the executor, in a worker thread."""
    executor = ToolExecutor(Toolkit.load([module]), runtime.tool_context(None))
    call = ToolCall(id="c1", name=name, arguments=json.dumps(arguments))
    return asyncio.run(executor.run(call))


def test_vision_sends_a_workspace_image_to_the_model(runtime, scripted_server, workspace):
    image = tiny_png()
    (workspace / "shots").mkdir()
    (workspace / "shots" / "red.png").write_bytes(image)
    scripted_server.push(Reply(text="A single red pixel."))
    result = run_tool(
        runtime,
        "vision",
        "toolkit_vision_analyze",
        image_path="shots/red.png",
        prompt="What colour is it?",
    )
    assert result.ok, result.error
    assert result.output == "A single red pixel."
    request = scripted_server.requests[-1]
    assert request["model"] == "scripted-model" and request["stream"] is False
    text_part, image_part = request["messages"][0]["content"]
    assert text_part == {"type": "text", "text": "What colour is it?"}
    url = image_part["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.split(",", 1)[1]) == image


def test_vision_passes_a_url_through(runtime, scripted_server):
    scripted_server.push(Reply(text="A cat."))
    ctx = runtime.tool_context(None)
    answer = asyncio.run(toolkit_vision_analyze(ctx, url="https://example.com/cat.jpg"))
    assert answer == "A cat."
    part = scripted_server.requests[-1]["messages"][0]["content"][1]
    assert part == {"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg"}}
    assert scripted_server.requests[-1]["messages"][0]["content"][0]["text"].startswith(
        "Describe this image"
    )


def test_vision_reports_a_model_that_refuses_images(runtime, scripted_server):
    scripted_server.push(Reply(status=400, error_message="image input is not supported"))
    ctx = runtime.tool_context(None)
    with pytest.raises(ToolError, match="image input is not supported") as info:
        asyncio.run(toolkit_vision_analyze(ctx, url="https://example.com/cat.jpg"))
    assert "configure a vision-capable main model" in str(info.value)


@pytest.mark.parametrize(
    ("setup", "kwargs", "fragment"),
    [
        (None, {}, "exactly one of"),
        (None, {"image_path": "a.png", "url": "https://x/y.png"}, "exactly one of"),
        (None, {"url": "file:///etc/passwd"}, "must be an http"),
        (None, {"image_path": "missing.png"}, "does not exist"),
        (("notes.txt", b"just text"), {"image_path": "notes.txt"}, "is not a PNG, JPEG"),
        (("big.png", b"\x89PNG\r\n\x1a\n" + b"0" * 64), {"image_path": "big.png"}, "MiB"),
        (None, {"image_path": "../outside.png"}, "outside the workspace"),
    ],
)
def test_vision_input_errors(runtime, workspace, monkeypatch, setup, kwargs, fragment):
    monkeypatch.setattr(vision, "MAX_IMAGE_BYTES", 32)
    if setup is not None:
        (workspace / setup[0]).write_bytes(setup[1])
    with pytest.raises(ToolError, match=fragment):
        asyncio.run(toolkit_vision_analyze(runtime.tool_context(None), **kwargs))


def test_vision_without_a_runtime_or_a_model(ctx, workspace, write_config):
    (workspace / "red.png").write_bytes(tiny_png())
    with pytest.raises(ToolError, match="needs the agent runtime"):
        asyncio.run(toolkit_vision_analyze(ctx, image_path="red.png"))
    write_config({"agent": {"workspace": str(workspace)}})
    runtime = Runtime(load_config())
    try:
        with pytest.raises(ToolError, match="no model is configured"):
            asyncio.run(toolkit_vision_analyze(runtime.tool_context(None), image_path="red.png"))
    finally:
        runtime.close_store()


@pytest.mark.parametrize(
    ("head", "mime"),
    [
        (b"\x89PNG\r\n\x1a\nxxxx", "image/png"),
        (b"\xff\xd8\xff\xe0xxxx", "image/jpeg"),
        (b"GIF89axxxx", "image/gif"),
        (b"RIFF\x00\x00\x00\x00WEBPVP8 ", "image/webp"),
        (b"BMxxxxxxxx", "image/bmp"),
        (b"<svg xmlns=", None),
    ],
)
def test_sniff_image_type(head, mime):
    assert sniff_image_type(head) == mime
