"""The scheduler's task errors (``ScheduleError``, for schedules, lives in ``cron.py``)."""

from __future__ import annotations

from ..errors import TeaAgentError


class TaskError(TeaAgentError, ValueError):
    """A task request is invalid: bad name, kind or command, or a missing runtime."""


class TaskNotFound(TaskError, LookupError):
    """No task has the given id or name."""


class TaskBusy(TaskError):
    """The task is running already (here or in another process); runs never overlap."""
