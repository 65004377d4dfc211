"""toolkit_lunar: Gregorian <-> Chinese lunar calendar, 1900-2100, from a compact table."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any, Literal

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import tool
from tea_agent_mini.tools.dates import lunar_data as data

FIRST_DAY = dt.date(1900, 1, 31)  # lunar 1900-01-01
STEMS = "甲乙丙丁戊己庚辛壬癸"
BRANCHES = "子丑寅卯辰巳午未申酉戌亥"
ZODIAC = "鼠牛虎兔龙蛇马羊猴鸡狗猪"
ZODIAC_EN = (
    "Rat",
    "Ox",
    "Tiger",
    "Rabbit",
    "Dragon",
    "Snake",
    "Horse",
    "Goat",
    "Monkey",
    "Rooster",
    "Dog",
    "Pig",
)
MONTH_NAMES = ("正", "二", "三", "四", "五", "六", "七", "八", "九", "十", "冬", "腊")
DIGITS = "一二三四五六七八九十"
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
WEEKDAYS_ZH = "一二三四五六日"
# Calibration of the sexagenary cycles: index in the 60-cycle (0 = 甲子) at a known point.
_DAY_CYCLE_OFFSET = (54 - dt.date(2000, 1, 1).toordinal()) % 60  # 2000-01-01 was 戊午
_MONTH_CYCLE_OFFSET = (13 - 1900 * 12) % 60  # the month from 小寒 1900 was 丁丑
_DATE_RE = re.compile(r"^\s*(\d{4})-(\d{1,2})-(\d{1,2})\s*$")


@dataclass(frozen=True)
class LunarDate:
    """A day of the Chinese lunar calendar; ``leap`` marks a day of the leap (闰) month."""

    year: int
    month: int
    day: int
    leap: bool = False

    def chinese(self) -> str:
        return f"{month_name(self.month, self.leap)}{day_name(self.day)}"


# ---- the calendar ---------------------------------------------------------------------------


def leap_month_of(year: int) -> int:
    """The leap month of lunar ``year`` (0 when it has none)."""
    return _info(year) & 0xF


def year_months(year: int) -> list[tuple[int, bool, int]]:
    """(month, is_leap, number of days) for each month of lunar ``year``, in order."""
    info = _info(year)
    months = []
    for month in range(1, 13):
        months.append((month, False, 30 if info & (0x10000 >> month) else 29))
        if month == info & 0xF:
            months.append((month, True, 30 if info & 0x10000 else 29))
    return months


def year_length(year: int) -> int:
    info = _info(year)
    days = 12 * 29 + bin(info & 0xFFF0).count("1")
    if info & 0xF:
        days += 30 if info & 0x10000 else 29
    return days


def last_day() -> dt.date:
    """The last Gregorian day the table covers (the eve of lunar new year 2101)."""
    total = sum(year_length(year) for year in range(data.FIRST_YEAR, data.LAST_YEAR + 1))
    return FIRST_DAY + dt.timedelta(days=total - 1)


def solar_to_lunar(day: dt.date) -> LunarDate:
    """Raises ToolError outside 1900-01-31 .. 2101-01-28."""
    offset = (day - FIRST_DAY).days
    if offset < 0:
        raise ToolError(_range_message(day))
    for year in range(data.FIRST_YEAR, data.LAST_YEAR + 1):
        length = year_length(year)
        if offset >= length:
            offset -= length
            continue
        for month, leap, days in year_months(year):
            if offset < days:
                return LunarDate(year, month, offset + 1, leap)
            offset -= days
    raise ToolError(_range_message(day))


def lunar_to_solar(lunar: LunarDate) -> dt.date:
    """Raises ToolError for a year outside 1900-2100 or a month or day that does not exist."""
    year = lunar.year
    if not data.FIRST_YEAR <= year <= data.LAST_YEAR:
        raise ToolError(
            f"lunar year {year} is outside the supported range {data.FIRST_YEAR}-{data.LAST_YEAR}"
        )
    if not 1 <= lunar.month <= 12:
        raise ToolError(f"lunar month must be 1-12, got {lunar.month}")
    if lunar.leap and leap_month_of(year) != lunar.month:
        leap = leap_month_of(year)
        has = f"its leap month is {leap} ({month_name(leap, True)})" if leap else "none"
        raise ToolError(f"lunar year {year} has no leap month {lunar.month}; {has}")
    offset = sum(year_length(y) for y in range(data.FIRST_YEAR, year))
    for month, leap, days in year_months(year):
        if (month, leap) == (lunar.month, lunar.leap):
            if not 1 <= lunar.day <= days:
                raise ToolError(
                    f"lunar {year} {month_name(month, leap)} has {days} days; "
                    f"day {lunar.day} does not exist"
                )
            return FIRST_DAY + dt.timedelta(days=offset + lunar.day - 1)
        offset += days
    raise AssertionError("unreachable: every month 1-12 is in year_months")


def _info(year: int) -> int:
    if not data.FIRST_YEAR <= year <= data.LAST_YEAR:
        raise ToolError(f"lunar year {year} is outside {data.FIRST_YEAR}-{data.LAST_YEAR}")
    return data.LUNAR_INFO[year - data.FIRST_YEAR]


def _range_message(day: dt.date) -> str:
    return (
        f"{day.isoformat()} is outside the supported range "
        f"{FIRST_DAY.isoformat()} to {last_day().isoformat()} (lunar years 1900-2100)"
    )


# ---- solar terms and the sexagenary cycle ---------------------------------------------------


def solar_terms(year: int) -> list[tuple[str, dt.date]]:
    """The 24 solar terms (节气) of Gregorian ``year`` (Beijing time); [] outside 1900-2100."""
    if not data.FIRST_YEAR <= year <= data.LAST_YEAR:
        return []
    code = data.SOLAR_TERMS[year - data.FIRST_YEAR]
    terms = []
    for index, name in enumerate(data.SOLAR_TERM_NAMES):
        day = data.SOLAR_TERM_BASE_DAYS[index] + (code >> (2 * index) & 3)
        terms.append((name, dt.date(year, index // 2 + 1, day)))
    return terms


def solar_term_on(day: dt.date) -> str | None:
    for name, when in solar_terms(day.year):
        if when == day:
            return name
    return None


def next_solar_term(day: dt.date) -> tuple[str, dt.date] | None:
    """The first solar term strictly after ``day``, when the table has it."""
    for year in (day.year, day.year + 1):
        for name, when in solar_terms(year):
            if when > day:
                return name, when
    return None


def ganzhi(index: int) -> str:
    return STEMS[index % 10] + BRANCHES[index % 12]


def year_ganzhi(lunar_year: int) -> str:
    return ganzhi(lunar_year - 4)  # 4 CE was a 甲子 year


def day_ganzhi(day: dt.date) -> str:
    return ganzhi(day.toordinal() + _DAY_CYCLE_OFFSET)


def month_ganzhi(day: dt.date) -> str | None:
    """The month's stem-branch (月柱). It changes at the 12 节 terms (立春, 惊蛰 ...), not at 初一;
    here from the day of the term on (almanacs that switch at the term's exact time differ on
    that one day)."""
    # Count months from the last 节 on or before ``day``: 小寒 (index 0) opens the 丑 month.
    for year in (day.year, day.year - 1):
        jie = [when for name, when in solar_terms(year)[::2] if when <= day]
        if jie:
            return ganzhi(year * 12 + len(jie) - 1 + _MONTH_CYCLE_OFFSET)
        if not solar_terms(year):
            return None
    return None


def month_name(month: int, leap: bool = False) -> str:
    return f"{'闰' if leap else ''}{MONTH_NAMES[month - 1]}月"


def day_name(day: int) -> str:
    if day == 10:
        return "初十"
    if day == 20:
        return "二十"
    if day == 30:
        return "三十"
    tens, ones = divmod(day, 10)
    return ("初", "十", "廿")[tens] + DIGITS[ones - 1]


# ---- the tool -------------------------------------------------------------------------------


@tool("toolkit_lunar", concurrency_safe=True)
def toolkit_lunar(
    ctx: ToolContext,
    action: Literal["to_lunar", "to_solar"],
    date: str,
    leap_month: bool = False,
) -> dict[str, Any]:
    """Convert dates between the Gregorian calendar and the Chinese lunar calendar (农历),
    1900-01-31 to 2101-01-28 (lunar years 1900-2100). Use it instead of guessing: lunar dates
    cannot be worked out reliably by hand. Returns both dates, the weekday, the lunar date in
    Chinese (e.g. 闰二月初一, 八月十五), whether the month is a leap month, the lunar year's
    stem-branch (干支) name and zodiac animal (both change at Spring Festival), the month
    and day stem-branch, the solar term (节气) on that day if any and the next one.
    Festivals: Spring Festival = lunar 01-01, Lantern 01-15, Dragon Boat 05-05,
    Qixi 07-07, Mid-Autumn 08-15, Double Ninth 09-09.

    Args:
        action: to_lunar: Gregorian date -> lunar date; to_solar: lunar date -> Gregorian date
        date: YYYY-MM-DD. For to_lunar a Gregorian date (or 'today'); for to_solar a lunar
            year-month-day, e.g. 2025-08-15 for the Mid-Autumn festival
        leap_month: [to_solar] the month is the leap (闰) month of that year (default false)
    """
    if action == "to_lunar":
        day = _parse_gregorian(date)
        return describe(day, solar_to_lunar(day))
    if action == "to_solar":
        year, month, day_number = _parse_ymd(date)
        lunar = LunarDate(year, month, day_number, bool(leap_month))
        return describe(lunar_to_solar(lunar), lunar)
    raise ToolError(f"unknown action {action!r}; use to_lunar or to_solar")


def describe(day: dt.date, lunar: LunarDate) -> dict[str, Any]:
    """Everything the tool reports about one day, as a JSON-ready dict."""
    branch = (lunar.year - 4) % 12
    months = year_months(lunar.year)
    month_days = next(n for m, leap, n in months if (m, leap) == (lunar.month, lunar.leap))
    upcoming = next_solar_term(day)
    return {
        "gregorian": day.isoformat(),
        "weekday": f"{WEEKDAYS[day.weekday()]} (星期{WEEKDAYS_ZH[day.weekday()]})",
        "lunar": {
            "year": lunar.year,
            "month": lunar.month,
            "day": lunar.day,
            "leap_month": lunar.leap,
        },
        "lunar_text": f"农历{year_ganzhi(lunar.year)}年（{ZODIAC[branch]}年）{lunar.chinese()}",
        "year_ganzhi": year_ganzhi(lunar.year),
        "zodiac": f"{ZODIAC[branch]} ({ZODIAC_EN[branch]})",
        "month_ganzhi": month_ganzhi(day),
        "day_ganzhi": day_ganzhi(day),
        "days_in_lunar_month": month_days,
        "leap_month_this_year": month_name(leap_month_of(lunar.year), True)
        if leap_month_of(lunar.year)
        else None,
        "solar_term": solar_term_on(day),
        "next_solar_term": {"name": upcoming[0], "date": upcoming[1].isoformat()}
        if upcoming
        else None,
    }


def _parse_gregorian(text: str) -> dt.date:
    if text.strip().lower() == "today":
        return dt.date.today()
    year, month, day = _parse_ymd(text)
    try:
        return dt.date(year, month, day)
    except ValueError as exc:
        raise ToolError(f"invalid Gregorian date {text!r}: {exc}") from exc


def _parse_ymd(text: str) -> tuple[int, int, int]:
    match = _DATE_RE.match(text)
    if not match:
        raise ToolError(f"date must look like YYYY-MM-DD, got {text!r}")
    year, month, day = (int(part) for part in match.groups())
    return year, month, day
