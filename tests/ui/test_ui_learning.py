"""Learning from work in real headless Chromium: 👍/👎 with a comment under an answer (stored, and
still shown after a reload), the learned skills (view, edit, promote) and the versions of the
guidelines (set, evolve with its diff, accept, roll back) in the Learning panel."""

from __future__ import annotations

import pytest

from tea_agent_mini.evaluation.crystallise import learned_dir
from tea_agent_mini.store.evaluations import Lesson
from tests.fakes.scripted_server import Reply
from tests.server.test_server_learned_skills import write_learned_skill
from tests.server.test_server_prompts import BRITISH, TERSE, is_evolve
from tests.ui.ui_helpers import chat, missing_browser, open_app

REASON = missing_browser()
if REASON:
    pytest.skip(REASON, allow_module_level=True)


def active_session(page) -> str:
    return page.evaluate("() => document.querySelector('.tab.active').dataset.id")


def evaluations(live, session: str) -> list[dict]:
    with live.client() as http:
        return http.get(f"/v1/evaluations?session_id={session}").json()["data"]


def user_ids(live, session: str) -> list[int]:
    with live.client() as http:
        messages = http.get(f"/v1/sessions/{session}/messages").json()["data"]
    return [m["id"] for m in messages if m["role"] == "user"]


def pressed(page, index: int) -> list[str]:
    """The thumbs shown as chosen under the answer of turn ``index``."""
    bar = page.locator(".chat-log .turn").nth(index).locator(".rate")
    chosen = bar.locator(".rate-btn[aria-pressed=true]")
    return [chosen.nth(i).get_attribute("data-rating") for i in range(chosen.count())]


def test_a_thumbs_down_with_a_comment_is_stored_and_shown_after_a_reload(page, live, model):
    model.push(Reply(text="The first answer."), Reply(text="The second answer."))
    open_app(page, live.url)
    chat(page, "first question")
    chat(page, "second question")
    session = active_session(page)
    ids = user_ids(live, session)
    with live.client() as http:  # the second turn rated elsewhere first
        body = {"rating": "good", "message_id": ids[1]}
        assert http.post(f"/v1/sessions/{session}/feedback", json=body).status_code == 200
    # the first turn, sent from this page: its stored message is found for the rating
    first = page.locator(".chat-log .turn").nth(0)
    first.locator(".rate-btn[aria-label='Bad answer']").click()
    first.locator(".rate-form input").fill("it ignored the file")
    first.locator(".rate-form button[type=submit]").click()
    first.locator(".rate-note", has_text="it ignored the file").wait_for()
    assert first.locator(".rate-form").is_hidden()
    rated, _ = evaluations(live, session)  # newest first
    assert (rated["rating"], rated["comment"], rated["source"]) == (
        "bad",
        "it ignored the file",
        "user",
    )
    assert rated["message_id"] == ids[0] and rated["outcome"] == "failed"

    page.reload()
    page.wait_for_selector("#app.ready")
    page.wait_for_function("() => document.querySelectorAll('.rate[data-rating]').length === 2")
    assert pressed(page, 0) == ["bad"] and pressed(page, 1) == ["good"]
    assert "it ignored the file" in page.locator(".chat-log .turn").nth(0).inner_text()
    # a stored turn is rated by its own message: a 👎 without a comment, one click and a send
    second = page.locator(".chat-log .turn").nth(1)
    second.locator(".rate-btn[aria-label='Bad answer']").click()
    second.locator(".rate-form button[type=submit]").click()
    page.wait_for_function(
        "() => document.querySelectorAll('.chat-log .turn')[1].querySelector('.rate')"
        ".dataset.rating === 'bad'"
    )
    ratings = {e["message_id"]: (e["rating"], e["comment"]) for e in evaluations(live, session)}
    assert ratings == {ids[0]: ("bad", "it ignored the file"), ids[1]: ("bad", None)}


def open_tab(page, tab: str):
    page.click("#open-learning")
    panel = page.locator("dialog[open]", has_text="Learning")
    panel.locator(".seg", has_text=tab).click()
    return panel


def test_learned_skills_are_viewed_edited_and_promoted(page, live, tea_home):
    folder = write_learned_skill(tea_home)
    before = (folder / "SKILL.md").read_text(encoding="utf-8")
    open_app(page, live.url)
    panel = open_tab(page, "Skills")
    item = panel.locator(".learned-skill", has_text="count-csv-rows")
    assert "score 5/5" in item.inner_text() and "learned 2025-01-02" in item.inner_text()
    item.locator("button", has_text="View").click()
    # the instructions rendered as Markdown, the front matter left out
    assert item.locator(".skill-body h1").inner_text() == "Count rows"
    assert item.locator(".skill-body ol li").all_inner_texts() == [
        "Read the file",
        "Count the lines",
    ]
    assert "learned_from" not in item.locator(".skill-body").inner_text()
    assert item.locator(".skill-version summary").all_inner_texts() == ["Version 1"]

    item.locator("button", has_text="Edit").click()
    text = item.locator("textarea.skill-text")
    assert text.input_value() == before
    text.fill("no front matter at all")
    item.locator("button[type=submit]", has_text="Save").click()
    item.locator(".form-error", has_text="front matter").wait_for()
    assert (folder / "SKILL.md").read_text(encoding="utf-8") == before

    text.fill(before.replace("Count the lines", "Count the lines but not the header"))
    item.locator("button[type=submit]", has_text="Save").click()
    reopened = panel.locator(".learned-skill", has_text="v3")
    reopened.locator(".skill-body li", has_text="not the header").wait_for()
    assert reopened.locator(".skill-version summary").all_inner_texts() == [
        "Version 2",
        "Version 1",
    ]
    assert (folder / "versions" / "v2.md").read_text(encoding="utf-8") == before

    reopened.locator("button", has_text="Promote").click()
    page.click("dialog[open] .btn.danger")
    panel.locator(".list-empty", has_text="No learned skills yet").wait_for()
    promoted = tea_home / "skills" / "count-csv-rows" / "SKILL.md"
    assert "not the header" in promoted.read_text(encoding="utf-8")
    assert not (learned_dir(tea_home) / "count-csv-rows").exists()


def current_version(live) -> int:
    with live.client() as http:
        return http.get("/v1/prompts").json()["current"]["version"]


def test_prompt_versions_are_set_evolved_accepted_and_rolled_back(page, live, model):
    open_app(page, live.url)
    panel = open_tab(page, "Prompt")
    panel.locator(".prompt-current", has_text="version 0 (builtin)").wait_for()
    panel.locator(".prompt-set summary").click()
    panel.locator(".prompt-set textarea").fill(TERSE)
    panel.locator(".prompt-set input").fill("mine")
    panel.locator(".prompt-set button[type=submit]").click()
    panel.locator(".prompt-current", has_text="version 1 (user)").wait_for()
    assert current_version(live) == 1
    assert "mine" in panel.locator(".prompt-version[data-version='1']").inner_text()

    live.runtime.memory.add("Always answer in British English", category="instruction")
    model.on(is_evolve, Reply(text=BRITISH))
    panel.locator("button", has_text="Evolve").click()
    proposal = panel.locator(".proposal")
    proposal.locator(".diff .add", has_text="Answer in British English").wait_for()
    shown = proposal.inner_text()
    assert "Proposed version 2" in shown and "from 1 memories" in shown
    assert proposal.locator(".diff .del", has_text="terse").count() == 1
    assert current_version(live) == 1  # nothing changes until it is accepted
    assert "proposed" in panel.locator(".prompt-version[data-version='2']").inner_text()
    proposal.locator("button", has_text="Accept").click()
    panel.locator(".prompt-current", has_text="version 2 (evolved)").wait_for()
    assert proposal.is_hidden() and current_version(live) == 2

    panel.locator("button", has_text="Roll back").click()
    panel.locator(".prompt-current", has_text="version 1 (user)").wait_for()
    assert current_version(live) == 1
    panel.locator(".prompt-version[data-version='0'] button", has_text="Use").click()
    panel.locator(".prompt-current", has_text="version 0 (builtin)").wait_for()
    assert current_version(live) == 0


def test_evaluations_and_lessons_are_listed_and_a_lesson_deleted(page, live, model):
    model.push(Reply(text="Done badly."))
    open_app(page, live.url)
    chat(page, "rename the files")
    session = active_session(page)
    with live.client() as http:
        response = http.post(f"/v1/sessions/{session}/feedback", json={"rating": "bad"})
        assert response.status_code == 200, response.text
    lesson = live.runtime.store.lessons.add(
        Lesson("renamed by hand", "use toolkit_exec mv", category="tools")
    )
    panel = open_tab(page, "Evaluations")
    row = panel.locator(".evaluation", has_text="rename the files")
    assert "failed" in row.inner_text() and row.locator(".rating.bad").count() == 1
    item = panel.locator(".lesson", has_text="renamed by hand")
    assert "use toolkit_exec mv" in item.inner_text()
    item.locator("button[title='Delete lesson']").click()
    page.click("dialog[open] .btn.danger")
    item.wait_for(state="detached")
    assert live.runtime.store.lessons.get(lesson.id) is None
    row.locator("a", has_text="Open").click()
    page.wait_for_selector("dialog[open]", state="detached")
