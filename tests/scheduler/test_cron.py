"""CronExpr: parsing, next fire times in wall-clock time, errors, bounded work.

Expected datetimes are written by hand from the calendar (2026-01-01 is a Thursday,
2026-02-13 a Friday, 2028-02-29 a Tuesday, 2032-02-29 a Sunday).
"""

from __future__ import annotations

import calendar
from datetime import datetime, timedelta

import pytest

from tea_agent_mini.errors import TeaAgentError
from tea_agent_mini.scheduler import CronExpr, ScheduleError
from tea_agent_mini.scheduler import cron as cron_module


def dt(text: str) -> datetime:
    return datetime.fromisoformat(text)


@pytest.mark.parametrize(
    "expr, after, expected",
    [
        # month ends: day 31 skips 30-day months and February
        ("0 0 31 * *", "2026-01-31T00:00", "2026-03-31T00:00"),
        ("0 0 31 * *", "2026-03-31T00:00", "2026-05-31T00:00"),
        ("0 0 31 * *", "2026-07-31T00:00", "2026-08-31T00:00"),
        ("0 0 31 * *", "2026-08-31T00:00", "2026-10-31T00:00"),
        # Feb 29 waits for the next leap year
        ("0 0 29 2 *", "2026-01-01T00:00", "2028-02-29T00:00"),
        ("0 0 29 2 *", "2028-02-29T00:00", "2032-02-29T00:00"),
        # weekdays over a weekend
        ("0 9 * * mon-fri", "2026-01-09T09:00", "2026-01-12T09:00"),
        ("0 9 * * mon-fri", "2026-01-10T12:00", "2026-01-12T09:00"),
        ("0 9 * * mon-fri", "2026-01-09T08:59:59", "2026-01-09T09:00"),
        ("0 9 * * 1-5", "2026-01-12T09:00", "2026-01-13T09:00"),
        # steps
        ("*/15 * * * *", "2026-01-01T10:07", "2026-01-01T10:15"),
        ("*/15 * * * *", "2026-01-01T10:15", "2026-01-01T10:30"),
        ("*/15 * * * *", "2026-01-01T10:45", "2026-01-01T11:00"),
        ("*/15 * * * *", "2026-12-31T23:50", "2027-01-01T00:00"),
        ("0 8-18/5 * * *", "2026-01-01T13:00", "2026-01-01T18:00"),
        ("0 8-18/5 * * *", "2026-01-01T18:00", "2026-01-02T08:00"),
        ("10/20 * * * *", "2026-01-01T10:31", "2026-01-01T10:50"),
        ("10/20 * * * *", "2026-01-01T10:50", "2026-01-01T11:10"),
        # lists
        ("5,35 8,20 * * *", "2026-01-01T08:05", "2026-01-01T08:35"),
        ("5,35 8,20 * * *", "2026-01-01T08:35", "2026-01-01T20:05"),
        ("5,35 8,20 * * *", "2026-01-01T20:35", "2026-01-02T08:05"),
        # names, any case
        ("0 12 1 jan,JUL *", "2026-01-01T12:00", "2026-07-01T12:00"),
        ("30 6 * * SAT", "2026-01-01T00:00", "2026-01-03T06:30"),
        ("0 0 * * Tue-Wed", "2026-01-03T00:00", "2026-01-06T00:00"),
        ("0 0 1 Nov-Dec *", "2026-01-01T00:00", "2026-11-01T00:00"),
        # Sunday is 0, 7 and sun
        ("0 10 * * 0", "2026-01-01T00:00", "2026-01-04T10:00"),
        ("0 10 * * 7", "2026-01-01T00:00", "2026-01-04T10:00"),
        ("0 10 * * sun", "2026-01-01T00:00", "2026-01-04T10:00"),
        ("0 10 * * 5-7", "2026-01-03T10:00", "2026-01-04T10:00"),
        ("0 10 * * 5-7", "2026-01-04T10:00", "2026-01-09T10:00"),
        # carries and year rollover
        ("30 9 * * *", "2026-01-01T09:31", "2026-01-02T09:30"),
        ("0 0 1 * *", "2026-12-01T00:00", "2027-01-01T00:00"),
        ("0 0 1 1 *", "2026-06-15T00:00", "2027-01-01T00:00"),
        ("59 23 31 12 *", "2026-12-31T23:59", "2027-12-31T23:59"),
        ("* * * * *", "2026-12-31T23:59:30", "2027-01-01T00:00"),
        ("* * * * *", "2026-01-01T10:00", "2026-01-01T10:01"),
        # dom restricted + dow restricted: either matches (Vixie rule)
        ("0 0 30 2 mon", "2026-01-01T00:00", "2026-02-02T00:00"),
        # dom "*/10" starts with "*", so both must match: days 1,11,21,31 that are Mondays
        ("0 0 */10 * mon", "2026-01-01T00:00", "2026-05-11T00:00"),
        # dow "*/7" starts with "*": Feb 29 that is a Sunday
        ("0 0 29 2 */7", "2026-01-01T00:00", "2032-02-29T00:00"),
        # macros
        ("@hourly", "2026-01-01T10:00", "2026-01-01T11:00"),
        ("@daily", "2026-01-01T10:00", "2026-01-02T00:00"),
        ("@midnight", "2026-01-01T10:00", "2026-01-02T00:00"),
        ("@weekly", "2026-01-01T10:00", "2026-01-04T00:00"),
        ("@monthly", "2026-01-01T10:00", "2026-02-01T00:00"),
        ("@yearly", "2026-01-01T00:00", "2027-01-01T00:00"),
        ("@ANNUALLY", "2026-03-01T00:00", "2027-01-01T00:00"),
    ],
)
def test_next_after_known_answers(expr: str, after: str, expected: str) -> None:
    assert CronExpr.parse(expr).next_after(dt(after)) == dt(expected)


def test_dom_or_dow_fires_on_every_13th_and_every_friday() -> None:
    cron = CronExpr.parse("0 0 13 * fri")
    got = []
    moment = dt("2026-01-01T00:00")
    for _ in range(9):
        moment = cron.next_after(moment)
        got.append(moment.date().isoformat())
    assert got == [
        "2026-01-02",  # Friday
        "2026-01-09",  # Friday
        "2026-01-13",  # Tuesday the 13th
        "2026-01-16",
        "2026-01-23",
        "2026-01-30",
        "2026-02-06",
        "2026-02-13",  # Friday the 13th fires once
        "2026-02-20",
    ]


def test_parse_expands_fields() -> None:
    cron = CronExpr.parse("1-10/3,20 */6 1,15 jan-mar,dec mon-fri")
    assert cron.minutes == (1, 4, 7, 10, 20)
    assert cron.hours == (0, 6, 12, 18)
    assert cron.days == (1, 15)
    assert cron.months == (1, 2, 3, 12)
    assert cron.weekdays == (1, 2, 3, 4, 5)
    assert cron.either_day is True


@pytest.mark.parametrize(
    "expr, either",
    [("0 0 13 * fri", True), ("0 0 */2 * fri", False), ("0 0 13 * *", False), ("@daily", False)],
)
def test_either_day_only_when_both_fields_restricted(expr: str, either: bool) -> None:
    assert CronExpr.parse(expr).either_day is either


def test_sunday_seven_is_folded_into_zero() -> None:
    assert CronExpr.parse("0 0 * * 5-7").weekdays == (0, 5, 6)
    assert CronExpr.parse("0 0 * * 0,7").weekdays == (0,)


def test_whitespace_is_normalised() -> None:
    assert CronExpr.parse("  0   9 *  * *  ").text == "0 9 * * *"


@pytest.mark.parametrize(
    "expr, fragments",
    [
        ("61 * * * *", ["minute", "61", "0-59"]),
        ("* 24 * * *", ["hour", "24", "0-23"]),
        ("* * 0 * *", ["day-of-month", "0", "1-31"]),
        ("* * 32 * *", ["day-of-month", "32", "1-31"]),
        ("* * * 13 *", ["month", "13", "1-12"]),
        ("* * * * 8", ["day-of-week", "8", "0-7"]),
        ("* * * foo *", ["month", "'foo'", "jan..dec"]),
        ("* * * * funday", ["day-of-week", "'funday'", "sun..sat"]),
        ("*/0 * * * *", ["minute", "step", "positive"]),
        ("*/x * * * *", ["minute", "step"]),
        ("5-1 * * * *", ["minute", "'5-1'", "backwards"]),
        ("1,,2 * * * *", ["minute", "empty"]),
        ("-5 * * * *", ["minute", "not a number"]),
        ("* * * *", ["5 fields", "got 4"]),
        ("* * * * * *", ["5 fields", "got 6"]),
        ("", ["5 fields", "got 0"]),
        ("@reboot", ["macro", "@reboot"]),
        ("0 0 30 2 *", ["never fire", "30", "feb"]),
        ("0 0 31 4,6,9,11 *", ["never fire", "31", "apr,jun,sep,nov"]),
        ("0 0 30,31 feb *", ["never fire"]),
    ],
)
def test_invalid_expressions_say_what_is_wrong(expr: str, fragments: list[str]) -> None:
    with pytest.raises(ScheduleError) as info:
        CronExpr.parse(expr)
    for fragment in fragments:
        assert fragment in str(info.value)


def test_schedule_error_is_in_both_trees() -> None:
    with pytest.raises(ValueError):
        CronExpr.parse("61 * * * *")
    with pytest.raises(TeaAgentError):
        CronExpr.parse("61 * * * *")


def test_naive_wall_clock_required() -> None:
    from datetime import timezone

    with pytest.raises(ValueError, match="naive"):
        CronExpr.parse("@daily").next_after(datetime(2026, 1, 1, tzinfo=timezone.utc))


def test_end_of_calendar_returns_none() -> None:
    assert CronExpr.parse("* * * * *").next_after(datetime(9999, 12, 31, 23, 59)) is None
    assert CronExpr.parse("0 0 1 1 *").next_after(datetime(9999, 6, 1)) is None


def test_impossible_expression_built_directly_gives_none_after_bounded_search() -> None:
    # parse() rejects this; built by hand it must still end (400-year bound), not loop.
    cron = CronExpr("0 0 30 2 *", (0,), (0,), (30,), (2,), tuple(range(7)), either_day=False)
    assert cron.next_after(datetime(2026, 1, 1)) is None


def _counting_monthrange(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    calls: list[tuple[int, int]] = []

    class CountingCalendar:
        @staticmethod
        def monthrange(year: int, month: int) -> tuple[int, int]:
            calls.append((year, month))
            return calendar.monthrange(year, month)

    monkeypatch.setattr(cron_module, "calendar", CountingCalendar)
    return calls


@pytest.mark.parametrize(
    "expr, after, months_visited",
    [
        # only the Februaries 2026..2032 are looked at, not every minute of six years
        ("0 0 29 2 */7", "2026-01-01T00:00", 7),
        ("59 23 31 12 *", "2027-01-01T00:00", 1),
        ("* * * * *", "2026-05-05T05:05", 1),
        ("0 0 31 * *", "2026-01-31T00:00", 3),  # Jan (rest of), Feb, Mar
    ],
)
def test_work_is_bounded_by_months_not_minutes(
    monkeypatch: pytest.MonkeyPatch, expr: str, after: str, months_visited: int
) -> None:
    cron = CronExpr.parse(expr)
    calls = _counting_monthrange(monkeypatch)
    assert cron.next_after(dt(after)) is not None
    assert len(calls) == months_visited


# An independent minute-by-minute reference, used only to cross-check the field walk.
def _brute_next(cron: CronExpr, after: datetime, limit_days: int = 40) -> datetime | None:
    moment = after.replace(second=0, microsecond=0) + timedelta(minutes=1)
    end = moment + timedelta(days=limit_days)
    while moment < end:
        dow = (moment.weekday() + 1) % 7
        dom_ok, dow_ok = moment.day in cron.days, dow in cron.weekdays
        day_ok = (dom_ok or dow_ok) if cron.either_day else (dom_ok and dow_ok)
        if day_ok and moment.hour in cron.hours and moment.minute in cron.minutes:
            return moment
        moment += timedelta(minutes=1)
    return None


@pytest.mark.parametrize(
    "expr",
    [
        "*/7 */5 * * *",
        "0,30 9-17 * * mon-fri",
        "15 3 1,15,31 * *",
        "0 0 13 * fri",
        "45 23 * * sat,sun",
        "0 12 */3 * *",
        "5 4 * * 0",
        "59 23 28-31 * *",
    ],
)
@pytest.mark.parametrize(
    "after", ["2026-01-30T23:58", "2026-02-27T12:00", "2026-12-31T23:59", "2028-02-28T23:45"]
)
def test_field_walk_matches_minute_scan(expr: str, after: str) -> None:
    cron = CronExpr.parse(expr)
    assert cron.next_after(dt(after)) == _brute_next(cron, dt(after))
