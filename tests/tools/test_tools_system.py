from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.tools.system import human_bytes, read_meminfo, toolkit_gettime, toolkit_os_info


@pytest.fixture
def ctx(workspace: Path, tea_home: Path) -> ToolContext:
    return ToolContext(workspace=workspace, home=tea_home)


def test_gettime_in_a_named_zone(ctx):
    info = toolkit_gettime(ctx, timezone="UTC")
    parsed = dt.datetime.fromisoformat(info["iso"])
    assert parsed.utcoffset() == dt.timedelta(0)
    assert info["utc_offset"] == "+00:00"
    assert info["weekday"] == parsed.strftime("%A")
    assert info["date"] == parsed.date().isoformat()
    assert abs(info["unix"] - parsed.timestamp()) < 1


def test_gettime_with_an_iana_zone(ctx):
    pytest.importorskip("zoneinfo")
    try:
        info = toolkit_gettime(ctx, timezone="Asia/Kolkata")
    except ToolError:
        pytest.skip("no time zone database on this system")
    assert info["utc_offset"] == "+05:30"
    assert info["timezone"] == "Asia/Kolkata"


def test_gettime_local_zone_and_unknown_zone(ctx):
    local = toolkit_gettime(ctx)
    assert dt.datetime.fromisoformat(local["iso"]).tzinfo is not None
    with pytest.raises(ToolError, match="unknown time zone 'Mars/Olympus'"):
        toolkit_gettime(ctx, timezone="Mars/Olympus")


def test_os_info(ctx, workspace):
    info = toolkit_os_info(ctx)
    assert info["cpu_count"] == os.cpu_count()
    assert info["workspace"] == str(workspace)
    assert info["python"].split()[1].startswith("3.")
    assert set(info["disk"]) == {"total", "used", "free"}
    if Path("/proc/meminfo").exists():
        assert set(info["memory"]) == {"total", "available"}


def test_read_meminfo_parses_kilobytes(tmp_path):
    path = tmp_path / "meminfo"
    path.write_text("MemTotal:       16384000 kB\nMemFree: 1 kB\nMemAvailable:    8192000 kB\n")
    assert read_meminfo(path) == {"total": "15.6 GB", "available": "7.8 GB"}
    assert read_meminfo(tmp_path / "missing") == {}


@pytest.mark.parametrize(
    ("size", "text"), [(0, "0 B"), (1023, "1023 B"), (1536, "1.5 KB"), (5 * 1024**3, "5.0 GB")]
)
def test_human_bytes(size, text):
    assert human_bytes(size) == text
