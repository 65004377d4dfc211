"""Settings and the rest of the page in real headless Chromium: theme and accent remembered,
first-run setup without a model, the API key prompt, a phone-sized screen, and the optional
memory, tasks and export panels."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fakes.scripted_server import Reply
from tests.ui.ui_helpers import (
    ARTIFACTS,
    answer_text,
    chat,
    missing_browser,
    open_app,
    send,
)

REASON = missing_browser()
if REASON:
    pytest.skip(REASON, allow_module_level=True)


def theme(page) -> str:
    return page.evaluate("document.documentElement.dataset.theme")


def accent(page) -> str:
    return page.evaluate(
        "getComputedStyle(document.documentElement).getPropertyValue('--accent').trim()"
    )


def test_theme_and_accent_are_remembered_across_reloads(page, live):
    open_app(page, live.url)
    before = theme(page)
    page.click("#theme-toggle")
    after = theme(page)
    assert {before, after} == {"light", "dark"}
    page.click("#settings-top")
    page.click("dialog[open] .swatch[title='#10b981']")
    assert accent(page) == "#10b981"
    page.keyboard.press("Escape")
    page.reload()
    page.wait_for_selector("#app.ready")
    assert theme(page) == after
    assert accent(page) == "#10b981"
    chat(page, "dark mode please")
    page.wait_for_function("() => document.querySelector('.tab-title').textContent !== 'New chat'")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"ui-theme-{after}.png"))


def test_profile_dropdown_switches_the_active_profile(page, live, model, write_config):
    write_config(
        {"main_model": {"api_url": model.base_url, "model_name": "other-model"}}, name="other"
    )
    open_app(page, live.url)
    # the sidebar names the active profile, its model in the tooltip
    assert page.locator("#active-profile").inner_text() == "default"
    assert "scripted-model" in page.locator("#active-profile").get_attribute("title")
    page.click("#open-settings")
    select = page.locator("dialog[open] select.profile-select")
    page.wait_for_function("() => document.querySelectorAll('select.profile-select option').length")
    assert select.locator("option").all_inner_texts() == [
        "default — scripted-model",
        "other — other-model",
    ]
    select.select_option("other")
    page.wait_for_function(
        "() => document.querySelector('#active-profile').textContent === 'other'"
    )
    assert "other-model" in page.locator("#active-profile").get_attribute("title")
    with live.client() as http:
        assert http.get("/v1/config").json()["profile"] == "other"


def test_tool_approval_is_chosen_in_settings(page, live):
    def policy() -> str:
        with live.client() as http:
            return http.get("/v1/config").json()["config"]["agent"]["approval"]

    open_app(page, live.url)
    page.click("#open-settings")
    group = page.get_by_role("radiogroup", name="Tool approval")
    assert group.get_by_label("Run freely").is_checked() and policy() == "auto"
    group.get_by_text("Ask me first").click()
    page.locator(".toast", has_text="ask me first").wait_for()
    assert policy() == "ask"
    page.keyboard.press("Escape")
    page.click("#open-settings")  # reopened, the dialog shows the server's setting
    group = page.get_by_role("radiogroup", name="Tool approval")
    assert group.get_by_label("Ask me first").is_checked()
    group.get_by_text("Read-only").click()
    page.locator(".toast", has_text="read-only").wait_for()
    assert policy() == "never"


def test_first_run_setup_creates_a_profile_and_the_chat_works(page, model, start_live, tea_home):
    live = start_live()  # no config.yaml: the server starts without a model
    open_app(page, live.url)
    dialog = page.locator("dialog.setup-dialog[open]")
    dialog.wait_for()
    assert page.locator("#setup-banner").is_visible()
    dialog.locator("input[name=name]").fill("bad/name")
    dialog.locator("input[name=api_url]").fill(model.base_url)
    dialog.locator("input[name=model_name]").fill("scripted-model")
    dialog.locator("input[name=api_key]").fill("sk-ui-test")
    dialog.locator("button[type=submit]").click()
    # what the server refused is shown in the form
    page.wait_for_selector("dialog.setup-dialog .form-error:not([hidden])")
    assert "profile" in dialog.locator(".form-error").inner_text()

    dialog.locator("input[name=name]").fill("default")
    dialog.locator("button[type=submit]").click()
    page.wait_for_selector("dialog.setup-dialog", state="detached")
    page.wait_for_selector("#setup-banner", state="hidden")
    assert page.locator("#active-profile").inner_text() == "default"
    assert "scripted-model" in (tea_home / "config.yaml").read_text(encoding="utf-8")
    chat(page, "hello after setup")
    assert answer_text(page) == "echo: hello after setup"


def test_a_wrong_api_key_is_said_to_be_wrong(page, model, model_config, start_live):
    live = start_live(api_key="ui-secret-key")
    page.goto(live.url + "/")
    dialog = page.locator("dialog[open]", has_text="API key needed")
    assert dialog.locator(".form-error").count() == 0  # no key sent yet: nothing was wrong
    dialog.locator("input").fill("not-the-key")
    dialog.locator("button[type=submit]").click()
    again = page.locator("dialog[open]", has_text="Wrong key")
    again.wait_for()
    assert "the server refused it" in again.locator(".form-error").inner_text()
    again.locator("input").fill("ui-secret-key")
    again.locator("button[type=submit]").click()
    page.wait_for_selector("#app.ready")


def test_the_api_key_is_asked_for_once_and_kept(page, model, model_config, start_live):
    live = start_live(api_key="ui-secret-key")
    page.goto(live.url + "/")
    dialog = page.locator("dialog[open]", has_text="API key needed")
    dialog.locator("input").fill("ui-secret-key")
    dialog.locator("button[type=submit]").click()
    page.wait_for_selector("#app.ready")
    chat(page, "with a key")
    assert answer_text(page) == "echo: with a key"
    page.reload()
    page.wait_for_selector("#app.ready")  # no second prompt: the key was kept
    assert page.locator("dialog[open]").count() == 0
    assert answer_text(page) == "echo: with a key"


def test_phone_sized_screen(page_factory, live, model):
    page = page_factory(width=390, height=844, is_mobile=True, has_touch=True)
    open_app(page, live.url)
    sidebar = page.locator("#sidebar")
    assert not sidebar.evaluate("el => el.getBoundingClientRect().right > 0")
    chat(page, "hi from a phone")
    assert page.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth")
    assert page.locator("#input").is_visible() and page.locator("#send").is_visible()
    page.click("#toggle-sidebar")
    page.wait_for_function(
        "() => document.querySelector('#sidebar').getBoundingClientRect().left >= 0"
    )
    page.locator("#session-list .session-open").first.click()
    page.wait_for_function(
        "() => document.querySelector('#sidebar').getBoundingClientRect().right <= 0"
    )
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "ui-phone.png"))


def test_optional_panels_follow_the_routes_and_memory_works(page, live, model):
    with live.client() as http:
        paths = http.get("/openapi.json").json()["paths"]
    open_app(page, live.url)
    chat(page, "export needs a session")
    assert page.locator("#open-memory").is_visible() == ("/v1/memory" in paths)
    assert page.locator("#open-tasks").is_visible() == ("/v1/tasks" in paths)
    assert page.locator("#export").is_visible() == any(p.startswith("/v1/export/") for p in paths)
    if "/v1/memory" not in paths:
        return
    page.click("#open-memory")
    panel = page.locator("dialog[open]", has_text="Memory")
    panel.locator("textarea").fill("The user prefers green tea")
    panel.locator("select[aria-label=Category]").select_option("preference")
    panel.locator("button[type=submit]").click()
    item = panel.locator(".panel-item", has_text="green tea")
    item.wait_for()
    assert "preference" in item.inner_text()
    item.locator("button", has_text="Pin").click()
    panel.locator(".panel-item.pinned").wait_for()
    with live.client() as http:
        stored = http.get("/v1/memory").json()["data"]
    assert [(m["content"], m["pinned"]) for m in stored] == [("The user prefers green tea", True)]
    panel.locator(".panel-item button[title='Delete memory']").click()
    page.click("dialog[open] .btn.danger")
    panel.locator(".list-empty").wait_for()


def test_export_downloads_the_session_as_markdown(page, live, model):
    with live.client() as http:
        if not any(
            p.startswith("/v1/export/md/") for p in http.get("/openapi.json").json()["paths"]
        ):
            pytest.skip("this build has no export routes")
    model.push(Reply(text="Export **me**, please."))
    open_app(page, live.url)
    send(page, "an answer to keep")
    page.locator(".turn.finished").wait_for()
    page.click("#export")
    with page.expect_download() as download_info:
        page.click("dialog[open] button[data-format=md]")
    download = download_info.value
    assert download.suggested_filename.endswith(".md")
    text = Path(download.path()).read_text(encoding="utf-8")
    assert "an answer to keep" in text and "Export **me**, please." in text
