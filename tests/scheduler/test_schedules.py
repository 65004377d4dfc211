"""Schedule / parse_schedule: every format, time zones and DST, anchoring, errors.

Expected instants are written by hand. DST facts used: Europe/Berlin springs forward on
2026-03-29 (02:00 CET -> 03:00 CEST) and falls back on 2026-10-25 (03:00 CEST -> 02:00 CET);
America/New_York springs forward on 2026-03-08 (02:00 -> 03:00 EDT) and falls back on
2026-11-01 (02:00 EDT -> 01:00 EST). 2026-01-01 is a Thursday.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from itertools import pairwise

import pytest

from tea_agent_mini.errors import TeaAgentError
from tea_agent_mini.scheduler import Schedule, ScheduleError, parse_schedule

BERLIN = "Europe/Berlin"
NEW_YORK = "America/New_York"


def at(text: str) -> datetime:
    """An aware datetime from ISO text with an explicit offset."""
    value = datetime.fromisoformat(text)
    assert value.tzinfo is not None, text
    return value


def iso(values: list[datetime]) -> list[str]:
    return [v.isoformat() for v in values]


@pytest.mark.parametrize(
    "text, tz, after, expected",
    [
        ("once:2026-12-24T18:00", BERLIN, "2026-12-01T00:00+00:00", "2026-12-24T18:00:00+01:00"),
        ("once:2026-12-24T18:00+05:00", BERLIN, "2026-12-01T00:00+00:00", "2026-12-24T14:00+01:00"),
        ("once:2026-12-24T18:00Z", None, "2026-12-01T00:00+00:00", "2026-12-24T18:00+00:00"),
        ("once:2026-12-24 18:00", "UTC", "2026-12-24T17:59:59+00:00", "2026-12-24T18:00+00:00"),
        ("once:2026-03-29T02:30", BERLIN, "2026-03-01T00:00+00:00", "2026-03-29T03:00+02:00"),
        ("hourly:15", BERLIN, "2026-01-01T10:15+01:00", "2026-01-01T11:15+01:00"),
        ("hourly:05", BERLIN, "2026-01-01T10:04:59+01:00", "2026-01-01T10:05+01:00"),
        ("hourly:0", "UTC", "2026-12-31T23:30+00:00", "2027-01-01T00:00+00:00"),
        ("daily:09:00", BERLIN, "2026-01-01T09:00+01:00", "2026-01-02T09:00+01:00"),
        ("daily:9:00", BERLIN, "2026-01-01T07:00+00:00", "2026-01-01T09:00+01:00"),
        ("daily:23:59", "UTC", "2026-12-31T23:59+00:00", "2027-01-01T23:59+00:00"),
        ("weekly:mon:09:00", BERLIN, "2026-01-01T12:00+01:00", "2026-01-05T09:00+01:00"),
        ("weekly:Sunday:23:59", "UTC", "2026-01-01T00:00+00:00", "2026-01-04T23:59+00:00"),
        ("cron:0 9 * * mon-fri", BERLIN, "2026-01-09T09:00+01:00", "2026-01-12T09:00+01:00"),
        ("cron:@monthly", NEW_YORK, "2026-01-15T00:00-05:00", "2026-02-01T00:00-05:00"),
        # a different zone for `after` changes nothing: instants are compared
        ("daily:09:00", BERLIN, "2026-01-01T22:00-05:00", "2026-01-02T09:00+01:00"),
    ],
)
def test_next_after_known_answers(text: str, tz: str | None, after: str, expected: str) -> None:
    got = parse_schedule(text, tz=tz).next_after(at(after))
    assert got == at(expected)
    assert got.utcoffset() == at(expected).utcoffset()


def test_weekly_day_list() -> None:
    schedule = parse_schedule("weekly:wed,MON:09:00", tz=BERLIN)
    assert iso(schedule.next_times(at("2026-01-01T00:00+01:00"), count=4)) == [
        "2026-01-05T09:00:00+01:00",
        "2026-01-07T09:00:00+01:00",
        "2026-01-12T09:00:00+01:00",
        "2026-01-14T09:00:00+01:00",
    ]


@pytest.mark.parametrize(
    "after",
    ["2026-12-24T18:00+01:00", "2026-12-25T00:00+01:00", "2030-01-01T00:00+00:00"],
)
def test_once_in_the_past_never_fires_again(after: str) -> None:
    schedule = parse_schedule("once:2026-12-24T18:00", tz=BERLIN)
    assert schedule.next_after(at(after)) is None
    assert schedule.next_times(at(after)) == []


def test_once_fires_exactly_once_in_next_times() -> None:
    schedule = parse_schedule("once:2026-12-24T18:00", tz=BERLIN)
    assert iso(schedule.next_times(at("2026-01-01T00:00+01:00"))) == ["2026-12-24T18:00:00+01:00"]


# --- interval anchoring ---------------------------------------------------------------


@pytest.mark.parametrize(
    "spec, anchor, after, expected",
    [
        (3600, "2026-01-01T10:00+00:00", "2026-01-01T12:30+00:00", "2026-01-01T13:00+00:00"),
        (3600, "2026-01-01T10:00+00:00", "2026-01-01T13:00+00:00", "2026-01-01T14:00+00:00"),
        (3600, "2026-01-01T10:00+00:00", "2026-01-01T10:00+00:00", "2026-01-01T11:00+00:00"),
        (3600, "2026-01-01T10:00+00:00", "2026-01-01T09:00+00:00", "2026-01-01T11:00+00:00"),
        (90, "2026-01-01T10:00+00:00", "2026-01-01T10:04:00+00:00", "2026-01-01T10:04:30+00:00"),
        (86400, "2026-01-01T08:15+00:00", "2026-01-10T08:15:01+00:00", "2026-01-11T08:15+00:00"),
    ],
)
def test_interval_counts_from_anchor(spec: int, anchor: str, after: str, expected: str) -> None:
    schedule = parse_schedule(f"interval:{spec}", tz="UTC")
    assert schedule.next_after(at(after), anchor=at(anchor)) == at(expected)


def test_interval_without_anchor_counts_from_after() -> None:
    schedule = parse_schedule("interval:600", tz="UTC")
    assert schedule.next_after(at("2026-01-01T10:00:07+00:00")) == at("2026-01-01T10:10:07+00:00")


def test_interval_ignores_dst_and_keeps_the_anchor_phase() -> None:
    schedule = parse_schedule("interval:3600", tz=BERLIN)
    times = schedule.next_times(
        at("2026-03-29T00:30+01:00"), count=3, anchor=at("2026-03-29T00:00+01:00")
    )
    assert iso(times) == [
        "2026-03-29T01:00:00+01:00",
        "2026-03-29T03:00:00+02:00",  # one real hour after 01:00 CET
        "2026-03-29T04:00:00+02:00",
    ]


# --- DST -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, tz, after, expected",
    [
        # spring forward: 02:30 does not exist, fire at the end of the gap
        (
            "daily:02:30",
            BERLIN,
            "2026-03-27T12:00+01:00",
            [
                "2026-03-28T02:30:00+01:00",
                "2026-03-29T03:00:00+02:00",
                "2026-03-30T02:30:00+02:00",
            ],
        ),
        (
            "daily:02:30",
            NEW_YORK,
            "2026-03-07T12:00-05:00",
            [
                "2026-03-08T03:00:00-04:00",
                "2026-03-09T02:30:00-04:00",
            ],
        ),
        # gap times 02:00 and 02:30 collapse into one fire at 03:00 (also a match)
        (
            "cron:*/30 * * * *",
            BERLIN,
            "2026-03-29T01:00+01:00",
            [
                "2026-03-29T01:30:00+01:00",
                "2026-03-29T03:00:00+02:00",
                "2026-03-29T03:30:00+02:00",
            ],
        ),
        # fall back: 02:30 happens twice, fire at the first one only
        (
            "daily:02:30",
            BERLIN,
            "2026-10-25T00:00+02:00",
            [
                "2026-10-25T02:30:00+02:00",
                "2026-10-26T02:30:00+01:00",
            ],
        ),
        (
            "daily:01:30",
            NEW_YORK,
            "2026-11-01T00:00-04:00",
            [
                "2026-11-01T01:30:00-04:00",
                "2026-11-02T01:30:00-05:00",
            ],
        ),
        # hourly over fall back: the repeated hour does not fire twice
        (
            "hourly:30",
            NEW_YORK,
            "2026-11-01T00:00-04:00",
            [
                "2026-11-01T00:30:00-04:00",
                "2026-11-01T01:30:00-04:00",
                "2026-11-01T02:30:00-05:00",
                "2026-11-01T03:30:00-05:00",
            ],
        ),
        (
            "cron:*/20 * * * *",
            BERLIN,
            "2026-10-25T01:30+02:00",
            [
                "2026-10-25T01:40:00+02:00",
                "2026-10-25T02:00:00+02:00",
                "2026-10-25T02:20:00+02:00",
                "2026-10-25T02:40:00+02:00",
                "2026-10-25T03:00:00+01:00",
            ],
        ),
    ],
)
def test_dst_transitions(text: str, tz: str, after: str, expected: list[str]) -> None:
    schedule = parse_schedule(text, tz=tz)
    assert iso(schedule.next_times(at(after), count=len(expected))) == expected


def test_fall_back_second_pass_does_not_fire_again() -> None:
    # 02:10 CET is inside the repeated hour, after 02:30 CEST already fired
    schedule = parse_schedule("daily:02:30", tz=BERLIN)
    got = schedule.next_after(at("2026-10-25T02:10+01:00"))
    assert got == at("2026-10-26T02:30+01:00")


def test_every_minute_through_the_repeated_hour() -> None:
    schedule = parse_schedule("cron:* * * * *", tz=BERLIN)
    got = schedule.next_after(at("2026-10-25T02:10+01:00"))
    assert got == at("2026-10-25T03:00+01:00")


# --- zones ---------------------------------------------------------------------------


def test_local_zone_comes_from_tz_env_at_call_time(monkeypatch: pytest.MonkeyPatch) -> None:
    schedule = parse_schedule("daily:09:00")
    assert schedule.tz is None
    monkeypatch.setenv("TZ", NEW_YORK)
    assert schedule.next_after(at("2026-01-01T00:00+00:00")) == at("2026-01-01T09:00-05:00")
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    assert schedule.next_after(at("2025-12-31T23:00+00:00")) == at("2026-01-01T09:00+09:00")


def test_tz_suffix_overrides_the_default_argument() -> None:
    assert parse_schedule("daily:09:00 tz=Asia/Tokyo", tz=BERLIN).tz == "Asia/Tokyo"
    assert parse_schedule("daily:09:00", tz=BERLIN).tz == BERLIN
    assert parse_schedule("cron:0 9 * * *  TZ=UTC").spec == "0 9 * * *"


@pytest.mark.parametrize(
    "text",
    [
        "once:2026-12-24T18:00 tz=Europe/Berlin",
        "interval:3600",
        "hourly:15 tz=UTC",
        "daily:09:00 tz=America/New_York",
        "weekly:mon,wed:09:00",
        "cron:*/15 9-17 * * mon-fri tz=Europe/Berlin",
        "cron:@daily",
    ],
)
def test_str_round_trips(text: str) -> None:
    schedule = parse_schedule(text)
    assert str(schedule) == text
    assert parse_schedule(str(schedule)) == schedule


def test_direct_construction_equals_parsed() -> None:
    assert Schedule("daily", "09:00", BERLIN) == parse_schedule("DAILY:09:00", tz=BERLIN)
    assert {Schedule("daily", "09:00", BERLIN), parse_schedule("daily:09:00 tz=Europe/Berlin")}


@pytest.mark.parametrize(
    "text, tz, expected",
    [
        ("daily:09:00", BERLIN, "every day at 09:00 (Europe/Berlin)"),
        ("daily:9:5", None, "every day at 09:05 (local time)"),
        ("hourly:5", "UTC", "every hour at :05 (UTC)"),
        ("weekly:mon:09:00", BERLIN, "every Monday at 09:00 (Europe/Berlin)"),
        (
            "weekly:fri,mon,wed:18:30",
            None,
            "every Monday, Wednesday and Friday at 18:30 (local time)",
        ),
        ("interval:3600", None, "every hour (local time)"),
        ("interval:5400", None, "every 90 minutes (local time)"),
        ("interval:172800", None, "every 2 days (local time)"),
        ("interval:45", None, "every 45 seconds (local time)"),
        ("once:2026-12-24T18:00", BERLIN, "once at 2026-12-24 18:00 (Europe/Berlin)"),
        ("once:2026-12-24T18:00+01:00", None, "once at 2026-12-24 18:00+0100 (local time)"),
        ("cron:0 9 * * 1-5", BERLIN, "cron '0 9 * * 1-5' (Europe/Berlin)"),
    ],
)
def test_describe(text: str, tz: str | None, expected: str) -> None:
    assert parse_schedule(text, tz=tz).describe() == expected


# --- errors --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, fragments",
    [
        ("cron:61 * * * *", ["minute", "61", "0-59"]),
        ("cron:0 0 30 2 *", ["never fire"]),
        ("daily:25:00", ["daily", "hour 25", "0-23"]),
        ("daily:09:60", ["daily", "minute 60", "0-59"]),
        ("daily:0900", ["daily", "'0900'", "HH:MM"]),
        ("daily:", ["daily", "HH:MM"]),
        ("hourly:60", ["hourly", "minute 60", "0-59"]),
        ("hourly:x", ["hourly", "'x'", "not a number"]),
        ("weekly:xyz:10:00", ["weekly", "'xyz'", "mon, tue"]),
        ("weekly:mon,,wed:10:00", ["weekly", "unknown day ''"]),
        ("weekly:mon", ["weekly", "DAY:HH:MM"]),
        ("weekly:mon:24:00", ["weekly", "hour 24", "0-23"]),
        ("interval:0", ["interval", "0", "1-"]),
        ("interval:-5", ["interval", "'-5'", "positive"]),
        ("interval:1.5", ["interval", "'1.5'"]),
        ("once:tomorrow", ["once", "'tomorrow'", "ISO-8601"]),
        ("once:2026-02-30T10:00", ["once", "ISO-8601"]),
        ("monthly:1", ["unknown schedule kind", "'monthly:1'", "once, interval"]),
        ("every day", ["unknown schedule kind", "cron"]),
        ("0 9 * * *", ["unknown schedule kind", "cron:0 9 * * *"]),
        ("", ["unknown schedule kind"]),
        ("daily:09:00 tz=Mars/Olympus", ["time zone", "'Mars/Olympus'"]),
        ("daily:09:00 tz=../../etc/passwd", ["time zone", "'../../etc/passwd'"]),
    ],
)
def test_invalid_schedules_say_what_is_wrong(text: str, fragments: list[str]) -> None:
    with pytest.raises(ScheduleError) as info:
        parse_schedule(text)
    for fragment in fragments:
        assert fragment in str(info.value)


def test_bad_zone_argument_and_direct_construction() -> None:
    with pytest.raises(ScheduleError, match="Nowhere/City"):
        parse_schedule("daily:09:00", tz="Nowhere/City")
    with pytest.raises(ScheduleError, match="unknown time zone"):  # the file system refuses it
        parse_schedule("daily:09:00", tz="Europe/" + "x" * 300)
    with pytest.raises(ScheduleError, match="unknown schedule kind 'yearly'"):
        Schedule("yearly", "1", None)


def test_schedule_error_is_value_error_and_tea_agent_error() -> None:
    with pytest.raises(ScheduleError) as info:
        parse_schedule("daily:25:00")
    assert isinstance(info.value, ValueError)
    assert isinstance(info.value, TeaAgentError)


@pytest.mark.parametrize("kind", ["daily:09:00", "interval:60", "once:2026-01-01T00:00"])
def test_naive_after_is_rejected(kind: str) -> None:
    schedule = parse_schedule(kind, tz="UTC")
    with pytest.raises(ValueError, match="timezone-aware"):
        schedule.next_after(datetime(2026, 1, 1))


def test_naive_anchor_is_rejected() -> None:
    schedule = parse_schedule("interval:60", tz="UTC")
    with pytest.raises(ValueError, match="anchor"):
        schedule.next_after(datetime(2026, 1, 1, tzinfo=timezone.utc), anchor=datetime(2026, 1, 1))


def test_next_times_are_strictly_increasing_and_counted() -> None:
    schedule = parse_schedule("cron:0 0 13 * fri", tz=BERLIN)
    times = schedule.next_times(at("2026-02-12T00:00+01:00"), count=3)
    assert iso(times) == [
        "2026-02-13T00:00:00+01:00",
        "2026-02-20T00:00:00+01:00",
        "2026-02-27T00:00:00+01:00",
    ]
    assert all(b - a > timedelta(0) for a, b in pairwise(times))
