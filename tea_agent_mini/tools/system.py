"""toolkit_gettime and toolkit_os_info: the current time and a description of this machine."""

from __future__ import annotations

import datetime as dt
import os
import platform
import shutil
import sys
from pathlib import Path
from typing import Any

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import tool


@tool("toolkit_gettime", concurrency_safe=True)
def toolkit_gettime(ctx: ToolContext, timezone: str | None = None) -> dict[str, Any]:
    """Current date and time: ISO 8601 timestamp, weekday, time zone and UTC offset. Without
    `timezone` the machine's local zone is used.

    Args:
        timezone: IANA time zone name such as 'Asia/Shanghai', 'Europe/Paris' or 'UTC'
            (default: the local zone)
    """
    now = dt.datetime.now(dt.timezone.utc)
    if timezone:
        now = now.astimezone(_zone(timezone.strip()))
    else:
        now = now.astimezone()
    offset = now.utcoffset() or dt.timedelta(0)
    minutes = int(offset.total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    return {
        "iso": now.isoformat(timespec="seconds"),
        "date": now.date().isoformat(),
        "time": now.strftime("%H:%M:%S"),
        "weekday": now.strftime("%A"),
        "timezone": timezone.strip() if timezone else (now.tzname() or "local"),
        "utc_offset": f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}",
        "unix": int(now.timestamp()),
    }


def _zone(name: str) -> dt.tzinfo:
    if name.upper() in ("UTC", "Z", "GMT"):
        return dt.timezone.utc
    try:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError
    except ImportError as exc:  # pragma: no cover - Python < 3.9 is not supported anyway
        raise ToolError("time zones are not available on this Python") from exc
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ToolError(
            f"unknown time zone {name!r}; use an IANA name such as 'Europe/Berlin' or "
            "'America/New_York' (the system may lack time zone data)"
        ) from exc


@tool("toolkit_os_info", concurrency_safe=True)
def toolkit_os_info(ctx: ToolContext) -> dict[str, Any]:
    """Describe the machine the agent runs on: operating system, architecture, Python version,
    CPU count, memory, free disk space of the workspace, current directory and workspace."""
    info: dict[str, Any] = {
        "platform": platform.platform(),
        "system": platform.system(),
        "release": platform.release(),
        "machine": platform.machine(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "python_executable": sys.executable,
        "cpu_count": os.cpu_count(),
        "cwd": os.getcwd(),
        "workspace": str(ctx.workspace),
    }
    memory = read_meminfo()
    if memory:
        info["memory"] = memory
    try:
        usage = shutil.disk_usage(ctx.workspace)
        info["disk"] = {
            "total": human_bytes(usage.total),
            "used": human_bytes(usage.used),
            "free": human_bytes(usage.free),
        }
    except OSError:
        pass
    return info


def read_meminfo(path: Path = Path("/proc/meminfo")) -> dict[str, str]:
    """Total and available memory from /proc/meminfo (Linux); empty elsewhere."""
    try:
        text = path.read_text()
    except OSError:
        return {}
    values: dict[str, int] = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            values[key.strip()] = int(parts[0]) * 1024  # reported in kB
    result = {}
    for key, label in (("MemTotal", "total"), ("MemAvailable", "available")):
        if key in values:
            result[label] = human_bytes(values[key])
    return result


def human_bytes(size: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if size < 1024 or unit == "TB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} TB"
