"""Run every benchmark in scripts/bench/ and print one combined table (or JSON).

    python scripts/bench/run.py                      # all bench_*.py, one table
    python scripts/bench/run.py --json               # {"bench_x": {...}, ...} plus the machine
    python scripts/bench/run.py --only startup --only vectors

Each ``bench_<name>.py`` prints its numbers and, with ``--json``, one JSON object; this runner
starts each in its own interpreter with ``--json``, flattens nested keys (``a.b``), and reports
a benchmark that fails or prints no JSON as an error row (exit status 1). No thresholds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def discover(only: list[str] | None = None) -> list[Path]:
    found = sorted(HERE.glob("bench_*.py"))
    if only:
        wanted = {name.removeprefix("bench_").removesuffix(".py") for name in only}
        found = [path for path in found if path.stem.removeprefix("bench_") in wanted]
    return found


def run_one(path: Path, timeout: float) -> dict[str, Any]:
    """The benchmark's JSON object, or ``{"error": ...}``; ``_seconds`` is its wall time."""
    started = time.perf_counter()
    try:
        result = subprocess.run(
            [sys.executable, str(path), "--json"],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=HERE.parents[1],
            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    seconds = round(time.perf_counter() - started, 1)
    if result.returncode != 0:
        tail = (result.stderr or result.stdout).strip().splitlines()[-3:]
        return {"error": f"exit {result.returncode}: {' | '.join(tail)}", "_seconds": seconds}
    data = parse_json(result.stdout)
    if data is None:
        return {"error": "printed no JSON object", "_seconds": seconds}
    return {**data, "_seconds": seconds}


def parse_json(text: str) -> dict[str, Any] | None:
    """The whole output as JSON, else its last line (a benchmark may log before its result)."""
    for candidate in (text.strip(), *(text.strip().splitlines()[-1:])):
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def flatten(data: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    rows: list[tuple[str, Any]] = []
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            rows.extend(flatten(value, name + "."))
        else:
            rows.append((name, value))
    return rows


def shown(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.2f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    if isinstance(value, (list, tuple)):
        return json.dumps(value)[:60]
    return str(value)


def render(results: dict[str, dict[str, Any]], host: dict[str, Any]) -> str:
    # what every benchmark repeats about the host is said once, in the heading
    rows = [
        (bench, metric, shown(value))
        for bench, data in results.items()
        for metric, value in flatten(data)
        if not (metric in ("python", "machine") and value == host[metric])
    ]
    width_b = max([len("benchmark"), *(len(r[0]) for r in rows)])
    width_m = max([len("metric"), *(len(r[1]) for r in rows)])
    lines = [f"{'benchmark':<{width_b}}  {'metric':<{width_m}}  value"]
    lines.append("-" * (width_b + width_m + 20))
    lines += [f"{b:<{width_b}}  {m:<{width_m}}  {v}" for b, m, v in rows]
    return "\n".join(lines)


def machine() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "machine": platform.machine(),
        "system": platform.system(),
        "cpus": os.cpu_count(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--only", action="append", help="run only bench_<NAME>.py (repeatable)")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per benchmark")
    args = parser.parse_args(argv)
    paths = discover(args.only)
    if not paths:
        print("no matching scripts/bench/bench_*.py", file=sys.stderr)
        return 1
    results = {}
    for path in paths:
        if not args.json:
            print(f"running {path.name} ...", file=sys.stderr, flush=True)
        results[path.stem] = run_one(path, args.timeout)
    failed = [name for name, data in results.items() if "error" in data]
    if args.json:
        print(json.dumps({"machine": machine(), "results": results}, indent=2))
    else:
        info = machine()
        print(
            f"{info['implementation']} {info['python']} on {info['system']} {info['machine']}, "
            f"{info['cpus']} CPUs  (python scripts/bench/run.py)\n"
        )
        print(render(results, info))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
