"""toolkit_date_diff and toolkit_date_add: calendar arithmetic models get wrong by hand."""

from __future__ import annotations

import calendar
import datetime as dt
from collections.abc import Iterable
from typing import Literal, get_args

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import tool

Unit = Literal["all", "days", "weeks", "months", "years", "business_days"]
UNITS: tuple[str, ...] = get_args(Unit)
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MAX_BUSINESS_DAYS = 100_000

DATE_DESCRIPTION = (
    "YYYY-MM-DD, or an ISO date-time YYYY-MM-DDTHH:MM[:SS][+08:00], or 'today' / 'now'"
)


# ---- arithmetic ------------------------------------------------------------------------------


def parse_when(text: str) -> dt.datetime | dt.date:
    """A date, or a datetime when the text has a time of day. Raises ToolError."""
    value = text.strip()
    lowered = value.lower()
    if lowered == "today":
        return dt.date.today()
    if lowered == "now":
        return dt.datetime.now().replace(microsecond=0)
    if value.endswith(("Z", "z")):  # fromisoformat accepts "Z" only from Python 3.11
        value = value[:-1] + "+00:00"
    try:
        if len(value) <= 10:
            return dt.date.fromisoformat(value)
        return dt.datetime.fromisoformat(value)
    except ValueError as exc:
        raise ToolError(f"cannot read {text!r} as a date: use {DATE_DESCRIPTION}") from exc


def add_months(when: dt.date, months: int) -> dt.date:
    """``when`` plus whole months; the day is clamped to the month's end (Jan 31 + 1 -> Feb 28)."""
    total = when.year * 12 + when.month - 1 + months
    year, month = divmod(total, 12)
    if not dt.MINYEAR <= year <= dt.MAXYEAR:
        raise ToolError(f"the result falls outside the years {dt.MINYEAR}-{dt.MAXYEAR}")
    day = min(when.day, calendar.monthrange(year, month + 1)[1])
    return when.replace(year=year, month=month + 1, day=day)


def calendar_difference(start: dt.date, end: dt.date) -> tuple[int, dt.timedelta]:
    """(whole months, remainder) from ``start`` to ``end``; requires start <= end."""
    months = (end.year - start.year) * 12 + end.month - start.month
    if months > 0 and add_months(start, months) > end:
        months -= 1
    return months, end - add_months(start, months)


def business_days_between(start: dt.date, end: dt.date, holidays: Iterable[dt.date] = ()) -> int:
    """Monday-Friday days in [start, end) that are not holidays; requires start <= end."""
    days = (end - start).days
    weeks, extra = divmod(days, 7)
    count = weeks * 5
    for offset in range(extra):
        if (start.weekday() + offset) % 7 < 5:
            count += 1
    skipped = {day for day in holidays if start <= day < end and day.weekday() < 5}
    return count - len(skipped)


def add_business_days(start: dt.date, count: int, holidays: Iterable[dt.date] = ()) -> dt.date:
    if abs(count) > MAX_BUSINESS_DAYS:
        raise ToolError(f"business_days must be within ±{MAX_BUSINESS_DAYS}")
    closed = set(holidays)
    step = dt.timedelta(days=1 if count >= 0 else -1)
    day = start
    for _ in range(abs(count)):
        day += step
        while day.weekday() >= 5 or day in closed:
            day += step
    return day


# ---- toolkit_date_diff -----------------------------------------------------------------------


@tool("toolkit_date_diff", concurrency_safe=True)
def toolkit_date_diff(
    ctx: ToolContext,
    start: str,
    end: str,
    unit: Unit = "all",
    holidays: list[str] | None = None,
) -> str:
    """Exact difference between two dates or date-times: days, weeks, whole calendar months
    and years (e.g. '1 year, 2 months, 14 days'), and business days (Monday-Friday, counting
    the start day but not the end day, minus optional holidays). Use it rather than counting
    by hand. If end is before start the result is negative. With times of day the hours and
    minutes are reported too.

    Args:
        start: first date: YYYY-MM-DD, or an ISO date-time YYYY-MM-DDTHH:MM[:SS][+08:00], or
            'today' / 'now'
        end: second date, written like start
        unit: what to report (default all): days, weeks, whole calendar months or years,
            business_days (Mon-Fri), or all of them
        holidays: [business_days] extra dates (YYYY-MM-DD) that are not working days
    """
    if unit not in UNITS:
        raise ToolError(f"unknown unit {unit!r}; use one of {', '.join(UNITS)}")
    given = parse_when(start), parse_when(end)
    first, second = _comparable(*given)
    sign = ""
    if second < first:
        first, second, sign = second, first, "-"
    months, rest = calendar_difference(first, second)
    total = second - first
    header = f"{_show(given[0])} -> {_show(given[1])}"
    lines = []
    if unit in ("all", "years", "months"):
        phrase = _calendar_phrase(months, rest)
        lines.append(f"minus ({phrase})" if sign else phrase)
    if unit == "years":
        lines.append(f"whole years: {sign}{months // 12}")
    if unit in ("all", "months"):
        lines.append(f"whole months: {sign}{months}")
    if unit in ("all", "days"):
        lines.append(f"days: {sign}{total.days}" + _time_suffix(total))
    if unit in ("all", "weeks"):
        weeks, days = divmod(total.days, 7)
        split = ", ".join(filter(None, [_plural(weeks, "week"), _plural(days, "day")]))
        lines.append(f"weeks: {sign}{total.days / 7:.2f} ({split or '0 days'})")
    if isinstance(first, dt.datetime) and unit in ("all", "days"):
        lines.append(f"total hours: {sign}{total.total_seconds() / 3600:g}")
    if unit in ("all", "business_days"):
        closed = [_parse_date(text, "holiday") for text in holidays or ()]
        count = business_days_between(_day(first), _day(second), closed)
        note = f", {len(closed)} holiday(s) given" if closed else ""
        lines.append(f"business days (Mon-Fri, start counted, end not{note}): {sign}{count}")
    if sign:
        lines.append("(end is before start, so the results are negative)")
    return header + "\n" + "\n".join(lines)


def _comparable(
    first: dt.date | dt.datetime, second: dt.date | dt.datetime
) -> tuple[dt.datetime, dt.datetime] | tuple[dt.date, dt.date]:
    """Both dates, or both datetimes (a bare date counts as midnight), with matching zones."""
    if not isinstance(first, dt.datetime) and not isinstance(second, dt.datetime):
        return first, second
    a, b = _as_datetime(first), _as_datetime(second)
    if (a.tzinfo is None) != (b.tzinfo is None):
        raise ToolError("one date has a UTC offset and the other has none; give both or neither")
    return a, b


def _calendar_phrase(months: int, rest: dt.timedelta) -> str:
    years, months = divmod(months, 12)
    parts = [_plural(years, "year"), _plural(months, "month"), _plural(rest.days, "day")]
    hours, seconds = divmod(rest.seconds, 3600)
    parts += [_plural(hours, "hour"), _plural(seconds // 60, "minute")]
    if seconds % 60:
        parts.append(_plural(seconds % 60, "second"))
    text = ", ".join(part for part in parts if part)
    return text or "0 days"


def _time_suffix(delta: dt.timedelta) -> str:
    if not delta.seconds:
        return ""
    hours, seconds = divmod(delta.seconds, 3600)
    return f" and {hours:02d}:{seconds // 60:02d}:{seconds % 60:02d}"


def _plural(count: int, word: str) -> str:
    if not count:
        return ""
    return f"{count} {word}" + ("" if count == 1 else "s")


# ---- toolkit_date_add ------------------------------------------------------------------------


@tool("toolkit_date_add", concurrency_safe=True)
def toolkit_date_add(
    ctx: ToolContext,
    date: str,
    years: int = 0,
    months: int = 0,
    weeks: int = 0,
    days: int = 0,
    hours: int = 0,
    minutes: int = 0,
    business_days: int = 0,
    holidays: list[str] | None = None,
) -> str:
    """Add (or, with negative numbers, subtract) years, months, weeks, days, hours, minutes
    and business days to a date, e.g. 'what date is 90 days after 2024-12-25' or '10 working
    days from today'. Months and years keep the day of the month, clamped to the month's end
    (2024-01-31 + 1 month = 2024-02-29). Returns the resulting date and its weekday.

    Args:
        date: the starting point: YYYY-MM-DD, or an ISO date-time
            YYYY-MM-DDTHH:MM[:SS][+08:00], or 'today' / 'now'
        years: years to add (negative to subtract)
        months: calendar months to add
        weeks: weeks to add
        days: days to add
        hours: hours to add
        minutes: minutes to add
        business_days: working days (Mon-Fri) to add after everything else
        holidays: [business_days] extra dates (YYYY-MM-DD) to skip
    """
    start = parse_when(date)
    result: dt.date | dt.datetime = start
    if hours or minutes:
        result = _as_datetime(result)
    try:
        result = add_months(result, years * 12 + months)
        clamped = result.day != start.day
        result = result + dt.timedelta(weeks=weeks, days=days, hours=hours, minutes=minutes)
        if business_days:
            closed = {_parse_date(text, "holiday") for text in holidays or ()}
            moved = add_business_days(_day(result), business_days, closed)
            result = result + (moved - _day(result))
    except OverflowError as exc:
        raise ToolError("the result falls outside the years 1-9999") from exc
    text = _show(result)
    if clamped:
        text += " (the day of the month was clamped to the end of a shorter month)"
    return text


# ---- shared helpers --------------------------------------------------------------------------


def _as_datetime(value: dt.date | dt.datetime) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value
    return dt.datetime(value.year, value.month, value.day)


def _day(value: dt.date | dt.datetime) -> dt.date:
    return value.date() if isinstance(value, dt.datetime) else value


def _parse_date(text: str, what: str) -> dt.date:
    value = parse_when(text)
    if isinstance(value, dt.datetime):
        raise ToolError(f"{what} {text!r} must be a plain date (YYYY-MM-DD)")
    return value


def _show(value: dt.date | dt.datetime) -> str:
    weekday = WEEKDAYS[value.weekday()]
    if isinstance(value, dt.datetime):
        return f"{value.isoformat(sep=' ')} ({weekday})"
    return f"{value.isoformat()} ({weekday})"
