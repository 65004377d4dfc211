"""Scheduled tasks over real HTTP: CRUD, validation, run now (through the server's scheduler),
no overlapping runs, run history, schedule previews, /v1/search and the OpenAPI document."""

from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta

import pytest

from tests.fakes.scripted_server import Reply

ECHO = {"name": "say hi", "schedule": "daily:08:30", "command": "echo hi"}


def add(http, **fields) -> dict:
    response = http.post("/v1/tasks", json={**ECHO, **fields})
    assert response.status_code == 201, response.text
    return response.json()


def message(response, status: int = 400) -> str:
    assert response.status_code == status, response.text
    return response.json()["error"]["message"]


def names(http, **params) -> list[str]:
    response = http.get("/v1/tasks", params=params)
    assert response.status_code == 200, response.text
    return [task["name"] for task in response.json()["data"]]


def wait_for(check, what: str, seconds: float = 15.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def test_task_crud_round_trip(http):
    task = add(http, tz="Europe/Berlin", timeout=30, grace_seconds=60, notify=True, enabled=True)
    assert task["object"] == "task" and task["name"] == "say hi"
    assert (task["kind"], task["command"], task["prompt"]) == ("shell", "echo hi", None)
    assert (task["schedule"], task["tz"]) == ("daily:08:30", "Europe/Berlin")
    assert "08:30" in task["description"] and "Europe/Berlin" in task["description"]
    assert (task["timeout"], task["grace_seconds"], task["notify"]) == (30, 60, True)
    assert task["enabled"] is True and task["running"] is False
    assert task["next_run_at"] > time.time() and task["last_run_at"] is None
    assert task["last_status"] is None and task["session_id"] is None

    url = f"/v1/tasks/{task['id']}"
    assert http.get(url).json() == task
    assert http.get("/v1/tasks").json() == {"object": "list", "data": [task], "has_more": False}

    changed = http.patch(url, json={"name": "say hello", "schedule": "hourly:15", "tz": None})
    assert changed.status_code == 200, changed.text
    body = changed.json()
    assert (body["name"], body["schedule"], body["tz"]) == ("say hello", "hourly:15", None)
    assert body["next_run_at"] <= time.time() + 3600 and body["command"] == "echo hi"

    disabled = http.patch(url, json={"enabled": False}).json()
    assert disabled["enabled"] is False and http.get(url).json()["enabled"] is False
    enabled = http.patch(url, json={"enabled": True, "prompt": "Say hello"}).json()
    assert enabled["enabled"] is True
    assert (enabled["kind"], enabled["prompt"], enabled["command"]) == ("prompt", "Say hello", None)

    deleted = http.delete(url)
    assert deleted.status_code == 200
    assert deleted.json() == {"id": task["id"], "object": "task", "deleted": True}
    assert names(http) == []
    for response in (
        http.get(url),
        http.delete(url),
        http.patch(url, json={"enabled": False}),
        http.post(f"{url}/run"),
        http.get(f"{url}/runs"),
        http.get("/v1/tasks/say-hi"),
    ):
        assert response.status_code == 404, response.text
        assert response.json()["error"]["type"] == "not_found_error"


def test_kind_follows_the_fields_and_command_means_shell(http):
    prompt = add(http, name="news", command=None, prompt="Summarise the news")
    assert (prompt["kind"], prompt["prompt"], prompt["command"]) == (
        "prompt",
        "Summarise the news",
        None,
    )
    alias = add(http, name="uptime", kind="command", command="uptime")
    assert alias["kind"] == "shell"
    off = add(http, name="later", enabled=False)
    assert off["enabled"] is False
    assert names(http) == ["news", "uptime", "later"]
    assert names(http, q="UPTIME") == ["uptime"]
    assert names(http, q="summarise") == ["news"]


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"name": None}, "field 'name' is required"),
        ({"schedule": None}, "field 'schedule' is required"),
        ({"name": 7}, "field 'name': expected a string, got a number"),
        ({"name": "42"}, "is a number; it would be read as an id"),
        ({"schedule": "sometimes"}, "unknown schedule kind in 'sometimes'"),
        ({"schedule": "cron:61 * * * *"}, "cron minute field: value 61 is out of range 0-59"),
        ({"schedule": "daily:25:00"}, "daily: hour 25 is out of range 0-23"),
        ({"schedule": "once:2001-01-01T00:00"}, "never fires after now"),
        ({"tz": "Mars/Olympus"}, "unknown time zone 'Mars/Olympus'"),
        ({"kind": "python"}, "field 'kind': expected shell, command or prompt, got 'python'"),
        ({"kind": "prompt"}, "a prompt task needs a prompt"),
        ({"prompt": "hello"}, "give either a command (shell task) or a prompt"),
        ({"command": None}, "a task needs a command (kind shell) or a prompt (kind prompt)"),
        ({"command": "shutdown now"}, "refused by the shell deny-list"),
        ({"timeout": "soon"}, "field 'timeout': expected a number of seconds, got 'soon'"),
        ({"timeout": 0}, "timeout must be between 1 and 21600 seconds, not 0"),
        ({"grace_seconds": -1}, "grace_seconds must be between 0 and 604800 seconds"),
        ({"enabled": "yes"}, "field 'enabled': expected true or false, got a string"),
        ({"notify": 1}, "field 'notify': expected true or false, got a number"),
        ({"every": "day"}, "unknown field(s) every; expected name, kind, schedule"),
    ],
)
def test_add_rejects_invalid_tasks_saying_why(http, fields, expected):
    response = http.post("/v1/tasks", json={**ECHO, **fields})
    assert expected in message(response)
    assert names(http) == []


def test_add_refuses_a_taken_name_and_non_json(http):
    add(http)
    assert "a task named 'SAY HI' already exists" in message(
        http.post("/v1/tasks", json={**ECHO, "name": "SAY HI"})
    )
    assert message(http.post("/v1/tasks", content="name=x"), 415)
    assert "malformed JSON" in message(
        http.post("/v1/tasks", content="{", headers={"content-type": "application/json"})
    )


def test_patch_validates_and_leaves_the_task_unchanged(http):
    task = add(http)
    url = f"/v1/tasks/{task['id']}"
    assert "nothing to change" in message(http.patch(url, json={}))
    assert "unknown schedule kind" in message(http.patch(url, json={"schedule": "often"}))
    assert "unknown time zone" in message(http.patch(url, json={"tz": "Nowhere/Land"}))
    assert "a prompt task needs a prompt" in message(http.patch(url, json={"kind": "prompt"}))
    assert "unknown field(s) id" in message(http.patch(url, json={"id": 9}))
    add(http, name="other")
    assert "already exists" in message(http.patch(url, json={"name": "Other"}))
    assert http.get(url).json() == task


def test_run_now_records_a_shell_run_with_its_output(live, http):
    task = add(http, enabled=False)  # run now works whatever the schedule or enabled flag
    response = http.post(f"/v1/tasks/{task['id']}/run")
    assert response.status_code == 200, response.text
    run = response.json()
    assert (run["object"], run["task_id"], run["status"]) == ("task.run", task["id"], "ok")
    assert run["exit_code"] == 0 and run["output"].strip() == "hi" and run["error"] is None
    assert run["started_at"] <= run["ended_at"] < run["started_at"] + 30
    assert run["duration"] == run["ended_at"] - run["started_at"]

    failing = add(http, name="fails", command="echo oops; exit 3")
    bad = http.post(f"/v1/tasks/{failing['id']}/run").json()
    assert (bad["status"], bad["exit_code"], bad["output"].strip()) == ("failed", 3, "oops")
    assert bad["error"] == "exit code 3"

    runs = http.get(f"/v1/tasks/{task['id']}/runs")
    assert runs.status_code == 200
    assert runs.json() == {"object": "list", "data": [run], "has_more": False}
    after = http.get(f"/v1/tasks/{task['id']}").json()
    assert after["last_status"] == "ok" and after["running"] is False
    assert after["next_run_at"] == task["next_run_at"]  # the schedule is unchanged
    assert live.runtime.scheduler is not None and live.runtime.scheduler.is_running


def test_runs_history_is_newest_first_and_limited(http):
    task = add(http)
    url = f"/v1/tasks/{task['id']}"
    made = [http.post(f"{url}/run").json()["id"] for _ in range(3)]
    assert [r["id"] for r in http.get(f"{url}/runs").json()["data"]] == made[::-1]
    assert [r["id"] for r in http.get(f"{url}/runs?limit=2").json()["data"]] == made[:0:-1]
    assert "expected 1-200" in message(http.get(f"{url}/runs?limit=0"))


def test_run_now_refuses_to_overlap_a_running_task(live, http, workspace):
    gate = workspace / "go"
    task = add(http, command="while [ ! -f go ]; do sleep 0.02; done; echo done")
    url = f"/v1/tasks/{task['id']}"
    outcome: list = []

    def run_first() -> None:
        with live.client() as other:
            outcome.append(other.post(f"{url}/run"))

    first = threading.Thread(target=run_first)
    first.start()
    try:
        runs = wait_for(lambda: http.get(f"{url}/runs").json()["data"], "the run to start")
        assert runs[0]["status"] == "running" and runs[0]["ended_at"] is None
        assert http.get(url).json()["running"] is True
        assert task["id"] in live.runtime.scheduler.active  # the server's own scheduler runs it
        assert "running already" in message(http.post(f"{url}/run"), 409)
    finally:
        gate.touch()
        first.join(timeout=30)
    assert outcome[0].status_code == 200, outcome[0].text
    assert outcome[0].json()["status"] == "ok" and outcome[0].json()["output"].strip() == "done"
    assert [r["status"] for r in http.get(f"{url}/runs").json()["data"]] == ["ok"]


def test_run_now_without_waiting_answers_at_once_and_the_history_follows_the_run(
    live, http, workspace
):
    gate = workspace / "go"
    task = add(http, command="while [ ! -f go ]; do sleep 0.02; done; echo done")
    url = f"/v1/tasks/{task['id']}"
    started = http.post(f"{url}/run?wait=false", timeout=5)
    assert started.status_code == 202, started.text
    run = started.json()
    assert (run["status"], run["task_id"], run["ended_at"]) == ("running", task["id"], None)
    try:
        assert http.get(f"{url}/runs").json()["data"][0] == run
        assert task["id"] in live.runtime.scheduler.active
        assert "running already" in message(http.post(f"{url}/run?wait=false"), 409)
    finally:
        gate.touch()

    def ended() -> dict | None:
        latest = http.get(f"{url}/runs").json()["data"][0]
        return latest if latest["status"] != "running" else None

    finished = wait_for(ended, "the run to end")
    assert (finished["id"], finished["status"]) == (run["id"], "ok")
    assert finished["output"].strip() == "done"
    assert "expected true or false" in message(http.post(f"{url}/run?wait=later"))
    assert http.post("/v1/tasks/999/run?wait=false").status_code == 404


def test_run_now_is_busy_while_another_process_holds_the_task(live, http):
    task = add(http)
    now = time.time()
    tasks = live.runtime.store.tasks
    assert tasks.claim(task["id"], "elsewhere", now, now + 600, due_only=False) is not None
    assert "running already" in message(http.post(f"/v1/tasks/{task['id']}/run"), 409)
    assert http.get(f"/v1/tasks/{task['id']}").json()["running"] is True
    assert http.get(f"/v1/tasks/{task['id']}/runs").json()["data"] == []


def test_run_now_of_a_prompt_task_runs_a_turn_in_its_session(http, scripted_server):
    scripted_server.push(Reply(text="Today: sunny."))
    task = add(http, name="weather", command=None, prompt="What is the weather?")
    run = http.post(f"/v1/tasks/{task['id']}/run").json()
    assert (run["status"], run["output"]) == ("ok", "Today: sunny."), run
    assert run["session_id"]
    assert http.get(f"/v1/tasks/{task['id']}").json()["session_id"] == run["session_id"]
    session = http.get(f"/v1/sessions/{run['session_id']}")
    assert session.status_code == 200 and session.json()["title"] == "Task: weather"


def test_preview_shows_the_next_fire_times_without_saving(http):
    response = http.get(
        "/v1/tasks/preview", params={"schedule": "daily:08:30", "tz": "UTC", "count": 3}
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["object"], body["schedule"], body["tz"]) == ("task.schedule", "daily:08:30", "UTC")
    assert "08:30" in body["description"] and "UTC" in body["description"]
    times = [datetime.fromisoformat(text) for text in body["next"]]
    assert [t.strftime("%H:%M %z") for t in times] == ["08:30 +0000"] * 3
    assert [b - a for a, b in zip(times[:-1], times[1:], strict=True)] == [timedelta(days=1)] * 2
    assert body["next_at"] == [t.timestamp() for t in times]
    assert time.time() < body["next_at"][0] <= time.time() + 86400
    assert names(http) == []

    zoned = http.get("/v1/tasks/preview", params={"schedule": "weekly:mon:09:00 tz=Asia/Tokyo"})
    assert len(zoned.json()["next"]) == 5 and zoned.json()["tz"] == "Asia/Tokyo"
    assert all(t.endswith("09:00:00+09:00") for t in zoned.json()["next"])


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({}, "query parameter 'schedule' is required"),
        ({"schedule": "cron:* * * 13 *"}, "cron month field"),
        ({"schedule": "daily:08:30", "tz": "Mars/Olympus"}, "unknown time zone"),
        ({"schedule": "once:2001-01-01T00:00"}, "never fires after now"),
        ({"schedule": "daily:08:30", "count": 0}, "query parameter 'count': expected 1-50"),
        ({"schedule": "daily:08:30", "count": "x"}, "query parameter 'count': expected an integer"),
    ],
)
def test_preview_rejects_invalid_schedules(http, params, expected):
    assert expected in message(http.get("/v1/tasks/preview", params=params))


def test_search_finds_tasks(http):
    backup = add(http, name="nightly backup", command="echo backing up")
    add(http, name="news", command=None, prompt="Summarise the news")
    found = http.get("/v1/search", params={"q": "backup"})
    assert found.status_code == 200, found.text
    assert [t["id"] for t in found.json()["tasks"]] == [backup["id"]]
    assert found.json()["tasks"][0]["object"] == "task"
    assert [t["name"] for t in http.get("/v1/search?q=summarise").json()["tasks"]] == ["news"]
    assert http.get("/v1/search?q=nothing-like-it").json()["tasks"] == []


def test_search_documents_every_kind_it_returns(http):
    add(http, name="nightly backup", command="echo backing up")
    returned = http.get("/v1/search", params={"q": "backup"}).json()
    document = http.get("/openapi.json").json()
    answer = document["paths"]["/v1/search"]["get"]["responses"]["200"]["content"]
    documented = answer["application/json"]["schema"]["properties"]
    assert (
        set(returned) == set(documented) == {"query", "sessions", "messages", "memories", "tasks"}
    )


def test_openapi_documents_the_task_routes(http):
    document = http.get("/openapi.json").json()
    paths = document["paths"]
    assert set(paths["/v1/tasks"]) == {"get", "post"}
    assert set(paths["/v1/tasks/{id}"]) == {"get", "patch", "delete"}
    assert set(paths["/v1/tasks/{id}/run"]) == {"post"}
    assert set(paths["/v1/tasks/{id}/runs"]) == {"get"}
    assert set(paths["/v1/tasks/preview"]) == {"get"}
    assert "201" in paths["/v1/tasks"]["post"]["responses"]
    assert "409" in paths["/v1/tasks/{id}/run"]["post"]["responses"]
    body = paths["/v1/tasks"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert {"name", "kind", "schedule", "tz", "command", "prompt", "enabled"} <= set(
        body["properties"]
    )
    assert all(
        op["tags"] == ["tasks"]
        for path, item in paths.items()
        if "tasks" in path
        for op in item.values()
    )
    validator = pytest.importorskip("openapi_spec_validator")
    validator.validate(document)


def test_read_only_mode_refuses_shell_tasks_at_creation_and_at_every_run(http, workspace):
    marker = workspace / "ran.txt"
    task = add(http, command=f"touch {marker}")
    assert http.patch("/v1/config", json={"agent": {"approval": "never"}}).status_code == 200
    refused = http.post("/v1/tasks", json={**ECHO, "name": "another"})
    assert "read-only mode (approval: never)" in message(refused, 403)
    changed = http.patch(f"/v1/tasks/{task['id']}", json={"command": "echo changed"})
    assert message(changed, 403)
    run = http.post(f"/v1/tasks/{task['id']}/run").json()
    assert run["status"] == "failed" and "read-only mode" in run["error"]
    assert not marker.exists()
    prompt = http.post("/v1/tasks", json={"name": "ask", "schedule": "daily:08:30", "prompt": "hi"})
    assert prompt.status_code == 201  # a prompt task's tools obey the policy turn by turn
    assert http.patch("/v1/config", json={"agent": {"approval": "auto"}}).status_code == 200
    assert http.post(f"/v1/tasks/{task['id']}/run").json()["status"] == "ok"
    assert marker.exists()
