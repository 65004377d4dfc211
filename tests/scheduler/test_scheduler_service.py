"""TaskService: validation with clear messages, updates that reschedule, enable/disable."""

from __future__ import annotations

import asyncio

import pytest

from tea_agent_mini.errors import TeaAgentError
from tea_agent_mini.scheduler.cron import ScheduleError
from tea_agent_mini.scheduler.runner import TaskError, TaskNotFound
from tea_agent_mini.scheduler.service import TaskService
from tea_agent_mini.store import Store
from tests.scheduler.scheduler_helpers import T0, FakeClock, utc


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def service(tmp_path, clock):
    with Store.open(tmp_path / "chat.db") as store:
        yield TaskService(store, clock=clock)


@pytest.mark.parametrize(
    "schedule, message",
    [
        ("daily:25:00", "daily: hour 25 is out of range 0-23"),
        ("0 9 * * *", "for a cron expression write cron:0 9 * * *"),
        ("cron:* * *", "cron expression needs 5 fields"),
        ("cron:0 0 31 2 *", "can never fire: day-of-month 31 does not occur in month feb"),
        ("weekly:funday:09:00", "weekly: unknown day 'funday'"),
        ("daily:09:00 tz=Mars/Base", "unknown time zone 'Mars/Base'"),
        ("interval:0", "interval: seconds 0 is out of range"),
        ("once:2020-01-01T00:00", "once:2020-01-01T00:00 tz=UTC never fires after now"),
        ("", "schedule is required"),
    ],
)
def test_invalid_schedules_are_rejected_with_what_is_wrong(service, schedule, message):
    with pytest.raises(TeaAgentError) as caught:
        service.add("job", schedule, command="echo hi", tz="UTC")
    assert isinstance(caught.value, (ScheduleError, TaskError))
    assert message in str(caught.value)
    assert service.matching() == []


@pytest.mark.parametrize(
    "options, message",
    [
        ({"name": ""}, "a task name is required"),
        ({"name": "x" * 81}, "at most 80"),
        ({"name": "#12"}, "is a number"),
        ({"command": None}, "needs a command (kind shell) or a prompt (kind prompt)"),
        ({"prompt": "hi"}, "either a command (shell task) or a prompt (prompt task), not both"),
        ({"kind": "prompt"}, "a prompt task needs a prompt"),
        ({"kind": "python"}, "unknown task kind 'python'"),
        ({"command": "rm -rf /"}, "deny-list"),
        ({"timeout": 0}, "timeout must be between 1 and 21600 seconds"),
        ({"grace_seconds": -1}, "grace_seconds must be between 0"),
        ({"timeout": "soon"}, "timeout must be a number of seconds"),
    ],
)
def test_invalid_tasks_are_rejected(service, options, message):
    arguments = {"name": "job", "command": "echo hi", **options}
    with pytest.raises(TaskError, match=None) as caught:
        service.add(arguments.pop("name"), "daily:09:00", **arguments)
    assert message in str(caught.value)


def test_add_normalises_and_schedules_from_now(service, clock):
    task = service.add("  morning   report ", "daily:09:00 tz=Asia/Tokyo", prompt=" Report. ")
    assert task.name == "morning report" and task.kind == "prompt" and task.prompt == "Report."
    assert task.schedule == "daily:09:00" and task.tz == "Asia/Tokyo"
    assert task.next_run_at == utc("2026-01-06 00:00")  # 09:00 in Tokyo
    assert task.created_at == task.anchor_at == T0 and task.enabled and not task.notify
    assert (task.timeout, task.grace_seconds) == (300, 600)
    with pytest.raises(TaskError, match="already exists"):
        service.add("MORNING REPORT", "hourly:00", command="true")


def test_get_by_id_name_or_hash_id(service):
    task = service.add("backup", "hourly:05", command="true")
    assert service.get(task.id).id == service.get("backup").id == service.get(f"#{task.id}").id
    with pytest.raises(TaskNotFound, match="no task with id or name 'nope'"):
        service.get("nope")


def test_update_reschedules_only_when_the_schedule_or_zone_changes(service, clock):
    task = service.add("job", "interval:600", command="true", tz="UTC")
    assert task.next_run_at == T0 + 600
    clock.t = T0 + 100
    renamed = service.update(task.id, name="nightly job", timeout=60, notify=True)
    assert (renamed.name, renamed.timeout, renamed.notify) == ("nightly job", 60, True)
    assert renamed.next_run_at == T0 + 600 and renamed.anchor_at == T0
    moved = service.update("nightly job", schedule="daily:09:30")
    assert moved.schedule == "daily:09:30" and moved.tz == "UTC" and moved.anchor_at == T0 + 100
    assert moved.next_run_at == utc("2026-01-05 09:30")
    zoned = service.update(task.id, tz="Europe/Berlin")
    assert zoned.schedule == "daily:09:30" and zoned.next_run_at == utc("2026-01-05 08:30")


def test_update_switches_kind_by_giving_the_other_field(service):
    task = service.add("job", "hourly:00", command="echo hi")
    prompt = service.update(task.id, prompt="Summarise the logs")
    assert (prompt.kind, prompt.command, prompt.prompt) == ("prompt", None, "Summarise the logs")
    with pytest.raises(TaskError, match="a shell task needs a command"):
        service.update(task.id, kind="shell")
    shell = service.update(task.id, command="echo back")
    assert (shell.kind, shell.command, shell.prompt) == ("shell", "echo back", None)


@pytest.mark.parametrize(
    "changes, message",
    [
        ({}, "nothing to change"),
        ({"enabled": False}, "cannot change enabled"),
        ({"name": "other"}, "already exists"),
        ({"schedule": "daily:7"}, "daily: time '7' is not HH:MM"),
        ({"command": "mkfs.ext4 /dev/sda1"}, "deny-list"),
    ],
)
def test_invalid_updates_change_nothing(service, changes, message):
    task = service.add("job", "hourly:00", command="echo hi")
    service.add("other", "hourly:30", command="true")
    with pytest.raises(TeaAgentError, match=None) as caught:
        service.update(task.id, **changes)
    assert message in str(caught.value)
    assert service.get(task.id) == task


def test_enable_reschedules_from_now_without_catching_up(service, clock):
    task = service.add("job", "daily:09:00", command="true", tz="UTC")
    assert not service.set_enabled(task.id, False).enabled
    clock.t = utc("2026-01-07 12:00")  # two fire times passed while disabled
    enabled = service.set_enabled(task.id, True)
    assert enabled.enabled and enabled.next_run_at == utc("2026-01-08 09:00")


def test_a_finished_once_task_cannot_be_enabled_until_rescheduled(service, clock):
    task = service.add("job", "once:2026-01-05T10:00", command="true", tz="UTC")
    service.set_enabled(task.id, False)
    clock.t = utc("2026-01-05 11:00")
    with pytest.raises(ScheduleError, match="never fires after now"):
        service.set_enabled(task.id, True)
    service.update(task.id, schedule="once:2026-01-06T10:00")
    assert service.set_enabled(task.id, True).next_run_at == utc("2026-01-06 10:00")


def test_delete_removes_the_task(service):
    task = service.add("job", "hourly:00", command="true")
    assert service.delete("job").id == task.id
    assert service.matching() == []
    with pytest.raises(TaskNotFound):
        service.delete(task.id)


def test_preview_lists_fire_times_without_saving(service):
    preview = service.preview("weekly:mon,fri:09:00", "Europe/Berlin", count=3)
    assert [t.isoformat() for t in preview.times] == [
        "2026-01-09T09:00:00+01:00",
        "2026-01-12T09:00:00+01:00",
        "2026-01-16T09:00:00+01:00",
    ]
    assert preview.schedule.describe() == "every Monday and Friday at 09:00 (Europe/Berlin)"
    assert service.matching() == []
    assert len(service.preview("interval:60", count=500).times) == 50  # capped


def test_run_now_without_a_runtime_says_so(service):
    task = service.add("job", "hourly:00", command="true")
    with pytest.raises(TaskError, match="needs the agent runtime"):
        asyncio.run(service.arun_now(task.id))
