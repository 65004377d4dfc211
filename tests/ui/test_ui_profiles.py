"""Model profiles in real headless Chromium: the setup dialog and "Add a profile" test the
endpoint before saving (saving a failing one needs "Save anyway"), offer the endpoint's models,
and a profile can be edited without the page ever seeing its key."""

from __future__ import annotations

import pytest
import yaml

from tests.fakes.scripted_server import ScriptedServer
from tests.ui.ui_helpers import ARTIFACTS, answer_text, chat, missing_browser, open_app

REASON = missing_browser()
if REASON:
    pytest.skip(REASON, allow_module_level=True)

RIGHT_KEY = "sk-right-key-4242"
WRONG_KEY = "sk-wrong-key-9999"


@pytest.fixture
def keyed_server():
    """A second model server, which wants RIGHT_KEY and offers "keyed-model"."""
    with ScriptedServer(api_key=RIGHT_KEY, model="keyed-model") as server:
        yield server


def setup_dialog(page):
    dialog = page.locator("dialog.setup-dialog[open]")
    dialog.wait_for()
    return dialog


def open_add_profile(page):
    page.click("#open-settings")
    page.locator("dialog[open] button", has_text="Add a profile").click()
    return setup_dialog(page)


def test_first_run_setup_tests_the_endpoint_and_saves_a_failing_one_only_when_asked(
    page, model, start_live, tea_home
):
    live = start_live()  # no config.yaml: the server starts without a model
    open_app(page, live.url)
    dialog = setup_dialog(page)
    dialog.locator("input[name=api_url]").fill("http://127.0.0.1:1/v1")
    dialog.locator("input[name=model_name]").fill("some-model")
    dialog.locator("button[type=submit]").click()
    problem = dialog.locator(".form-error:not([hidden])")
    problem.wait_for()
    assert "connection test failed" in problem.inner_text()
    assert "save anyway" in problem.inner_text()
    assert dialog.locator("button", has_text="Save anyway").is_visible()
    assert "cannot reach" in dialog.locator(".probe.error").inner_text()
    assert not (tea_home / "config.yaml").exists()  # nothing saved yet
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "ui-setup-unreachable.png"))

    # fixed: the test passes and the profile is saved and used at once
    dialog.locator("input[name=api_url]").fill(model.base_url)
    assert dialog.locator("button", has_text="Save anyway").is_hidden()
    dialog.locator("input[name=model_name]").fill("")
    dialog.locator("button", has_text="Test connection").click()
    dialog.locator(".probe.ok", has_text="Connected: 1 model(s)").wait_for()
    assert dialog.locator("input[name=model_name]").input_value() == "scripted-model"
    dialog.locator("button[type=submit]").click()
    page.wait_for_selector("dialog.setup-dialog", state="detached")
    assert yaml.safe_load((tea_home / "config.yaml").read_text())["main_model"] == {
        "api_url": model.base_url,
        "model_name": "scripted-model",
    }
    chat(page, "hello after setup")
    assert answer_text(page) == "echo: hello after setup"


def test_save_anyway_keeps_an_unreachable_profile(page, live, tea_home):
    open_app(page, live.url)
    dialog = open_add_profile(page)
    dialog.locator("input[name=name]").fill("later")
    dialog.locator("input[name=api_url]").fill("http://127.0.0.1:1/v1")
    dialog.locator("input[name=model_name]").fill("offline-model")
    dialog.locator("button[type=submit]").click()
    dialog.locator("button", has_text="Save anyway").click()
    page.wait_for_selector("dialog.setup-dialog", state="detached")
    assert yaml.safe_load((tea_home / "later.yaml").read_text())["main_model"] == {
        "api_url": "http://127.0.0.1:1/v1",
        "model_name": "offline-model",
    }
    page.wait_for_function(
        "() => document.querySelector('#active-profile').textContent === 'later'"
    )


def test_a_wrong_key_is_named_and_the_model_picker_fills_from_the_list(
    page, live, keyed_server, tea_home
):
    open_app(page, live.url)
    assert page.locator("#active-profile").inner_text() == "default"
    assert "scripted-model" in page.locator("#active-profile").get_attribute("title")
    dialog = open_add_profile(page)
    dialog.locator("input[name=name]").fill("keyed")
    dialog.locator("input[name=api_url]").fill(keyed_server.base_url)
    dialog.locator("input[name=api_key]").fill(WRONG_KEY)
    dialog.locator("button", has_text="Test connection").click()
    error = dialog.locator(".probe.error")
    error.wait_for()
    assert "wrong API key" in error.inner_text() and WRONG_KEY not in error.inner_text()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "ui-setup-wrong-key.png"))

    dialog.locator("input[name=api_key]").fill(RIGHT_KEY)
    dialog.locator("input[name=model_name]").fill("ghost-model")
    dialog.locator("button[type=submit]").click()  # tests again: the key changed
    problem = dialog.locator(".form-error:not([hidden])")
    problem.wait_for()
    assert "does not offer the model “ghost-model”" in problem.inner_text()
    picker = dialog.locator("select[name=model_pick]")
    assert picker.locator("option").all_inner_texts()[1:] == ["keyed-model"]
    picker.select_option("keyed-model")
    assert dialog.locator("input[name=model_name]").input_value() == "keyed-model"
    page.screenshot(path=str(ARTIFACTS / "ui-setup-picker.png"))
    dialog.locator("button[type=submit]").click()
    page.wait_for_selector("dialog.setup-dialog", state="detached")
    page.wait_for_function(
        "() => document.querySelector('#active-profile').textContent === 'keyed'"
    )
    assert "keyed-model" in page.locator("#active-profile").get_attribute("title")
    stored = yaml.safe_load((tea_home / "keyed.yaml").read_text())["main_model"]
    assert (stored["api_key"], stored["model_name"]) == (RIGHT_KEY, "keyed-model")


def test_a_profile_is_edited_with_its_stored_key(page, live, keyed_server, write_config, tea_home):
    write_config(
        {
            "main_model": {
                "api_url": keyed_server.base_url,
                "api_key": RIGHT_KEY,
                "model_name": "old-name",
                "max_context_tokens": 4096,
            }
        },
        "lab",
    )
    open_app(page, live.url)
    page.click("#open-settings")
    settings = page.locator("dialog[open]", has_text="Settings")
    select = settings.locator("select.profile-select")
    page.wait_for_function("() => document.querySelectorAll('select.profile-select option').length")
    select.select_option("lab")
    page.wait_for_function("() => document.querySelector('#active-profile').textContent === 'lab'")
    settings.locator("button", has_text="Edit…").click()
    dialog = setup_dialog(page)
    assert "Edit profile “lab”" in dialog.inner_text()
    assert dialog.locator("input[name=name]").get_attribute("readonly") is not None
    assert dialog.locator("input[name=api_url]").input_value() == keyed_server.base_url
    assert dialog.locator("input[name=api_key]").input_value() == ""
    assert "****4242" in dialog.inner_text() and RIGHT_KEY not in page.content()
    dialog.locator("button", has_text="Test connection").click()  # with the stored key
    dialog.locator(".probe.ok").wait_for()
    dialog.locator("select[name=model_pick]").select_option("keyed-model")
    dialog.locator("input[name=max_context_tokens]").fill("")
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "ui-profile-edit.png"))
    dialog.locator("button[type=submit]").click()
    page.wait_for_selector("dialog.setup-dialog", state="detached")
    stored = yaml.safe_load((tea_home / "lab.yaml").read_text())["main_model"]
    assert stored == {
        "api_url": keyed_server.base_url,
        "api_key": RIGHT_KEY,
        "model_name": "keyed-model",
    }
    # the active profile was reloaded: the next turn uses the new model
    page.wait_for_function(
        "() => document.querySelector('#active-profile').title.includes('keyed-model')"
    )
    chat(page, "after the edit")
    assert keyed_server.requests[-1]["model"] == "keyed-model"


def test_phone_sized_setup_dialog(page_factory, live, keyed_server):
    page = page_factory(width=390, height=844, is_mobile=True, has_touch=True)
    open_app(page, live.url)
    page.click("#toggle-sidebar")
    dialog = open_add_profile(page)
    dialog.locator("input[name=api_url]").fill(keyed_server.base_url)
    dialog.locator("input[name=api_key]").fill(RIGHT_KEY)
    dialog.locator("button", has_text="Test connection").click()
    dialog.locator(".probe.ok").wait_for()
    body = dialog.locator(".modal-body")
    assert body.evaluate("el => el.scrollWidth <= el.clientWidth")
    assert page.evaluate(
        "document.documentElement.scrollWidth <= document.documentElement.clientWidth"
    )
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "ui-phone-setup.png"))
