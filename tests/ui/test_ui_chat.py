"""The chat in real headless Chromium: streaming, sanitized markdown, reasoning, tool cards, stop,
usage, image and text attachments."""

from __future__ import annotations

import pytest

from tests.fakes.scripted_server import Reply, ToolCallSpec
from tests.ui.ui_helpers import (
    ARTIFACTS,
    answer_text,
    chat,
    last_answer,
    missing_browser,
    open_app,
    png_bytes,
    send,
    wait_turns_finished,
)

REASON = missing_browser()
if REASON:
    pytest.skip(REASON, allow_module_level=True)

HOSTILE = (
    "Here is **bold** text and code:\n\n```python\nprint('hi')\n```\n\n"
    "<script>window.pwned = 1</script>\n\n"
    '<img src="x" onerror="window.pwned = 2">\n\n'
    "[a link](https://example.org) and the end."
)
LONG = " ".join(f"word{i}" for i in range(60))


def set_context_window(config) -> None:
    config.main_model.max_context_tokens = 32_768


def test_answer_streams_then_renders_sanitized_markdown(page, model, model_config, start_live):
    live = start_live(configure=set_context_window)
    model.push(Reply(text=HOSTILE, reasoning="Thinking it over first.", delay=0.03))
    open_app(page, live.url)
    before = send(page, "show me some markdown")
    # a part of the answer is on screen while the turn is still running
    page.wait_for_function(
        """() => {
            const md = document.querySelector('.msg.assistant .markdown');
            return md && md.textContent.length > 0 && !md.textContent.includes('the end')
                && !document.querySelector('#stop').hidden;
        }"""
    )
    wait_turns_finished(page, before + 1)
    answer = last_answer(page)
    assert answer.locator(".markdown strong").inner_text() == "bold"
    assert "the end" in answer.inner_text()
    assert page.evaluate("window.pwned") is None
    assert page.locator(".chat-log script").count() == 0
    assert page.locator(".chat-log [onerror]").count() == 0
    link = answer.locator(".markdown a")
    assert link.get_attribute("rel") == "noopener noreferrer"
    assert page.locator(".msg.user").inner_text() == "show me some markdown"

    reasoning = answer.locator("details.reasoning")
    assert reasoning.get_attribute("open") is None  # folded once the answer began
    reasoning.locator("summary").click()
    assert "Thinking it over first." in reasoning.locator(".reasoning-text").inner_text()

    code = answer.locator(".code-block")
    assert code.locator(".code-lang").inner_text() == "python"
    code.locator(".copy-btn").click()
    page.wait_for_function(
        "() => document.querySelector('.copy-btn').textContent.includes('Copied')"
    )
    usage = page.locator("#usage").inner_text()
    assert "Last turn" in usage and "/ 33k" in usage
    assert page.locator("#usage .meter-fill").get_attribute("style").startswith("width:")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "ui-chat.png"))


def test_tool_call_card_shows_name_arguments_result_and_duration(page, live, model, workspace):
    (workspace / "notes.txt").write_text("remember the milk\n", encoding="utf-8")
    model.push(
        Reply(
            tool_calls=[ToolCallSpec("toolkit_file", {"action": "read", "filename": "notes.txt"})]
        ),
        Reply(text="The note says: remember the milk."),
    )
    open_app(page, live.url)
    chat(page, "read my notes")
    card = page.locator("details.tool")
    assert card.locator(".tool-name").inner_text() == "toolkit_file"
    assert "notes.txt" in card.locator(".tool-short").inner_text()
    assert card.get_attribute("class") == "tool ok"
    assert card.locator(".tool-time").inner_text().endswith(" s")
    card.locator("summary").click()
    assert '"action": "read"' in card.locator(".tool-args").inner_text()
    assert "remember the milk" in card.locator(".tool-result").inner_text()
    assert "The note says" in answer_text(page)
    page.reload()  # the same card, rebuilt from the stored messages
    page.wait_for_selector("#app.ready")
    card = page.locator("details.tool")
    card.locator("summary").click()
    assert card.locator(".tool-name").inner_text() == "toolkit_file"
    assert "remember the milk" in card.locator(".tool-result").inner_text()
    assert "The note says" in answer_text(page)
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "ui-tools.png"))


def test_stop_button_and_escape_stop_the_running_turn(page, live, model):
    model.push(Reply(text=LONG, delay=0.15), Reply(text=LONG, delay=0.15))
    open_app(page, live.url)
    send(page, "a long answer please")
    page.wait_for_selector(".msg.assistant .markdown")
    page.click("#stop")
    wait_turns_finished(page, 1)
    assert "Stopped" in page.locator(".notice.cancelled").inner_text()
    assert "word59" not in answer_text(page)

    send(page, "another long one")
    page.wait_for_function(
        "() => document.querySelectorAll('.msg.assistant .markdown').length === 2"
    )
    page.keyboard.press("Escape")
    wait_turns_finished(page, 2)
    assert page.locator(".notice.cancelled").count() == 2
    assert "word59" not in answer_text(page)


def test_shift_enter_adds_a_line_instead_of_sending(page, live, model):
    open_app(page, live.url)
    page.fill("#input", "first line")
    page.press("#input", "Shift+Enter")
    page.keyboard.type("second line")
    assert page.locator(".msg.user").count() == 0
    page.press("#input", "Enter")
    wait_turns_finished(page, 1)
    assert page.locator(".msg.user").inner_text() == "first line\nsecond line"
    assert answer_text(page) == "echo: first line\nsecond line"


def test_a_text_attachment_shows_as_a_chip_in_the_users_bubble(page, live, model):
    open_app(page, live.url)
    notes = {"name": "shopping-list.txt", "mimeType": "text/plain", "buffer": b"milk\ntea\n"}
    page.set_input_files("#file-input", files=[notes])
    page.wait_for_function("() => !document.querySelector('.chip').classList.contains('uploading')")
    chat(page, "what is on my list?")
    chip = page.locator(".msg.user .file-chip")
    assert chip.inner_text() == "shopping-list.txt"
    assert page.locator(".msg.user .user-text").inner_text() == "what is on my list?"
    turn = next(r for r in model.requests if r.get("tools"))
    assert "milk" in str(turn["messages"][-1]["content"])  # the model got the file's text
    # a file alone, without a message: the bubble still shows it
    page.set_input_files("#file-input", files=[{**notes, "name": "second.txt"}])
    page.wait_for_function("() => !document.querySelector('.chip').classList.contains('uploading')")
    page.click("#send")
    wait_turns_finished(page, 2)
    assert page.locator(".msg.user .file-chip").all_inner_texts() == [
        "shopping-list.txt",
        "second.txt",
    ]
    page.reload()  # the same chips, from the stored messages
    page.wait_for_selector("#app.ready")
    page.locator(".msg.user .file-chip").nth(1).wait_for()
    assert page.locator(".msg.user .file-chip").all_inner_texts() == [
        "shopping-list.txt",
        "second.txt",
    ]
    assert page.locator(".msg.user .user-text").all_inner_texts() == ["what is on my list?"]
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "ui-text-attachment.png"))


def test_image_attachment_preview_send_and_enlarge(page, live, model):
    open_app(page, live.url)
    page.set_input_files(
        "#file-input", files=[{"name": "dot.png", "mimeType": "image/png", "buffer": png_bytes()}]
    )
    chip = page.locator(".chip")
    page.wait_for_function("() => !document.querySelector('.chip').classList.contains('uploading')")
    assert chip.locator(".chip-name").inner_text() == "dot.png"
    chip.locator("img").click()
    page.wait_for_selector("dialog.lightbox[open]")
    page.keyboard.press("Escape")
    page.wait_for_selector("dialog.lightbox", state="detached")

    chat(page, "what is in this picture?")
    assert page.locator("#attachments").is_hidden()
    image = page.locator(".msg.user img.msg-image")
    image.click()
    page.wait_for_selector("dialog.lightbox[open] img")
    turn = next(r for r in model.requests if r.get("tools"))
    parts = turn["messages"][-1]["content"]
    assert {p["type"] for p in parts} == {"text", "image_url"}
    assert parts[-1]["image_url"]["url"].startswith("data:image/png;base64,")
