"""The team panel (issue 15) in real headless Chromium: teammates with role, status and unread
count, the lead's inbox, messaging, spawning, reviving and shutting down, a teammate's session
opened from it.

The first test serves the ``/v1/team`` REST contract from a fake in the browser (``page.route``),
so the panel is checked whatever the server's team does; the second runs against the server's
own routes and a teammate answering through the scripted model (skipped where the server has
no team routes)."""

from __future__ import annotations

import re
import time
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from tests.fakes.scripted_server import Reply
from tests.ui.ui_helpers import missing_browser, open_app

REASON = missing_browser()
if REASON:
    pytest.skip(REASON, allow_module_level=True)


def error(status: int, message: str) -> dict[str, Any]:
    return {"status": status, "json": {"error": {"message": message, "type": "x", "code": None}}}


class FakeTeam:
    """The REST contract of /v1/team, in memory; ``calls`` records what the page sent."""

    def __init__(self, topic_id: str) -> None:
        now = time.time()
        self.mates = [
            self.mate("alice", "reviewer", "working", agent="reviewer", topic_id=topic_id),
            self.mate("bob", "tester", "offline"),
        ]
        self.mates[0]["unread"] = 2
        self.inbox = [
            self.message(1, now - 60, "alice", "message", "Review done: two nits."),
            self.message(2, now - 30, "alice", "plan_approval", "Plan: rename foo to bar"),
        ]
        self.calls: list[tuple[str, str, Any]] = []

    @staticmethod
    def mate(name, role, status, agent=None, topic_id=None) -> dict[str, Any]:
        return {"name": name, "role": role, "status": status, "agent": agent,
                "topic_id": topic_id, "unread": 0}  # fmt: skip

    @staticmethod
    def message(id, created, sender, kind, text, recipient="lead") -> dict[str, Any]:
        return {"id": id, "created_at": created, "sender": sender, "recipient": recipient,
                "kind": kind, "text": text, "data": {}, "read_at": None}  # fmt: skip

    def find(self, name: str) -> dict[str, Any] | None:
        return next((m for m in self.mates if m["name"] == name), None)

    def answer(self, method: str, path: str, query: dict, body: Any) -> dict[str, Any]:
        if path == "/v1/team" and method == "GET":
            return {"json": {"object": "list", "data": self.mates, "has_more": False}}
        if path == "/v1/team" and method == "POST":
            return self.spawn(body)
        if path == "/v1/team/inbox":
            unread = [dict(m) for m in self.inbox if m["read_at"] is None]
            if query.get("peek") != ["true"]:
                for m in self.inbox:
                    m["read_at"] = m["read_at"] or time.time()
            return {"json": {"object": "list", "data": unread, "has_more": False}}
        if path == "/v1/team/messages" and method == "POST":
            if self.find(body["to"]) is None:
                return error(404, f"no teammate {body['to']!r}")
            sent = self.message(99, time.time(), "lead", body.get("kind", "message"), body["text"])
            return {"status": 201, "json": {**sent, "recipient": body["to"]}}
        mate = self.find(path.rsplit("/", 1)[-1])
        if method == "DELETE" and mate is not None:
            mate["status"] = "shutdown"
            return {"status": 202, "json": {**mate, "requested": True}}
        return error(404, "not found")

    def spawn(self, body: dict) -> dict[str, Any]:
        name = body["name"]
        if not re.fullmatch(r"[a-z0-9_-]+", name) or name == "lead":
            return error(400, f"invalid teammate name {name!r}")
        mate = self.find(name)
        if mate is not None and mate["status"] in ("working", "idle"):
            return error(409, f"teammate {name!r} is already running; send it a message")
        if mate is None:
            mate = self.mate(name, body["role"], "idle", agent=body.get("agent"))
            self.mates.append(mate)
        mate["status"] = "idle"
        return {"status": 201, "json": mate}

    def route(self, route) -> None:
        request = route.request
        url = urlparse(request.url)
        body = request.post_data_json if request.post_data else None
        self.calls.append((request.method, url.path + (f"?{url.query}" if url.query else ""), body))
        route.fulfill(**self.answer(request.method, url.path, parse_qs(url.query), body))

    def install(self, page) -> None:
        def document(route) -> None:  # the server's routes, and the team's
            response = route.fetch()
            doc = response.json()
            doc["paths"]["/v1/team"] = {"get": {}, "post": {}}
            route.fulfill(response=response, json=doc)

        page.route("**/openapi.json", document)
        page.route(re.compile(r".*/v1/team(/.*)?(\?.*)?$"), self.route)


def open_team(page):
    page.click("#open-team")
    panel = page.locator("dialog[open]", has_text="Inbox")
    panel.locator(".teammate").first.wait_for()
    return panel


def wait_empty(page, selector: str) -> None:
    page.wait_for_function(
        "(selector) => document.querySelector(`dialog[open] ${selector}`).value === ''",
        arg=selector,
    )


def test_the_team_panel_against_the_rest_contract(page, live):
    with live.client() as http:
        topic = http.post("/v1/sessions", json={"title": "alice's work"}).json()["id"]
    fake = FakeTeam(topic)
    fake.install(page)
    open_app(page, live.url)
    panel = open_team(page)
    alice, bob = (
        panel.locator(".teammate[data-name=alice]"),
        panel.locator(".teammate[data-name=bob]"),
    )
    assert alice.locator(".tag").inner_text() == "reviewer"
    assert alice.locator(".status").inner_text() == "working"
    assert alice.locator(".badge").inner_text() == "2 unread"
    assert bob.locator(".status").inner_text() == "offline" and bob.locator(".badge").count() == 0
    # the lead's inbox is peeked: shown, newest first, still unread
    messages = panel.locator(".inbox .message")
    assert messages.count() == 2
    assert "Plan: rename foo to bar" in messages.nth(0).inner_text()
    assert "Review done: two nits." in messages.nth(1).inner_text()
    assert "alice" in messages.nth(1).locator("strong").inner_text()
    assert ("GET", "/v1/team/inbox?address=lead&peek=true", None) in fake.calls
    assert all(m["read_at"] is None for m in fake.inbox)

    # a teammate's plan is approved from the inbox
    messages.nth(0).locator("button", has_text="Approve").click()
    page.locator(".toast", has_text="Plan approved").wait_for()
    approve = {"to": "alice", "text": "approve", "kind": "plan_approval"}
    assert ("POST", "/v1/team/messages", approve) in fake.calls

    # a message to a teammate
    bob.locator("button", has_text="Message").click()
    assert panel.locator("select[aria-label=Teammate]").input_value() == "bob"
    panel.locator("textarea[aria-label=Message]").fill("Please run the tests.")
    panel.locator(".team-message button[type=submit]").click()
    page.locator(".toast", has_text="Sent to bob").wait_for()
    assert (
        "POST",
        "/v1/team/messages",
        {"to": "bob", "text": "Please run the tests."},
    ) in fake.calls
    wait_empty(page, "textarea[aria-label=Message]")  # cleared once sent

    # spawning: a clash and a bad name show the server's message; a good one joins the list
    panel.locator(".team-add summary").click()
    panel.locator("input[aria-label='Teammate name']").fill("alice")
    panel.locator("input[aria-label=Role]").fill("second reviewer")
    panel.locator(".team-spawn button[type=submit]").click()
    page.locator(".toast.error", has_text="already running").wait_for()
    panel.locator("input[aria-label='Teammate name']").fill("Carol!")
    panel.locator(".team-spawn button[type=submit]").click()
    page.locator(".toast.error", has_text="invalid teammate name").wait_for()
    panel.locator("input[aria-label='Teammate name']").fill("carol")
    panel.locator("input[aria-label=Identity]").fill("coder")
    panel.locator("textarea[aria-label='Teammate prompt']").fill("Write the code.")
    panel.locator(".team-spawn button[type=submit]").click()
    carol = panel.locator(".teammate[data-name=carol]")
    carol.wait_for()
    spawned = [body for method, path, body in fake.calls if (method, path) == ("POST", "/v1/team")]
    assert spawned[-1] == {
        "name": "carol",
        "role": "second reviewer",
        "prompt": "Write the code.",
        "agent": "coder",
    }
    assert carol.locator(".status").inner_text() == "idle" and "as coder" in carol.inner_text()
    wait_empty(page, "input[aria-label='Teammate name']")

    # an offline teammate is revived; a running one shut down
    bob.locator("button", has_text="Revive").click()
    panel.locator(".teammate[data-name=bob] .status", has_text="idle").wait_for()
    assert ("POST", "/v1/team", {"name": "bob"}) in fake.calls
    alice.locator("button[title='Shut down alice']").click()
    page.click("dialog[open] .btn.danger")
    panel.locator(".teammate[data-name=alice] .status", has_text="shutdown").wait_for()
    assert ("DELETE", "/v1/team/alice", None) in fake.calls

    # "Mark read" reads the inbox: the messages stay shown, as read
    panel.locator("button", has_text="Mark read").click()
    panel.locator(".inbox .message.read").nth(1).wait_for()
    assert ("GET", "/v1/team/inbox?address=lead", None) in fake.calls
    assert panel.locator("button", has_text="Mark read").is_disabled()

    # a teammate's session opens from the panel (which closes)
    panel.locator(".teammate[data-name=alice] a", has_text="Open").click()
    page.wait_for_function(
        "(id) => document.querySelector('.tab.active')?.dataset.id === id", arg=topic
    )
    assert page.locator("dialog[open]").count() == 0


def test_the_team_panel_with_the_servers_team(page, live, model):
    with live.client() as http:
        if "/v1/team" not in http.get("/openapi.json").json()["paths"]:
            pytest.skip("this server has no /v1/team routes (the team is not built in)")
    model.on(lambda request: "alice" in str(request["messages"][0]), Reply(text="On it, lead."))
    open_app(page, live.url)
    page.click("#open-team")
    panel = page.locator("dialog[open]", has_text="Inbox")
    panel.locator(".list-empty", has_text="No teammates yet.").wait_for()
    panel.locator(".team-add summary").click()
    panel.locator("input[aria-label='Teammate name']").fill("alice")
    panel.locator("input[aria-label=Role]").fill("reviewer")
    panel.locator(".team-spawn button[type=submit]").click()
    alice = panel.locator(".teammate[data-name=alice]")
    alice.wait_for()
    assert alice.locator(".tag").inner_text() == "reviewer"
    panel.locator("textarea[aria-label=Message]").fill("Please review the notes.")
    panel.locator(".team-message button[type=submit]").click()
    # the teammate's answer arrives in the lead's inbox (the panel follows it)
    panel.locator(".inbox .message", has_text="On it, lead.").wait_for(timeout=15_000)
    topic = alice.locator("a", has_text="Open").get_attribute("data-session")
    alice.locator("a", has_text="Open").click()
    shown = page.locator(f".chat-log[data-session='{topic}']")
    shown.locator(".msg.assistant", has_text="On it, lead.").wait_for()
