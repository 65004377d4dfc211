"""Five-field cron expressions and their next fire time in wall-clock time.

Grammar per field: ``*``, ``a``, ``a-b``, ``*/n``, ``a-b/n``, ``a/n`` (= ``a-max/n``) and comma
lists of these; month names ``jan``..``dec`` and day names ``sun``..``sat`` (case-insensitive);
day-of-week 0 and 7 are both Sunday. Macros: @hourly @daily @midnight @weekly @monthly @yearly
@annually.

Day matching follows Vixie cron / cronie: when both day-of-month and day-of-week are
restricted (their field does not start with ``*``) a day matches if EITHER matches; otherwise
both must match (an unrestricted field matches every day).

``CronExpr.next_after`` works on naive wall-clock datetimes; time zones and DST are the
caller's business (see ``schedules.py``).
"""

from __future__ import annotations

import calendar
from bisect import bisect_left
from dataclasses import dataclass
from datetime import MAXYEAR, datetime, timedelta

from ..errors import TeaAgentError

__all__ = ["CronExpr", "ScheduleError"]


class ScheduleError(TeaAgentError, ValueError):
    """A schedule or cron expression is malformed or can never fire.

    Lives here, in the lowest module of the scheduler, so cron.py and schedules.py share it
    without an import cycle; the package re-exports it.
    """


_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
_MACROS = {
    "@hourly": "0 * * * *",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@weekly": "0 0 * * 0",
    "@monthly": "0 0 1 * *",
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
}
# A feasible expression fires within one 400-year Gregorian cycle (the calendar repeats
# exactly after it), so this bound only guards against bugs, never cuts off a real answer.
_MAX_YEARS = 400
# Longest possible month per month number, used to reject dates that never exist.
_MAX_MONTH_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


@dataclass(frozen=True)
class _Field:
    name: str
    low: int
    high: int
    names: tuple[str, ...] = ()
    names_start: int = 0


_FIELDS = (
    _Field("minute", 0, 59),
    _Field("hour", 0, 23),
    _Field("day-of-month", 1, 31),
    _Field("month", 1, 12, _MONTHS, 1),
    _Field("day-of-week", 0, 7, _DAYS, 0),
)


def _value(token: str, field: _Field, expr: str) -> int:
    lowered = token.lower()
    if lowered in field.names:
        return field.names.index(lowered) + field.names_start
    if not token.isdecimal():
        allowed = f"{field.low}-{field.high}"
        if field.names:
            allowed += f" or {field.names[0]}..{field.names[-1]}"
        raise ScheduleError(
            f"cron {field.name} field: {token!r} is not a number (allowed {allowed}) in {expr!r}"
        )
    number = int(token)
    if not field.low <= number <= field.high:
        raise ScheduleError(
            f"cron {field.name} field: value {number} is out of range "
            f"{field.low}-{field.high} in {expr!r}"
        )
    return number


def _element(element: str, field: _Field, expr: str) -> range:
    where = f"cron {field.name} field"
    if not element:
        raise ScheduleError(f"{where}: empty list item in {expr!r}")
    base, slash, step_text = element.partition("/")
    step = 1
    if slash:
        if not step_text.isdecimal() or int(step_text) == 0:
            raise ScheduleError(
                f"{where}: step {step_text!r} must be a positive integer in {expr!r}"
            )
        step = int(step_text)
    if base == "*":
        return range(field.low, field.high + 1, step)
    first_text, dash, last_text = base.partition("-")
    first = _value(first_text, field, expr)
    if dash:
        last = _value(last_text, field, expr)
    else:
        last = field.high if slash else first
    if last < first:
        raise ScheduleError(f"{where}: range {base!r} goes backwards in {expr!r}")
    return range(first, last + 1, step)


def _parse_field(text: str, field: _Field, expr: str) -> tuple[int, ...]:
    values: set[int] = set()
    for element in text.split(","):
        values.update(_element(element, field, expr))
    if field.name == "day-of-week" and 7 in values:
        values.discard(7)
        values.add(0)
    return tuple(sorted(values))


@dataclass(frozen=True)
class CronExpr:
    """A parsed cron expression; build it with :meth:`CronExpr.parse`."""

    text: str
    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    days: tuple[int, ...]
    months: tuple[int, ...]
    weekdays: tuple[int, ...]  # 0 = Sunday .. 6 = Saturday
    either_day: bool  # Vixie rule: dom and dow both restricted, so either may match

    @classmethod
    def parse(cls, text: str) -> CronExpr:
        """Parse ``text``; raise :class:`ScheduleError` naming the bad field and range."""
        expr = " ".join(text.split())
        source = _MACROS.get(expr.lower(), expr)
        if source.startswith("@"):
            known = ", ".join(_MACROS)
            raise ScheduleError(f"unknown cron macro {expr!r} (supported: {known})")
        parts = source.split()
        if len(parts) != 5:
            raise ScheduleError(
                "cron expression needs 5 fields (minute hour day-of-month month day-of-week), "
                f"got {len(parts)} in {expr!r}"
            )
        minutes, hours, days, months, weekdays = (
            _parse_field(p, f, expr) for p, f in zip(parts, _FIELDS, strict=True)
        )
        either = not parts[2].startswith("*") and not parts[4].startswith("*")
        cron = cls(expr, minutes, hours, days, months, weekdays, either_day=either)
        cron._check_feasible()
        return cron

    def _check_feasible(self) -> None:
        # With the OR rule any weekday suffices; otherwise some listed day must exist in
        # some listed month (then the 400-year cycle puts it on every weekday).
        if self.either_day:
            return
        if any(self.days[0] <= _MAX_MONTH_DAYS[m - 1] for m in self.months):
            return
        names = ",".join(_MONTHS[m - 1] for m in self.months)
        raise ScheduleError(
            f"cron expression {self.text!r} can never fire: day-of-month "
            f"{','.join(map(str, self.days))} does not occur in month {names}"
        )

    def next_after(self, after: datetime) -> datetime | None:
        """Return the first matching minute strictly after the naive wall-clock ``after``.

        Walks month -> day -> hour -> minute with carries, so the work is bounded by the
        number of candidate days visited, never by minutes. ``None`` only past year 9999.
        """
        if after.tzinfo is not None:
            raise ValueError("CronExpr.next_after takes a naive wall-clock datetime")
        if after >= datetime(MAXYEAR, 12, 31, 23, 59):
            return None
        start = after.replace(second=0, microsecond=0) + timedelta(minutes=1)
        for year in range(start.year, min(start.year + _MAX_YEARS, MAXYEAR + 1)):
            first_month = start.month if year == start.year else 1
            for month in self.months[bisect_left(self.months, first_month) :]:
                same_month = (year, month) == (start.year, start.month)
                for day in self._days(year, month, start.day if same_month else 1):
                    if same_month and day == start.day:
                        hm = self._time_from(start.hour, start.minute)
                    else:
                        hm = (self.hours[0], self.minutes[0])
                    if hm is not None:
                        return datetime(year, month, day, hm[0], hm[1])
        return None

    def _days(self, year: int, month: int, first: int) -> list[int]:
        first_weekday, length = calendar.monthrange(year, month)
        sunday_based = first_weekday + 1  # calendar: Monday=0; cron: Sunday=0

        def weekday(day: int) -> int:
            return (sunday_based + day - 1) % 7

        if self.either_day:
            return [
                d for d in range(first, length + 1) if d in self.days or weekday(d) in self.weekdays
            ]
        candidates = self.days[bisect_left(self.days, first) :]
        return [d for d in candidates if d <= length and weekday(d) in self.weekdays]

    def _time_from(self, hour: int, minute: int) -> tuple[int, int] | None:
        """Earliest (hour, minute) of the expression at or after hour:minute on one day."""
        i = bisect_left(self.hours, hour)
        if i < len(self.hours) and self.hours[i] == hour:
            j = bisect_left(self.minutes, minute)
            if j < len(self.minutes):
                return hour, self.minutes[j]
            i += 1
        if i < len(self.hours):
            return self.hours[i], self.minutes[0]
        return None
