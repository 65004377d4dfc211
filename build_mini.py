#!/usr/bin/env python3
"""Build the small tea_agent_mini wheel and prove that it works before saying so.

    python build_mini.py              # checks, sdist + wheel into dist/, venv proof, report
    python build_mini.py --check      # static checks only, nothing built
    python build_mini.py --list       # tools the wheel ships and leaves out
    python build_mini.py --no-proof   # build and inspect the wheel, skip the venv proof
    python build_mini.py --json       # the report as one JSON object

The wheel is built by the project's own backend (hatchling, through ``python -m build``); the
toolkit whitelist is applied by ``hatch_build.py`` inside that backend. This script checks the
source first, opens the wheel to check what it really holds, then installs it into a fresh venv
and runs the CLI, the server and a chat turn against the scripted model. Any failure makes the
exit status 1 and is named in the report. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "scripts"))

from buildlib import building, report, source_checks, wheel_checks, whitelist  # noqa: E402
from buildlib.results import Check, all_ok  # noqa: E402


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--list", action="store_true", help="print included and excluded tools")
    mode.add_argument("--check", action="store_true", help="run the static checks, build nothing")
    parser.add_argument("--no-proof", action="store_true", help="skip the fresh-venv proof")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--root", type=Path, default=ROOT, help="project root (default: here)")
    parser.add_argument("--out-dir", type=Path, help="where to write artifacts (default: dist/)")
    parser.add_argument(
        "--budget-kb",
        type=float,
        default=wheel_checks.WHEEL_BUDGET_BYTES / 1000,
        help="fail when the wheel is larger (default: %(default).0f KB)",
    )
    parser.add_argument(
        "--isolated",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="build in an isolated env fetched from PyPI "
        "(default: only when build/hatchling are not installed here)",
    )
    return parser.parse_args(argv)


def list_tools(root: Path, as_json: bool) -> int:
    try:
        source = source_checks.plan(root)
    except whitelist.WhitelistError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    summary = report.whitelist_summary(source)
    if as_json:
        print(json.dumps(summary, indent=2))
        return 0
    print(f"included: {summary['count']} tools in {len(summary['shipped'])} modules")
    for module, names in summary["shipped"].items():
        shown = ", ".join(names) or "(missing or no @tool)"
        print(f"  + {module:<16} {shown}")
    print("excluded:")
    for entry, reason in summary["excluded"].items():
        print(f"  - {entry:<40} {reason}")
    for name, reason in summary["excluded_not_in_tree"].items():
        print(f"  - {name + ' (not in this tree)':<40} {reason}")
    return 0


def build_and_prove(args: argparse.Namespace, source, checks: list[Check]) -> dict:
    """Build, inspect the wheel, then (unless --no-proof) prove it; appends to ``checks``."""
    root = args.root.resolve()
    out_dir = (args.out_dir or root / "dist").resolve()
    extra: dict = {}
    build_check = Check("build (python -m build)")
    checks.append(build_check)
    try:
        artifacts = building.build(root, out_dir, isolated=args.isolated)
    except building.BuildError as exc:
        build_check.fail(str(exc))
        return extra
    build_check.seconds = round(artifacts.seconds, 2)
    build_check.detail = "isolated env" if artifacts.isolated else "no isolation (local hatchling)"
    extra["artifacts"] = {
        "wheel": report.artifact_info(artifacts.wheel, root),
        "sdist": report.artifact_info(artifacts.sdist, root),
        "source_date_epoch": artifacts.epoch,
    }
    budget = int(args.budget_kb * 1000)
    _, inspected = wheel_checks.run_all(artifacts.wheel, source, budget)
    checks.extend(inspected)
    if args.no_proof:
        return extra
    from buildlib import proof

    tools = [name for names in source.shipped_tools.values() for name in names]
    version = building.read_version(root)
    try:
        result = proof.prove(root, artifacts.wheel, version, tools)
    except proof.procs.ProcError as exc:
        checks.append(Check("proof", [str(exc)]))
        return extra
    checks.extend(result.checks)
    if result.installed is not None:
        extra["installed"] = result.installed.to_dict()
    return extra


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    root = args.root.resolve()
    if args.list:
        return list_tools(root, args.json)
    try:
        version = building.read_version(root)
    except (OSError, SyntaxError, ValueError, building.BuildError) as exc:
        print(f"error: cannot read the version: {exc}", file=sys.stderr)
        return 1
    source, checks = source_checks.run_all(root)
    extra: dict = {}
    if not args.check and source is not None and all_ok(checks):
        extra = build_and_prove(args, source, checks)
    elif not args.check:
        checks.append(Check("build (python -m build)", ["skipped: the static checks failed"]))
    result = report.build_report(version, source, checks, **extra)
    print(json.dumps(result, indent=2) if args.json else report.render(result))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
