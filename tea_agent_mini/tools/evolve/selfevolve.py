"""toolkit_self_evolve: change a file of the workspace, or one of the user's own tools, safely.

The change (``target.py``) is worked out before anything is written; then, layer by layer
(``checks.py``): git snapshot, timestamped backup, apply, syntax, byte-compile, lint comparison,
signature changes, for a user tool that it still loads, the project's tests. Any failure puts the
original bytes back (and checks that they are back); the report lists every layer. A user tool
that passes becomes a new saved version (``toolkit_rollback`` reaches the old one) and is
reloaded in the live toolkit. Writes go through the approval policy like any write: the tool is
mutating, so ``ask`` asks and ``never`` refuses.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tea_agent_mini.errors import ToolError
from tea_agent_mini.skills.loader import SkillFormatError
from tea_agent_mini.skills.toolskills import write_tool_skill
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.registry import tool
from tea_agent_mini.toolkit.usercode import UserToolError
from tea_agent_mini.toolkit.userstore import UserToolStore, forget_module, load_file, now_iso
from tea_agent_mini.toolkit.usertools import live_toolkit, sync_user_tools
from tea_agent_mini.tools.evolve import checks
from tea_agent_mini.tools.evolve.checks import Layer
from tea_agent_mini.tools.evolve.target import Target, new_text, parse_change, resolve_target
from tea_agent_mini.tools.files.diffs import count_changes, unified_diff
from tea_agent_mini.tools.files.fileio import read_bytes_or_none, write_atomic

MAX_TIMEOUT = 3600.0


@dataclass
class EvolveReport:
    shown: str
    layers: list[Layer]
    kept: bool

    @property
    def failed(self) -> Layer | None:
        return next((layer for layer in self.layers if layer.status == "failed"), None)

    def render(self) -> str:
        failed = self.failed
        if self.kept:
            head = f"{self.shown}: the change is kept; every check passed"
            if any(layer.status == "warning" for layer in self.layers):
                head += " (read the warnings)"
        else:
            where = failed.name if failed is not None else "?"
            head = f"{self.shown}: the change was rolled back: the {where} check failed"
        return "\n".join([head, *(layer.line() for layer in self.layers)])


@tool(
    "toolkit_self_evolve",
    mutates=True,
    keywords="self-modify improve evolve own code safe change rollback",
)
def toolkit_self_evolve(
    ctx: ToolContext,
    path: str,
    change: dict[str, Any] | str,
    tests: str = "",
    timeout: float = 300,
) -> str:
    """Change a source file safely: a file of the workspace, or one of your own tools. The
    change is applied, then checked layer by layer (git snapshot, backup, syntax, byte-compile,
    ruff with no new findings, changed public signatures, your tool still loading, the
    project's tests) and rolled back at once if any check fails. The report lists every layer.
    The installed tea_agent_mini package is never changed.

    Args:
        path: the file, relative to the workspace, or tool:<name> for one of your own tools
        change: {"old": "exact text", "new": "its replacement"} (one exact occurrence),
            {"diff": "a unified diff of this file"}, or {"content": "the whole new file"}
        tests: pytest arguments to run instead of the whole test suite, in the project's
            folder, e.g. 'tests/test_parser.py -k quoted'
        timeout: how long the test run may stay idle, in seconds (default 300)
    """
    if not 0 < timeout <= MAX_TIMEOUT:
        raise ToolError(f"timeout must be between 0 and {MAX_TIMEOUT:g} seconds")
    try:
        selection = shlex.split(tests or "")
    except ValueError as exc:
        raise ToolError(f"cannot split tests {tests!r}: {exc}") from exc
    target = resolve_target(ctx, path)
    mode, fields = parse_change(change)
    original = read_bytes_or_none(target.path)
    current = _decode(original, target.shown)
    text = new_text(mode, fields, current, target.shown)
    if text == current:
        raise ToolError(f"the change leaves {target.shown} as it is; nothing to do")
    added, removed = count_changes(unified_diff(current, text, target.shown))
    summary = f"{mode}: +{added} -{removed} lines"
    report = evolve(ctx, target, original, text, summary, selection, timeout)
    if not report.kept:
        raise ToolError(report.render())
    return report.render()


def _decode(data: bytes | None, shown: str) -> str | None:
    if data is None:
        return None
    if b"\x00" in data[:8192]:
        raise ToolError(f"'{shown}' is a binary file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(f"'{shown}' is not UTF-8 text ({exc.reason} at byte {exc.start})") from exc


def evolve(
    ctx: ToolContext,
    target: Target,
    original: bytes | None,
    text: str,
    summary: str,
    selection: list[str],
    timeout: float,
) -> EvolveReport:
    """Apply ``text`` to the target, check it, keep it or put the original back."""
    layers = [checks.git_snapshot(ctx, target)]
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S-%f")  # two changes a second: two copies
    layers.append(checks.backup(ctx.home, target, original, stamp))
    if layers[-1].status == "failed":
        return EvolveReport(target.shown, layers, kept=False)  # nothing was written
    before = {target.path: original, **_tool_meta(ctx, target)}
    baseline = checks.lint_findings(ctx, target)
    old_text = original.decode("utf-8") if original is not None else None
    write_atomic(target.path, text.encode("utf-8"), label=target.shown)
    layers.append(Layer("apply", "ok", summary))
    steps: list[Callable[[], Layer]] = [
        lambda: checks.syntax(target, text),
        lambda: checks.byte_compile(target),
        lambda: checks.lint(ctx, target, baseline),
        lambda: checks.signatures(target, old_text, text),
        lambda: checks.run_tests(ctx, target, selection, timeout),
    ]
    stem = target.user_tool
    if stem is not None:  # it must still load before its tests, and becomes a new version
        steps.insert(-1, lambda: _loads(ctx, stem))
        steps.append(lambda: _commit_user_tool(ctx, stem, text))
    try:
        for step in steps:
            layers.append(step())
            if layers[-1].status == "failed":
                layers.append(rollback(before))
                _resync(ctx, target)
                return EvolveReport(target.shown, layers, kept=False)
    except BaseException:  # an error, or the turn was cancelled: leave the original in place
        rollback(before)
        raise
    return EvolveReport(target.shown, layers, kept=True)


def rollback(before: dict[Path, bytes | None]) -> Layer:
    """Put every file back as it was, and check that its bytes are the original ones."""
    problems = []
    for path, data in before.items():
        try:
            if data is None:
                path.unlink(missing_ok=True)
            else:
                write_atomic(path, data)
        except (OSError, ToolError) as exc:
            problems.append(f"{path}: {exc}")
            continue
        if _digest(read_bytes_or_none(path)) != _digest(data):
            problems.append(f"{path}: its bytes differ from the original")
    if problems:
        return Layer("rollback", "failed", "; ".join(problems) + " (see the backup)")
    return Layer("rollback", "ok", "the original bytes are back (checked)")


def _digest(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


# ---- the user's own tools ------------------------------------------------------------------


def _tool_meta(ctx: ToolContext, target: Target) -> dict[Path, bytes | None]:
    """The tool's metadata file as it is (a new version rewrites it; a rollback restores it)."""
    if target.user_tool is None:
        return {}
    meta = UserToolStore(ctx.home).meta_path(target.user_tool)
    return {meta: read_bytes_or_none(meta)}


def _loads(ctx: ToolContext, stem: str) -> Layer:
    """A user tool must still follow the convention and load."""
    try:
        specs = load_file(UserToolStore(ctx.home), stem)
    except UserToolError as exc:
        return Layer("tool", "failed", str(exc))
    for module in {spec.module for spec in specs}:
        forget_module(module)
    return Layer("tool", "ok", "loads: " + ", ".join(spec.name for spec in specs))


def _commit_user_tool(ctx: ToolContext, stem: str, text: str) -> Layer:
    """Save a self-made tool's new code as a new version, then reload the live toolkit."""
    store = UserToolStore(ctx.home)
    meta = store.read_meta(stem)
    note = "hand-written module (not versioned)"
    if meta is not None:
        meta = dataclasses.replace(
            meta, version=store.next_version(meta.name), created=now_iso(), read_only=False
        )
        store.save(meta, text)
        try:
            write_tool_skill(ctx.home, meta.name, meta.description, meta.parameters, meta.version)
        except (OSError, SkillFormatError):
            pass  # the skill is a convenience; the tool itself is saved
        note = f"saved as v{meta.version}"
    toolkit = live_toolkit(ctx)
    if toolkit is None:
        return Layer("reload", "ok", f"{note}; it loads at the next start")
    synced = sync_user_tools(toolkit, ctx.home)
    error = synced.errors.get(stem)
    if error:
        return Layer("reload", "failed", error)
    return Layer("reload", "ok", f"{note}; reloaded in this session")


def _resync(ctx: ToolContext, target: Target) -> None:
    toolkit = live_toolkit(ctx)
    if target.user_tool is not None and toolkit is not None:
        sync_user_tools(toolkit, ctx.home)
