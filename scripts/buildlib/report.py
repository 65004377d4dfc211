"""The build report: one dict (printed as JSON with --json) and its text rendering."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path
from typing import Any

from .results import Check, all_ok, failures
from .source_checks import SourcePlan

LARGEST_SHOWN = 8


def whitelist_summary(source: SourcePlan) -> dict[str, Any]:
    present = {module.name for module in source.modules.values()}
    return {
        "count": source.tool_count,
        "shipped": source.shipped_tools,
        "excluded": dict(source.excluded),
        "excluded_not_in_tree": {
            name: reason for name, reason in source.manifest.excluded.items() if name not in present
        },
    }


def artifact_info(path: Path, root: Path) -> dict[str, Any]:
    data = path.read_bytes()
    info: dict[str, Any] = {
        "path": _shown(path, root),
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    if path.suffix == ".whl":
        with zipfile.ZipFile(path) as archive:
            members = archive.infolist()
        info["files"] = len(members)
        info["uncompressed_bytes"] = sum(m.file_size for m in members)
        largest = sorted(members, key=lambda m: -m.compress_size)[:LARGEST_SHOWN]
        info["largest"] = {m.filename: m.compress_size for m in largest}
    return info


def _shown(path: Path, root: Path) -> str:
    try:
        return str(path.resolve().relative_to(root.resolve()))
    except ValueError:
        return str(path)


def build_report(
    version: str, source: SourcePlan | None, checks: list[Check], **extra: Any
) -> dict[str, Any]:
    report: dict[str, Any] = {"ok": all_ok(checks), "version": version}
    if source is not None:
        report["tools"] = whitelist_summary(source)
    report.update(extra)
    report["checks"] = [check.to_dict() for check in checks]
    report["failures"] = failures(checks)
    return report


def render(report: dict[str, Any]) -> str:
    lines = [f"tea_agent_mini {report['version']}: mini wheel build", "", "checks"]
    for check in report["checks"]:
        mark = "ok  " if check["ok"] else "FAIL"
        took = f" ({check['seconds']:.1f} s)" if check.get("seconds") else ""
        lines.append(f"  {mark}  {check['name']:<34} {check['detail']}{took}".rstrip())
        lines.extend(f"          - {problem}" for problem in check["problems"])
    lines.extend(_render_artifacts(report))
    lines.extend(_render_installed(report.get("installed")))
    lines.extend(_render_tools(report.get("tools")))
    verdict = "OK" if report["ok"] else f"FAILED ({len(report['failures'])} problems)"
    lines += ["", f"result: {verdict}"]
    return "\n".join(lines)


def _render_artifacts(report: dict[str, Any]) -> list[str]:
    artifacts = report.get("artifacts")
    if not artifacts:
        return []
    lines = ["", f"artifacts (SOURCE_DATE_EPOCH={artifacts['source_date_epoch']})"]
    for key in ("wheel", "sdist"):
        info = artifacts[key]
        files = f"  {info['files']} files" if "files" in info else ""
        lines.append(f"  {info['path']:<48} {kb(info['bytes']):>10}{files}")
        lines.append(f"      sha256 {info['sha256']}")
        if "largest" in info:
            lines.append("      largest members (compressed):")
            lines.extend(f"        {kb(size):>9}  {name}" for name, size in info["largest"].items())
    return lines


def _render_installed(installed: dict[str, Any] | None) -> list[str]:
    if not installed:
        return []
    lines = [
        "",
        "installed in a fresh venv (with .pyc, without pip/setuptools)",
        f"  package {kb(installed['package_bytes'])}, "
        f"with its dependency closure {kb(installed['closure_bytes'])}",
    ]
    lines.extend(f"    {name:<24} {kb(size):>10}" for name, size in installed["per_dist"].items())
    return lines


def _render_tools(tools: dict[str, Any] | None) -> list[str]:
    if not tools:
        return []
    lines = ["", f"tools: {tools['count']} shipped"]
    for module, names in tools["shipped"].items():
        lines.append(f"  {module:<12} {', '.join(names)}")
    if tools["excluded"] or tools["excluded_not_in_tree"]:
        lines.append("excluded")
    for entry, reason in tools["excluded"].items():
        lines.append(f"  {entry:<40} {reason}")
    for name, reason in tools["excluded_not_in_tree"].items():
        lines.append(f"  {name + ' (not in this tree)':<40} {reason}")
    return lines


def kb(size: int) -> str:
    return f"{size / 1000:.1f} KB" if size < 1_000_000 else f"{size / 1_000_000:.2f} MB"
