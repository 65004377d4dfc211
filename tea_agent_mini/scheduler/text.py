"""Plain-text views of tasks, runs and schedule previews, shared by the tool and the CLI."""

from __future__ import annotations

from datetime import datetime, timezone, tzinfo
from typing import TYPE_CHECKING

from .cron import ScheduleError
from .schedules import parse_schedule, zone_for

if TYPE_CHECKING:
    from ..store.tasks import Task, TaskRun
    from .service import Preview

__all__ = ["format_preview", "format_run", "format_task", "format_time"]

TEXT_CHARS = 200  # of a command or prompt in a task listing
OUTPUT_CHARS = 2000  # of a run's output in a run view


def _zone(tz: str | None) -> tzinfo:
    try:
        return zone_for(tz)
    except ScheduleError:  # a zone removed from the tz database since the task was made
        return timezone.utc


def format_time(stamp: float | None, tz: str | None = None) -> str:
    """Epoch seconds as ``2026-05-02 09:00:00 CEST`` in the zone ``tz`` (None: local)."""
    if stamp is None:
        return "-"
    return datetime.fromtimestamp(stamp, _zone(tz)).strftime("%Y-%m-%d %H:%M:%S %Z").strip()


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _describe(task: Task) -> str:
    try:
        return parse_schedule(task.schedule, task.tz).describe()
    except ScheduleError as exc:
        return f"invalid schedule: {exc}"


def format_task(task: Task) -> str:
    """A few lines: id, name, kind, state, schedule, next and last run, what it does."""
    state = "enabled" if task.enabled else "disabled"
    zone = f" tz={task.tz}" if task.tz else ""
    flags = ", notify" if task.notify else ""
    last = format_time(task.last_run_at, task.tz)
    lines = [
        f"#{task.id} {task.name} [{task.kind}, {state}{flags}] {task.schedule}{zone} "
        f"({_describe(task)})",
        f"    next: {format_time(task.next_run_at, task.tz) if task.enabled else '-'}"
        f"   last: {last} ({task.last_status or 'never run'})",
        f"    {'command' if task.kind == 'shell' else 'prompt'}: "
        f"{_shorten(' '.join(task.text.split()), TEXT_CHARS)}",
    ]
    if task.topic_id:
        lines.append(f"    session: {task.topic_id}")
    return "\n".join(lines)


def format_run(run: TaskRun, tz: str | None = None, output_chars: int = OUTPUT_CHARS) -> str:
    """One run: status, times, exit code, error and (the start of) its output."""
    head = f"run #{run.id} {run.status}"
    if run.scheduled_for is not None:
        head += f", due {format_time(run.scheduled_for, tz)}"
    if run.started_at is not None:
        head += f", started {format_time(run.started_at, tz)}"
    if run.duration is not None and run.status not in ("missed", "skipped"):
        head += f", took {run.duration:.1f} s"
    if run.exit_code is not None:
        head += f", exit code {run.exit_code}"
    lines = [head]
    if run.error:
        lines.append(f"    error: {run.error}")
    if run.topic_id:
        lines.append(f"    session: {run.topic_id}")
    output = run.output.strip()
    if output and output_chars > 0:
        shown = _shorten(output, output_chars)
        lines.append("    output:")
        lines += [f"      {line}" for line in shown.splitlines()]
    return "\n".join(lines)


def format_preview(preview: Preview) -> str:
    schedule = preview.schedule
    zone = _zone(schedule.tz)
    lines = [f"{schedule} = {schedule.describe()}; next {len(preview.times)} fire times:"]
    lines += [f"  {when.astimezone(zone):%Y-%m-%d %H:%M:%S %Z (%a)}" for when in preview.times]
    return "\n".join(lines)
