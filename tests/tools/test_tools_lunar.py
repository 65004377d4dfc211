"""toolkit_lunar: conversions checked against published Chinese calendar dates."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from pathlib import Path

import pytest

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.executor import ToolExecutor
from tea_agent_mini.toolkit.registry import Toolkit
from tea_agent_mini.tools.dates import lunar
from tea_agent_mini.types import ToolCall


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=tmp_path, home=tmp_path / "home")


def convert(ctx: ToolContext, action: str, date: str, leap_month: bool = False) -> dict:
    return lunar.toolkit_lunar(ctx, action=action, date=date, leap_month=leap_month)


# Spring Festival (lunar 01-01) dates as published in Chinese almanacs.
NEW_YEARS = [
    ("1900-01-31", 1900, "庚子", "鼠"),
    ("1949-01-29", 1949, "己丑", "牛"),
    ("2000-02-05", 2000, "庚辰", "龙"),
    ("2023-01-22", 2023, "癸卯", "兔"),
    ("2024-02-10", 2024, "甲辰", "龙"),
    ("2025-01-29", 2025, "乙巳", "蛇"),
    ("2026-02-17", 2026, "丙午", "马"),
]


@pytest.mark.parametrize(("gregorian", "year", "ganzhi", "animal"), NEW_YEARS)
def test_spring_festival_both_ways(ctx, gregorian, year, ganzhi, animal):
    result = convert(ctx, "to_lunar", gregorian)
    assert result["lunar"] == {"year": year, "month": 1, "day": 1, "leap_month": False}
    assert result["year_ganzhi"] == ganzhi
    assert result["zodiac"].startswith(animal)
    assert result["lunar_text"].endswith("正月初一")
    assert convert(ctx, "to_solar", f"{year}-01-01")["gregorian"] == gregorian


def test_the_day_before_new_year_belongs_to_the_old_year(ctx):
    result = convert(ctx, "to_lunar", "2024-02-09")
    assert result["lunar"] == {"year": 2023, "month": 12, "day": 30, "leap_month": False}
    assert result["lunar_text"] == "农历癸卯年（兔年）腊月三十"


@pytest.mark.parametrize(
    ("gregorian", "lunar_date", "chinese"),
    [
        ("2025-10-06", "2025-08-15", "八月十五"),  # Mid-Autumn 2025
        ("2024-09-17", "2024-08-15", "八月十五"),  # Mid-Autumn 2024
        ("2024-06-10", "2024-05-05", "五月初五"),  # Dragon Boat 2024
        ("2024-02-24", "2024-01-15", "正月十五"),  # Lantern Festival 2024
        ("2000-01-01", "1999-11-25", "冬月廿五"),
    ],
)
def test_known_festival_dates(ctx, gregorian, lunar_date, chinese):
    result = convert(ctx, "to_lunar", gregorian)
    year, month, day = (int(part) for part in lunar_date.split("-"))
    assert result["lunar"] == {"year": year, "month": month, "day": day, "leap_month": False}
    assert result["lunar_text"].endswith(chinese)
    assert convert(ctx, "to_solar", lunar_date)["gregorian"] == gregorian


def test_leap_month_2023(ctx):
    result = convert(ctx, "to_lunar", "2023-03-22")
    assert result["lunar"] == {"year": 2023, "month": 2, "day": 1, "leap_month": True}
    assert result["lunar_text"].endswith("闰二月初一")
    assert result["leap_month_this_year"] == "闰二月"
    # the ordinary second month comes first, a month earlier
    assert convert(ctx, "to_solar", "2023-02-01")["gregorian"] == "2023-02-20"
    assert convert(ctx, "to_solar", "2023-02-01", leap_month=True)["gregorian"] == "2023-03-22"


def test_leap_eleventh_month_2033(ctx):
    assert convert(ctx, "to_lunar", "2033-12-22")["lunar_text"].endswith("闰冬月初一")


def test_leap_month_that_does_not_exist(ctx):
    with pytest.raises(ToolError, match="has no leap month 5; its leap month is 2"):
        convert(ctx, "to_solar", "2023-05-01", leap_month=True)
    with pytest.raises(ToolError, match="2024 has no leap month 3; none"):
        convert(ctx, "to_solar", "2024-03-01", leap_month=True)


def test_day_30_of_a_short_month(ctx):
    assert convert(ctx, "to_lunar", "2024-02-09")["days_in_lunar_month"] == 30
    with pytest.raises(ToolError, match="has 29 days"):
        convert(ctx, "to_solar", "2024-01-30")  # 2024 正月 is short


def test_range_boundaries(ctx):
    first = convert(ctx, "to_lunar", "1900-01-31")
    assert first["lunar"]["year"] == 1900
    end_of_2100 = convert(ctx, "to_lunar", "2100-12-31")
    assert end_of_2100["lunar"] == {"year": 2100, "month": 12, "day": 1, "leap_month": False}
    assert end_of_2100["lunar_text"] == "农历庚申年（猴年）腊月初一"
    last = convert(ctx, "to_lunar", "2101-01-28")
    assert last["lunar"] == {"year": 2100, "month": 12, "day": 29, "leap_month": False}
    assert last["solar_term"] is None  # no term table for 2101: reported as unknown
    assert convert(ctx, "to_solar", "2100-12-29")["gregorian"] == "2101-01-28"


@pytest.mark.parametrize("date", ["1900-01-30", "2101-01-29", "1850-06-01"])
def test_out_of_range_gregorian(ctx, date):
    with pytest.raises(ToolError, match="outside the supported range 1900-01-31 to 2101-01-28"):
        convert(ctx, "to_lunar", date)


@pytest.mark.parametrize("date", ["1899-12-01", "2101-01-01"])
def test_out_of_range_lunar(ctx, date):
    with pytest.raises(ToolError, match="outside the supported range 1900-2100"):
        convert(ctx, "to_solar", date)


@pytest.mark.parametrize("date", ["2024/02/10", "tomorrow", "2024-13-01", "2023-02-29"])
def test_bad_gregorian_dates(ctx, date):
    with pytest.raises(ToolError, match="YYYY-MM-DD|invalid Gregorian date"):
        convert(ctx, "to_lunar", date)


def test_today(ctx):
    assert convert(ctx, "to_lunar", "today")["gregorian"] == dt.date.today().isoformat()


def test_round_trips_across_the_whole_range():
    day = lunar.FIRST_DAY
    while day <= lunar.last_day():
        assert lunar.lunar_to_solar(lunar.solar_to_lunar(day)) == day
        day += dt.timedelta(days=23)


def test_month_lengths_add_up():
    assert lunar.last_day() == dt.date(2101, 1, 28)
    for year in (1900, 2023, 2033, 2099):
        months = lunar.year_months(year)
        assert all(days in (29, 30) for _, _, days in months)
        assert len(months) == (13 if lunar.leap_month_of(year) else 12)
        assert lunar.year_length(year) == sum(days for _, _, days in months)
        start = lunar.lunar_to_solar(lunar.LunarDate(year, 1, 1))
        following = lunar.solar_to_lunar(start + dt.timedelta(days=lunar.year_length(year)))
        assert (following.year, following.month, following.day) == (year + 1, 1, 1)


@pytest.mark.parametrize(
    ("gregorian", "term"),
    [
        ("2024-02-04", "立春"),
        ("2025-02-03", "立春"),
        ("2024-04-04", "清明"),
        ("2024-12-21", "冬至"),
        ("2023-12-22", "冬至"),
        ("2024-06-21", "夏至"),
    ],
)
def test_solar_terms(ctx, gregorian, term):
    assert convert(ctx, "to_lunar", gregorian)["solar_term"] == term


def test_next_solar_term_and_ganzhi(ctx):
    result = convert(ctx, "to_lunar", "2024-02-10")
    assert result["solar_term"] is None
    assert result["next_solar_term"] == {"name": "雨水", "date": "2024-02-19"}
    assert result["day_ganzhi"] == "甲辰"
    assert result["month_ganzhi"] == "丙寅"  # after 立春 2024-02-04
    assert result["weekday"].startswith("Saturday")
    # before 立春 the month pillar is still the 丑 month of the previous cycle
    assert convert(ctx, "to_lunar", "2024-02-03")["month_ganzhi"] == "乙丑"
    assert convert(ctx, "to_lunar", "2000-01-01")["day_ganzhi"] == "戊午"


def test_solar_terms_of_a_year_are_in_order():
    terms = lunar.solar_terms(2024)
    assert [name for name, _ in terms][:3] == ["小寒", "大寒", "立春"]
    dates = [when for _, when in terms]
    assert dates == sorted(dates) and len(dates) == 24
    assert lunar.solar_terms(2101) == []


def test_through_the_executor(ctx):
    toolkit = Toolkit.load(["dates.lunar"])
    assert toolkit.load_errors == {}
    spec = toolkit.get("toolkit_lunar")
    assert spec is not None and spec.concurrency_safe and not spec.mutates
    executor = ToolExecutor(toolkit, ctx)
    call = ToolCall("1", "toolkit_lunar", '{"action": "to_solar", "date": "2024-08-15"}')
    result = asyncio.run(executor.run(call))
    assert result.ok, result.error
    assert json.loads(result.output)["gregorian"] == "2024-09-17"
    bad = ToolCall("2", "toolkit_lunar", '{"action": "to_moon", "date": "2024-08-15"}')
    assert not asyncio.run(executor.run(bad)).ok
