"""toolkit_date_diff / toolkit_date_add against answers worked out on a calendar."""

from __future__ import annotations

import asyncio
import datetime as dt
from pathlib import Path

import pytest

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.executor import ToolExecutor
from tea_agent_mini.toolkit.registry import Toolkit
from tea_agent_mini.tools.dates import dates
from tea_agent_mini.types import ToolCall


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=tmp_path, home=tmp_path / "home")


def diff(ctx, start, end, **kw) -> list[str]:
    return dates.toolkit_date_diff(ctx, start=start, end=end, **kw).splitlines()


@pytest.mark.parametrize(
    ("start", "end", "phrase", "days"),
    [
        ("2024-01-01", "2025-03-15", "1 year, 2 months, 14 days", 439),
        ("2024-01-01", "2024-12-31", "11 months, 30 days", 365),  # 2024 is a leap year
        ("2023-01-01", "2023-12-31", "11 months, 30 days", 364),
        ("2000-02-29", "2024-02-29", "24 years", 8766),
        ("2023-01-31", "2023-02-28", "1 month", 28),  # month end clamps
        ("2024-02-10", "2024-03-09", "28 days", 28),
        ("2024-03-10", "2024-03-10", "0 days", 0),
    ],
)
def test_calendar_difference(ctx, start, end, phrase, days):
    lines = diff(ctx, start, end)
    assert lines[1] == phrase
    assert f"days: {days}" in lines


def test_negative_when_end_is_before_start(ctx):
    lines = diff(ctx, "2025-03-15", "2024-01-01")
    assert lines[1] == "minus (1 year, 2 months, 14 days)"
    assert "days: -439" in lines
    assert "whole months: -14" in lines
    assert lines[-1] == "(end is before start, so the results are negative)"


def test_single_units(ctx):
    assert diff(ctx, "2024-01-01", "2025-03-15", unit="days") == [
        "2024-01-01 (Monday) -> 2025-03-15 (Saturday)",
        "days: 439",
    ]
    assert (
        diff(ctx, "2024-01-01", "2025-03-15", unit="weeks")[1] == "weeks: 62.71 (62 weeks, 5 days)"
    )
    assert "whole years: 1" in diff(ctx, "2024-01-01", "2025-03-15", unit="years")
    assert "whole months: 14" in diff(ctx, "2024-01-01", "2025-03-15", unit="months")


@pytest.mark.parametrize(
    ("start", "end", "holidays", "count"),
    [
        ("2024-01-01", "2024-01-08", None, 5),  # Monday to Monday
        ("2024-01-05", "2024-01-08", None, 1),  # Friday to Monday
        ("2024-01-06", "2024-01-08", None, 0),  # the weekend
        ("2024-01-01", "2025-01-01", None, 262),  # 2024 has 262 weekdays
        ("2024-01-01", "2024-01-08", ["2024-01-01", "2024-01-06"], 4),  # Saturday not counted
        ("2024-12-23", "2025-01-03", ["2024-12-25", "2025-01-01"], 7),
    ],
)
def test_business_days(ctx, start, end, holidays, count):
    lines = diff(ctx, start, end, unit="business_days", holidays=holidays)
    assert lines[1].endswith(f": {count}")


def test_times_of_day(ctx):
    lines = diff(ctx, "2024-03-10T08:00", "2024-03-11T20:30")
    assert lines[1] == "1 day, 12 hours, 30 minutes"
    assert "total hours: 36.5" in lines
    # offsets are honoured: 08:00 UTC to 20:30 at UTC+8 is 28.5 hours
    lines = diff(ctx, "2024-03-10T08:00Z", "2024-03-11T20:30+08:00", unit="days")
    assert "total hours: 28.5" in lines


def test_mixing_offset_and_local_time_is_refused(ctx):
    with pytest.raises(ToolError, match="UTC offset"):
        diff(ctx, "2024-03-10T08:00+02:00", "2024-03-11T08:00")


@pytest.mark.parametrize("bad", ["next friday", "2024-02-30", "10/03/2024"])
def test_unreadable_dates(ctx, bad):
    with pytest.raises(ToolError, match="cannot read"):
        diff(ctx, bad, "2024-01-01")


def test_today_is_understood(ctx):
    today = dt.date.today()
    lines = diff(ctx, "today", (today + dt.timedelta(days=10)).isoformat(), unit="days")
    assert lines[1] == "days: 10"


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"date": "2024-01-31", "months": 1}, "2024-02-29 (Thursday) (the day of the month"),
        ({"date": "2023-01-31", "months": 1}, "2023-02-28 (Tuesday) (the day of the month"),
        ({"date": "2024-02-29", "years": 1}, "2025-02-28 (Friday) (the day of the month"),
        ({"date": "2024-12-25", "days": 100}, "2025-04-04 (Friday)"),
        ({"date": "2024-03-31", "months": -1}, "2024-02-29 (Thursday)"),
        ({"date": "2024-01-01", "weeks": 2, "days": -1}, "2024-01-14 (Sunday)"),
        ({"date": "2024-01-05", "business_days": 1}, "2024-01-08 (Monday)"),
        ({"date": "2024-01-08", "business_days": -1}, "2024-01-05 (Friday)"),
        (
            {"date": "2024-12-24", "business_days": 2, "holidays": ["2024-12-25"]},
            "2024-12-27 (Friday)",
        ),
        ({"date": "2024-03-10T08:00", "hours": 40}, "2024-03-12 00:00:00 (Tuesday)"),
        ({"date": "2024-03-10", "minutes": 90}, "2024-03-10 01:30:00 (Sunday)"),
    ],
)
def test_date_add(ctx, kwargs, expected):
    assert dates.toolkit_date_add(ctx, **kwargs).startswith(expected)


def test_date_add_out_of_range(ctx):
    with pytest.raises(ToolError, match="outside the years"):
        dates.toolkit_date_add(ctx, date="9999-12-01", months=2)
    with pytest.raises(ToolError, match="outside the years"):
        dates.toolkit_date_add(ctx, date="9999-12-01", days=400)


def test_tools_through_the_executor(ctx):
    toolkit = Toolkit.load(["dates.dates"])
    assert sorted(toolkit.names()) == ["toolkit_date_add", "toolkit_date_diff"]
    executor = ToolExecutor(toolkit, ctx)
    calls = [
        ToolCall("1", "toolkit_date_diff", '{"start": "2024-01-01", "end": "2024-03-01"}'),
        ToolCall("2", "toolkit_date_add", '{"date": "2024-01-01", "days": "59"}'),
        ToolCall("3", "toolkit_date_diff", '{"start": "2024-01-01", "end": "x", "unit": "y"}'),
    ]
    first, second, third = asyncio.run(executor.run_many(calls))
    assert first.ok and "days: 60" in first.output
    assert second.ok and second.output.startswith("2024-02-29")
    assert not third.ok and "unit" in third.error
