"""Schedule parsing and next-fire computation: once, interval, hourly, daily, weekly, cron."""

from __future__ import annotations

from .cron import CronExpr, ScheduleError
from .schedules import Schedule, parse_schedule

__all__ = ["CronExpr", "Schedule", "ScheduleError", "parse_schedule"]
