"""The evolution pass: what the stored tool calls say about the agent's tools, written down.

    report = run_evolution(store, home, settings, tools)            # now (toolkit_evolution)
    await maybe_run_evolution(store, home, settings, inventory)     # after a turn, hourly

``tools`` are the installed tools, each with whether it is one of the user's own
(``toolkit/usertools.tool_inventory`` gives them). The pass reads the tool messages of the last
``evolution.window_days`` (``store.messages.tool_runs``) and writes:

- ``<home>/evolution/report.json`` and ``report.md``: calls, failures and time per tool, the
  installed tools nobody called, tools that often follow one another, suggestions;
- ``<home>/tools/TOOLS.md``: the user's own tools, what they take and how they were used;
- skill housekeeping (``skillcare.py``): weak skills retired, orphaned tool skills removed.

It runs on the one background worker at most once per ``evolution.interval`` seconds (0: never),
the first time one interval after the first turn; the time is recorded before it runs, so a
failing pass is not retried every turn. ``toolkit_evolution action=run`` runs it at once.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import json
import logging
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .skillcare import SkillCare, care_for_skills
from .usage import Pair, ToolStats, frequent_pairs, tool_stats

if TYPE_CHECKING:
    from ..config import EvolutionConfig
    from ..store import Store

__all__ = [
    "EvolutionReport",
    "ToolLike",
    "maybe_run_evolution",
    "read_report",
    "run_evolution",
]

log = logging.getLogger(__name__)

STATE_SCOPE = "runtime"
STATE_KEY = "evolution_at"
REPORT_DIR = "evolution"
TOOLS_MD = "TOOLS.md"
EVOLUTION_TIMEOUT = 120.0
FAILING_RATE = 0.5  # a tool failing this often (over MIN_CALLS calls) is worth a look
MIN_CALLS = 3
SLOW_SECONDS = 30.0


class ToolLike(Protocol):
    """What the pass reads of an installed tool (``toolkit.registry.ToolSpec`` fits)."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def parameters(self) -> dict[str, Any]: ...


Inventory = Iterable[tuple[ToolLike, bool]]  # (tool, whether it is one of the user's own)


@dataclass
class EvolutionReport:
    """One pass's findings (also written as report.json and report.md)."""

    generated_at: float
    window_days: float
    calls: int
    tools: list[ToolStats]
    unused: list[str]
    pairs: list[Pair]
    user_tools: list[str]
    skills: SkillCare = field(default_factory=SkillCare)
    suggestions: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "generated_at": _stamp(self.generated_at),
            "window_days": self.window_days,
            "calls": self.calls,
            "tools": [stats.to_dict() for stats in self.tools],
            "unused": self.unused,
            "pairs": [{"first": p.first, "then": p.then, "count": p.count} for p in self.pairs],
            "user_tools": self.user_tools,
            "skills": self.skills.to_dict(),
            "suggestions": self.suggestions,
        }

    def to_markdown(self) -> str:
        window = f"{self.window_days:g} days"
        lines = [f"# Evolution report, {_stamp(self.generated_at)}", ""]
        lines.append(f"{self.calls} tool calls in the last {window}.")
        if self.suggestions:
            lines += ["", "## Suggestions", "", *(f"- {s}" for s in self.suggestions)]
        if self.tools:
            lines += [
                "",
                "## Tools used",
                "",
                "| tool | calls | failed | avg s |",
                "|---|---|---|---|",
            ]
            lines += [
                f"| {s.name} | {s.calls} | {s.failures} | {s.average:.2f} |" for s in self.tools
            ]
        if self.pairs:
            lines += ["", "## Often together", ""]
            lines += [f"- {p.first} then {p.then}: {p.count} times" for p in self.pairs]
        if self.unused:
            lines += ["", f"## Not called in the last {window}", "", ", ".join(self.unused)]
        care = self.skills
        done = [
            f"retired: {', '.join(care.retired)}" if care.retired else "",
            f"weak (kept): {', '.join(care.weak)}" if care.weak else "",
            f"tool skills removed: {', '.join(care.removed)}" if care.removed else "",
        ]
        done = [d for d in done if d] + [f"problem: {p}" for p in care.problems]
        if done:
            lines += ["", "## Skills", "", *(f"- {d}" for d in done)]
        return "\n".join(lines) + "\n"


def run_evolution(
    store: Store,
    home: Path,
    settings: EvolutionConfig,
    tools: Inventory,
    *,
    workspace: Path | None = None,
    clock: Callable[[], float] = time.time,
) -> EvolutionReport:
    """Run the pass now and write its files. Blocking: call it in a worker thread."""
    now = clock()
    installed = list(tools)
    user = sorted(tool.name for tool, own in installed if own)
    runs = store.messages.tool_runs(now - settings.window_days * 86400)
    stats = tool_stats(runs)
    called = {s.name for s in stats}
    report = EvolutionReport(
        generated_at=now,
        window_days=settings.window_days,
        calls=len(runs),
        tools=stats,
        unused=sorted({tool.name for tool, _ in installed} - called),
        pairs=frequent_pairs(runs),
        user_tools=user,
    )
    report.skills = care_for_skills(
        store.db, home, workspace, set(user), retire=settings.retire_skills
    )
    report.suggestions = suggestions(report)
    write_report(home, report)
    write_tools_md(home, [tool for tool, own in installed if own], stats, settings.window_days)
    return report


async def maybe_run_evolution(
    store: Store,
    home: Path,
    settings: EvolutionConfig,
    inventory: Callable[[], Inventory],
    workspace: Path | None = None,
    *,
    clock: Callable[[], float] = time.time,
) -> EvolutionReport | None:
    """Run the pass when ``settings.interval`` seconds have passed since the last one (never
    when it is 0); None when it was not due. The first call only starts the clock: there is
    nothing to learn from before the first turn. For the background worker."""
    if settings.interval <= 0:
        return None
    now = clock()
    last = await asyncio.to_thread(store.state.get, STATE_SCOPE, STATE_KEY, None)
    if last is not None and now - float(last) < settings.interval:
        return None
    await asyncio.to_thread(store.state.put, STATE_SCOPE, STATE_KEY, now)
    if last is None:
        return None
    return await asyncio.to_thread(
        lambda: run_evolution(store, home, settings, inventory(), workspace=workspace, clock=clock)
    )


def suggestions(report: EvolutionReport) -> list[str]:
    """What the numbers suggest doing, most useful first."""
    found: list[str] = []
    own = set(report.user_tools)
    for stats in report.tools:
        if stats.calls >= MIN_CALLS and stats.failure_rate >= FAILING_RATE:
            fix = " (fix it with toolkit_self_evolve)" if stats.name in own else ""
            found.append(
                f"{stats.name} failed {stats.failures} of {stats.calls} calls: look at why{fix}"
            )
        if stats.timed and stats.average >= SLOW_SECONDS:
            found.append(f"{stats.name} takes {stats.average:.0f} s on average")
    for pair in report.pairs:
        found.append(
            f"{pair.first} is followed by {pair.then} {pair.count} times: a skill or a tool of "
            "your own could do both in one step"
        )
    idle = [name for name in report.user_tools if name in report.unused]
    if idle:
        found.append(
            f"your tools not used in {report.window_days:g} days: {', '.join(idle)} (improve "
            "their descriptions, or drop them)"
        )
    if report.skills.retired:
        found.append(f"retired weak skills: {', '.join(report.skills.retired)}")
    return found


def write_report(home: Path, report: EvolutionReport) -> Path:
    folder = Path(home) / REPORT_DIR
    _write(folder / "report.json", json.dumps(report.to_dict(), indent=2) + "\n")
    _write(folder / "report.md", report.to_markdown())
    return folder / "report.md"


def read_report(home: Path) -> str | None:
    """The last pass's Markdown report, None before the first pass."""
    try:
        return (Path(home) / REPORT_DIR / "report.md").read_text(encoding="utf-8")
    except OSError:
        return None


def write_tools_md(
    home: Path, tools: list[ToolLike], stats: list[ToolStats], window_days: float
) -> Path | None:
    """``<home>/tools/TOOLS.md``: the user's own tools. Not written (None) when there are none
    and there was no such file."""
    path = Path(home) / "tools" / TOOLS_MD
    if not tools and not path.exists():
        return None
    used = {s.name: s for s in stats}
    lines = [
        "# Your tools",
        "",
        f"Written by the evolution pass on {_stamp(time.time())}; the tools themselves are the "
        "`.py` files of this folder (versions in `.versions/`).",
    ]
    if not tools:
        lines += ["", "You have no tools of your own yet."]
    for tool in sorted(tools, key=lambda t: t.name):
        version = _version(home, tool.name)
        lines += ["", f"## {tool.name}{f' (v{version})' if version else ''}", ""]
        lines.append(" ".join(tool.description.split()))
        lines += ["", f"Parameters: {_parameters(tool.parameters)}"]
        s = used.get(tool.name)
        usage = (
            f"{s.calls} calls, {s.failures} failed, {s.average:.2f} s on average"
            if s
            else "not called"
        )
        lines.append(f"Used in the last {window_days:g} days: {usage}.")
    _write(path, "\n".join(lines) + "\n")
    return path


def _parameters(schema: dict[str, Any]) -> str:
    properties = schema.get("properties", {}) or {}
    required = set(schema.get("required", []) or [])
    parts = []
    for name, item in properties.items():
        kind = item.get("type", "any") if isinstance(item, dict) else "any"
        parts.append(f"`{name}` ({kind}{', required' if name in required else ''})")
    return ", ".join(parts) or "none"


def _version(home: Path, name: str) -> int | None:
    try:
        data = json.loads((Path(home) / "tools" / f"{name}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    version = data.get("version") if isinstance(data, dict) else None
    return version if isinstance(version, int) else None


def _stamp(when: float) -> str:
    return _dt.datetime.fromtimestamp(when).astimezone().isoformat(timespec="seconds")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)
