"""Schedules as users write them, and their next fire times.

Forms (the kind is case-insensitive)::

    once:2026-12-24T18:00          ISO-8601; naive means the schedule's zone, an offset is kept
    interval:3600                  every N seconds after the anchor (task creation / last run)
    hourly:15                      every hour at minute 15
    daily:09:00                    every day at 09:00
    weekly:mon:09:00               also weekly:mon,wed:09:00 (mon..sun or full day names)
    cron:*/15 9-17 * * mon-fri     five-field cron, or a macro: cron:@daily

Time zone: a trailing `` tz=Europe/Berlin`` in the text, else the ``tz`` argument of
:func:`parse_schedule`, else the system's local zone (``$TZ``, then ``/etc/localtime``, else
UTC), looked up at each call. Wall-clock kinds are computed in wall-clock time and then placed
in the zone: a time inside a spring-forward gap fires at the first instant after the gap (02:30
-> 03:00 in Europe/Berlin), a time repeated by a fall-back fires once, at its first occurrence.
Intervals count absolute seconds and ignore DST.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from .cron import CronExpr, ScheduleError

__all__ = ["Schedule", "ScheduleError", "parse_schedule"]

KINDS = ("once", "interval", "hourly", "daily", "weekly", "cron")
_WEEKDAYS = ("sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday")
_TZ_SUFFIX = re.compile(r"\s+tz=(\S+)\s*$", re.IGNORECASE)
_CLOCK = re.compile(r"(\d{1,2}):(\d{1,2})")
# Fall-back hours repeat at most 60 minute-marks whose first occurrence lies before `after`;
# skipping them one by one is bounded by this.
_MAX_SKIPS = 24 * 60


def zone_for(name: str | None) -> tzinfo:
    """The tzinfo for an IANA zone name, or the system's local zone for ``None``."""
    if name is None:
        return _local_zone()
    try:
        return ZoneInfo(name)
    # OSError: a name the file system refuses (too long, odd bytes) before the lookup fails
    except (ZoneInfoNotFoundError, ValueError, OSError) as exc:
        raise ScheduleError(
            f"unknown time zone {name!r}: not found in the tz database "
            "(use an IANA name such as Europe/Berlin; is tzdata / /usr/share/zoneinfo installed?)"
        ) from exc


def _local_zone() -> tzinfo:
    name = os.environ.get("TZ", "").lstrip(":")
    if name:
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError, OSError):
            pass  # a POSIX TZ rule string, not a zone name: fall back to the system file
    try:
        with open("/etc/localtime", "rb") as fh:
            return ZoneInfo.from_file(fh, key="localtime")
    except (OSError, ValueError):
        return timezone.utc


def place_wall_time(wall: datetime, zone: tzinfo) -> datetime:
    """Aware datetime for a naive wall-clock time in ``zone``, applying the DST rules.

    Ambiguous (fall back): the first occurrence (fold=0). Non-existent (spring forward): the
    first valid instant after the gap, i.e. the transition itself.
    """
    first = wall.replace(tzinfo=zone, fold=0)
    if _wall_of(first, zone) == wall.replace(fold=0):
        return first
    # In a gap: fold=1 reads the wall with the later offset, fold=0 with the earlier one, so
    # the transition lies between the two instants; bisect it to the second.
    low = int(wall.replace(tzinfo=zone, fold=1).timestamp())
    high = int(first.timestamp())
    while high - low > 1:
        mid = (low + high) // 2
        if _wall_of(datetime.fromtimestamp(mid, zone), zone) > wall:
            high = mid
        else:
            low = mid
    return datetime.fromtimestamp(high, zone)


def _wall_of(moment: datetime, zone: tzinfo) -> datetime:
    return moment.astimezone(timezone.utc).astimezone(zone).replace(tzinfo=None, fold=0)


def _require_aware(value: datetime, name: str) -> None:
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{name} must be a timezone-aware datetime, got {value!r}")


@dataclass(frozen=True)
class _Once:
    when: datetime  # naive = in the schedule's zone

    def next_after(self, after: datetime, anchor: datetime | None, zone: tzinfo) -> datetime | None:
        moment = self.when if self.when.tzinfo else place_wall_time(self.when, zone)
        return moment.astimezone(zone) if moment > after else None

    def describe(self) -> str:
        text = self.when.strftime("%Y-%m-%d %H:%M")
        if self.when.tzinfo is not None:
            text += self.when.strftime("%z")
        return f"once at {text}"


@dataclass(frozen=True)
class _Interval:
    seconds: int

    def next_after(self, after: datetime, anchor: datetime | None, zone: tzinfo) -> datetime | None:
        step = timedelta(seconds=self.seconds)
        if anchor is None:
            return (after + step).astimezone(zone)
        _require_aware(anchor, "anchor")
        periods = max(1, (after - anchor) // step + 1)
        return (anchor + periods * step).astimezone(zone)

    def describe(self) -> str:
        for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60), ("second", 1)):
            if self.seconds % size == 0:
                count = self.seconds // size
                return f"every {unit}" if count == 1 else f"every {count} {unit}s"
        raise AssertionError("unreachable: every int is a multiple of 1")


@dataclass(frozen=True)
class _WallClock:
    cron: CronExpr
    text: str

    def next_after(self, after: datetime, anchor: datetime | None, zone: tzinfo) -> datetime | None:
        wall = after.astimezone(zone).replace(tzinfo=None)
        for _ in range(_MAX_SKIPS):
            candidate = self.cron.next_after(wall)
            if candidate is None:
                return None
            moment = place_wall_time(candidate, zone)
            # After a fall-back, wall times whose first occurrence already passed come round
            # again; they fired then, so skip them.
            if moment > after:
                return moment
            wall = candidate
        return None

    def describe(self) -> str:
        return self.text


def _int(text: str, what: str, low: int, high: int, usage: str) -> int:
    if not text.strip().isdecimal():
        raise ScheduleError(f"{what} {text!r} is not a number (expected {usage})")
    value = int(text)
    if not low <= value <= high:
        raise ScheduleError(f"{what} {value} is out of range {low}-{high} (expected {usage})")
    return value


def _clock(text: str, kind: str) -> tuple[int, int]:
    usage = f"{kind}:...HH:MM, hour 0-23, minute 0-59"
    match = _CLOCK.fullmatch(text.strip())
    if match is None:
        raise ScheduleError(f"{kind}: time {text!r} is not HH:MM (expected {usage})")
    hour = _int(match.group(1), f"{kind}: hour", 0, 23, usage)
    minute = _int(match.group(2), f"{kind}: minute", 0, 59, usage)
    return hour, minute


def _weekday(name: str) -> int:
    lowered = name.strip().lower()
    for number, full in enumerate(_WEEKDAYS):
        if lowered in (full, full[:3]):
            return number
    raise ScheduleError(
        f"weekly: unknown day {name.strip()!r} (expected mon, tue, wed, thu, fri, sat, sun "
        "or a comma list such as mon,wed)"
    )


def _compile_once(spec: str) -> _Once:
    text = spec.strip()
    if text[-1:] in ("Z", "z"):  # fromisoformat accepts "Z" only from Python 3.11
        text = text[:-1] + "+00:00"
    try:
        return _Once(datetime.fromisoformat(text))
    except ValueError as exc:
        raise ScheduleError(
            f"once: {spec.strip()!r} is not an ISO-8601 date-time "
            "(expected e.g. once:2026-12-24T18:00 or once:2026-12-24T18:00+01:00)"
        ) from exc


def _compile_interval(spec: str) -> _Interval:
    usage = "interval:SECONDS, a positive whole number"
    return _Interval(_int(spec, "interval: seconds", 1, 10**10, usage))


def _compile_hourly(spec: str) -> _WallClock:
    minute = _int(spec, "hourly: minute", 0, 59, "hourly:MM, minute 0-59")
    return _WallClock(CronExpr.parse(f"{minute} * * * *"), f"every hour at :{minute:02d}")


def _compile_daily(spec: str) -> _WallClock:
    hour, minute = _clock(spec, "daily")
    cron = CronExpr.parse(f"{minute} {hour} * * *")
    return _WallClock(cron, f"every day at {hour:02d}:{minute:02d}")


def _compile_weekly(spec: str) -> _WallClock:
    days_text, colon, clock = spec.partition(":")
    if not colon:
        raise ScheduleError(f"weekly: {spec!r} is not DAY:HH:MM (expected e.g. weekly:mon:09:00)")
    days = sorted({_weekday(name) for name in days_text.split(",")}, key=lambda d: (d + 6) % 7)
    hour, minute = _clock(clock, "weekly")
    cron = CronExpr.parse(f"{minute} {hour} * * {','.join(map(str, days))}")
    names = [_WEEKDAYS[d].capitalize() for d in days]
    joined = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return _WallClock(cron, f"every {joined} at {hour:02d}:{minute:02d}")


def _compile_cron(spec: str) -> _WallClock:
    cron = CronExpr.parse(spec)
    return _WallClock(cron, f"cron {cron.text!r}")


_COMPILERS = {
    "once": _compile_once,
    "interval": _compile_interval,
    "hourly": _compile_hourly,
    "daily": _compile_daily,
    "weekly": _compile_weekly,
    "cron": _compile_cron,
}


@dataclass(frozen=True)
class Schedule:
    """A validated schedule: ``kind`` (once, interval, ...), ``spec`` (the text after
    ``kind:``) and ``tz`` (IANA zone name, ``None`` = local zone). ``str()`` gives text that
    :func:`parse_schedule` reads back."""

    kind: str
    spec: str
    tz: str | None = None
    _rule: _Once | _Interval | _WallClock = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        compiler = _COMPILERS.get(self.kind)
        if compiler is None:
            raise ScheduleError(
                f"unknown schedule kind {self.kind!r} (expected one of: {', '.join(KINDS)})"
            )
        object.__setattr__(self, "_rule", compiler(self.spec))
        if self.tz is not None:
            zone_for(self.tz)

    def __str__(self) -> str:
        return f"{self.kind}:{self.spec}" + (f" tz={self.tz}" if self.tz else "")

    def next_after(self, after: datetime, anchor: datetime | None = None) -> datetime | None:
        """Next fire time strictly after the aware ``after``, aware in the schedule's zone.

        ``anchor`` (task creation or last run) is used by ``interval`` only; without it the
        interval counts from ``after``. ``None`` means the schedule never fires again.
        """
        _require_aware(after, "after")
        return self._rule.next_after(after, anchor, zone_for(self.tz))

    def next_times(
        self, after: datetime, count: int = 5, anchor: datetime | None = None
    ) -> list[datetime]:
        """Up to ``count`` successive fire times after ``after``."""
        _require_aware(after, "after")
        zone = zone_for(self.tz)
        times: list[datetime] = []
        while len(times) < count:
            moment = self._rule.next_after(after, anchor, zone)
            if moment is None:
                break
            times.append(moment)
            after = moment
        return times

    def describe(self) -> str:
        """Human text, e.g. ``every day at 09:00 (Europe/Berlin)``."""
        return f"{self._rule.describe()} ({self.tz or 'local time'})"


def parse_schedule(text: str, tz: str | None = None) -> Schedule:
    """Parse ``kind:spec`` with an optional trailing `` tz=Zone``, which overrides ``tz``."""
    body = text.strip()
    suffix = _TZ_SUFFIX.search(body)
    if suffix is not None:
        tz = suffix.group(1)
        body = body[: suffix.start()]
    kind, colon, spec = body.partition(":")
    kind = kind.strip().lower()
    if not colon or kind not in _COMPILERS:
        hint = ""
        if len(body.split()) == 5 or body.startswith("@"):
            hint = f"; for a cron expression write cron:{body}"
        raise ScheduleError(
            f"unknown schedule kind in {text.strip()!r} "
            f"(expected one of: {', '.join(KINDS)}, as kind:spec{hint})"
        )
    return Schedule(kind, spec.strip(), tz)
