"""Start-up costs: import time of tea_agent_mini, CLI --version wall time, wheel size in dist/.

    python scripts/bench/bench_startup.py            # human-readable
    python scripts/bench/bench_startup.py --json     # the same numbers as one JSON object

Runs the package from this checkout in fresh interpreters (median of --runs). Prints numbers
only; it asserts no thresholds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "tea_agent_mini"
IMPORTTIME_LINE = re.compile(r"^import time:\s+(\d+)\s+\|\s+(\d+)\s+\|(\s*)(\S+)\s*$")


def fresh_python(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP")}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def import_time_us(module: str) -> tuple[int, list[tuple[int, str]]]:
    """Cumulative microseconds for ``import module`` and its heaviest direct imports."""
    result = fresh_python("-X", "importtime", "-c", f"import {module}")
    if result.returncode != 0:
        raise RuntimeError(result.stderr.strip()[-500:])
    total = 0
    children: list[tuple[int, str]] = []
    for line in result.stderr.splitlines():
        match = IMPORTTIME_LINE.match(line)
        if not match:
            continue
        cumulative, indent, name = int(match.group(2)), len(match.group(3)), match.group(4)
        if name == module and indent == 1:
            total = cumulative
        elif name.startswith(module + ".") and indent == 3:
            children.append((cumulative, name))
    return total, sorted(children, reverse=True)[:5]


def wall_ms(*args: str) -> float:
    started = time.perf_counter()
    result = fresh_python(*args)
    elapsed = (time.perf_counter() - started) * 1000.0
    if result.returncode != 0:
        raise RuntimeError(result.stderr.strip()[-500:])
    return elapsed


def latest_wheel() -> Path | None:
    version_file = (ROOT / PACKAGE / "_version.py").read_text(encoding="utf-8")
    match = re.search(r"__version__\s*=\s*['\"]([^'\"]+)", version_file)
    wheel = ROOT / "dist" / f"{PACKAGE}-{match.group(1) if match else '?'}-py3-none-any.whl"
    return wheel if wheel.is_file() else None


def run(runs: int) -> dict:
    imports = [import_time_us(PACKAGE) for _ in range(runs)]
    heaviest = imports[-1][1]
    bare = [wall_ms("-c", "pass") for _ in range(runs)]
    version = [wall_ms("-m", PACKAGE, "--version") for _ in range(runs)]
    wheel = latest_wheel()
    return {
        "python": platform.python_version(),
        "runs": runs,
        "import_ms": round(statistics.median(t for t, _ in imports) / 1000.0, 2),
        "import_heaviest": {name: round(us / 1000.0, 2) for us, name in heaviest},
        "python_bare_ms": round(statistics.median(bare), 1),
        "cli_version_ms": round(statistics.median(version), 1),
        "wheel_bytes": wheel.stat().st_size if wheel else None,
        "wheel": wheel.name if wheel else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="fresh interpreters per figure")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    result = run(args.runs)
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"Python {result['python']}, median of {args.runs} fresh interpreters")
    print(f"  import {PACKAGE:<18} {result['import_ms']:9.2f} ms (-X importtime, cumulative)")
    for name, ms in result["import_heaviest"].items():
        print(f"    {name:<30} {ms:7.2f} ms")
    print(f"  python -c pass                {result['python_bare_ms']:9.1f} ms (wall)")
    print(f"  {PACKAGE} --version      {result['cli_version_ms']:9.1f} ms (wall, python -m)")
    if result["wheel_bytes"] is None:
        print("  wheel                         (none in dist/: run build_mini.py)")
    else:
        print(f"  wheel {result['wheel']}  {result['wheel_bytes'] / 1000:.1f} KB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
