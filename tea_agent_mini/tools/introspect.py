"""toolkit_harness_schema and toolkit_self_report: what this agent can do, and how it is doing."""

from __future__ import annotations

import os
import platform
import shutil
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import Toolkit, ToolSpec, tool
from tea_agent_mini.tools.settings import models_overview

if TYPE_CHECKING:
    from tea_agent_mini.store import Store


def _toolkit(ctx: ToolContext) -> Toolkit:
    return ctx.toolkit if ctx.toolkit is not None else Toolkit.load()


def _first_sentence(text: str) -> str:
    head = text.split(". ", 1)[0].strip()
    return head if head.endswith(".") else head + "."


def tool_entry(spec: ToolSpec) -> dict[str, Any]:
    return {
        "name": spec.name,
        "summary": _first_sentence(spec.description),
        "parameters": sorted(spec.parameters.get("properties", {})),
        "mutates": spec.mutates,
        "mutating_actions": sorted(spec.mutating_actions) if spec.mutating_actions else None,
        # safe: no side effects, may run in parallel with other safe tools
        "safe": spec.concurrency_safe and not spec.mutates,
        "requires": list(spec.requires),
        "module": spec.module.rsplit(".", 1)[-1],
    }


def has_fts5() -> bool:
    import sqlite3

    connection = sqlite3.connect(":memory:")
    try:
        connection.execute("CREATE VIRTUAL TABLE probe USING fts5 (text)")
    except sqlite3.Error:
        return False
    finally:
        connection.close()
    return True


def features(ctx: ToolContext) -> dict[str, Any]:
    import sqlite3

    runtime = ctx.runtime
    config = runtime.config if runtime is not None else None
    return {
        "sqlite": sqlite3.sqlite_version,
        "fts5": has_fts5(),
        "git": shutil.which("git") is not None,
        "shell": os.environ.get("SHELL") or shutil.which("sh") or "",
        "procfs": Path("/proc/self/status").is_file(),
        "approval": ctx.approval,
        "workspace_confined": not ctx.allow_outside_workspace,
        "sandbox": ctx.sandbox.status()[1],
        "ask_user": ctx.ask_user is not None,
        "store": ctx.store is not None,
        "mcp_servers": sorted(config.mcp_servers) if config is not None else [],
    }


@tool("toolkit_harness_schema", concurrency_safe=True)
def toolkit_harness_schema(ctx: ToolContext) -> dict[str, Any]:
    """A machine-readable description of this agent: version, every tool (with whether it
    changes things and can run in parallel), the configured models (no keys) and the available
    features (SQLite FTS5, git, ...)."""
    from tea_agent_mini._version import __version__

    toolkit = _toolkit(ctx)
    specs = sorted(toolkit.specs(), key=lambda spec: spec.name)
    return {
        "name": "tea_agent_mini",
        "version": __version__,
        "tool_count": len(specs),
        "tools": [tool_entry(spec) for spec in specs],
        "load_errors": dict(toolkit.load_errors),
        "models": models_overview(ctx.runtime.config) if ctx.runtime is not None else {},
        "features": features(ctx),
    }


# ---- self report --------------------------------------------------------------------------


def memory_usage() -> dict[str, float | None]:
    """Resident memory now and at peak, in MiB (from /proc, else getrusage's peak)."""
    current = peak = None
    try:
        for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
            if line.startswith("VmRSS:"):
                current = int(line.split()[1]) / 1024
            elif line.startswith("VmHWM:"):
                peak = int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    if peak is None:
        try:
            import resource

            raw = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            peak = raw / (1024 * 1024) if sys.platform == "darwin" else raw / 1024
        except (ImportError, OSError):
            pass
    return {
        "rss_mib": round(current, 1) if current is not None else None,
        "peak_rss_mib": round(peak, 1) if peak is not None else None,
    }


def process_uptime() -> float | None:
    """Seconds since this process started (Linux /proc), else None."""
    try:
        stat = Path("/proc/self/stat").read_text(encoding="ascii")
        started_ticks = int(stat.rsplit(")", 1)[1].split()[19])
        system_uptime = float(Path("/proc/uptime").read_text(encoding="ascii").split()[0])
        return round(system_uptime - started_ticks / os.sysconf("SC_CLK_TCK"), 1)
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def store_report(store: Store | None) -> dict[str, Any]:
    if store is None:
        return {}
    path = store.path
    report: dict[str, Any] = {"database": store.location}  # PostgreSQL: the URL, no secrets
    if path is not None:
        files = (path, Path(f"{path}-wal"))
        report["database_bytes"] = sum(p.stat().st_size for p in files if p.is_file())
    topics = store.topics.recent(limit=1_000_000, include_archived=True)
    report["topics"] = len(topics)
    report["messages"] = sum(topic.message_count for topic in topics)
    return report


@tool("toolkit_self_report", concurrency_safe=True)
def toolkit_self_report(ctx: ToolContext) -> dict[str, Any]:
    """How this agent process is doing: version, process id and uptime, Python and platform,
    memory in use, database size, number of conversations and messages, number of tools."""
    from tea_agent_mini._version import __version__

    toolkit = _toolkit(ctx)
    return {
        "version": __version__,
        "pid": os.getpid(),
        "uptime_seconds": process_uptime(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "platform": f"{platform.system()} {platform.release()} ({platform.machine()})",
        "threads": threading.active_count(),
        **memory_usage(),
        **store_report(ctx.store),
        "tools": len(toolkit.tools),
        "tool_load_errors": len(toolkit.load_errors),
    }
