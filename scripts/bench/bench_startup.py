"""Start-up costs: what importing tea_agent_mini and starting its CLI add to a bare interpreter.

    python scripts/bench/bench_startup.py            # human-readable
    python scripts/bench/bench_startup.py --json     # the same numbers as one JSON object

Wall times of fresh interpreters (median of ``--runs``, the commands interleaved), each started
from an empty directory: ``python -c pass``, ``python -c "import tea_agent_mini"``,
``python -c "from tea_agent_mini import Agent"`` and ``python -m tea_agent_mini --version``.
The import figures are those medians minus the bare interpreter's, i.e. what a user pays on top
of starting Python; no ``-X importtime`` (it leaves out what the interpreter imported before,
which depends on the environment). Run it through ``run.py`` to measure the installed wheel in a
clean venv. Also the wheel in dist/, if built. Prints numbers only; it asserts no thresholds.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))  # last: an installed tea_agent_mini (run.py's venv) comes first

from timing import fresh_env, installed, package_dir  # noqa: E402 - beside this script

PACKAGE = "tea_agent_mini"
COMMANDS = {
    "bare": ("-c", "pass"),
    "import": ("-c", f"import {PACKAGE}"),
    "import_agent": ("-c", f"from {PACKAGE} import Agent"),
    "cli_version": ("-m", PACKAGE, "--version"),
}


def wall_ms(args: tuple[str, ...], cwd: str) -> float:
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, *args], cwd=cwd, env=fresh_env(), capture_output=True, timeout=120
    )
    elapsed = (time.perf_counter() - started) * 1000.0
    if result.returncode != 0:
        raise RuntimeError(result.stderr.decode(errors="replace").strip()[-500:])
    return elapsed


def latest_wheel() -> Path | None:
    version_file = (ROOT / PACKAGE / "_version.py").read_text(encoding="utf-8")
    match = re.search(r"__version__\s*=\s*['\"]([^'\"]+)", version_file)
    wheel = ROOT / "dist" / f"{PACKAGE}-{match.group(1) if match else '?'}-py3-none-any.whl"
    return wheel if wheel.is_file() else None


def run(runs: int) -> dict:
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    with tempfile.TemporaryDirectory() as empty:  # no tea_agent_mini in the working directory
        for args in COMMANDS.values():  # once unmeasured, so every file is in the OS cache
            wall_ms(args, empty)
        for _ in range(runs):
            for name, args in COMMANDS.items():
                times[name].append(wall_ms(args, empty))
    median = {name: statistics.median(values) for name, values in times.items()}
    wheel = latest_wheel()
    return {
        "python": platform.python_version(),
        "package": str(package_dir()),
        "installed": installed(),
        "runs": runs,
        "python_bare_ms": round(median["bare"], 1),
        "import_ms": round(median["import"] - median["bare"], 1),
        "import_agent_ms": round(median["import_agent"] - median["bare"], 1),
        "cli_version_ms": round(median["cli_version"], 1),
        "wheel_bytes": wheel.stat().st_size if wheel else None,
        "wheel": wheel.name if wheel else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="fresh interpreters per command")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    result = run(args.runs)
    if args.json:
        print(json.dumps(result))
        return 0
    source = "installed" if result["installed"] else "source tree"
    print(f"Python {result['python']}, {PACKAGE} from {result['package']} ({source}), "
          f"median of {args.runs} fresh interpreters")  # fmt: skip
    print(f"  python -c pass                 {result['python_bare_ms']:7.1f} ms (wall)")
    print(f"  import {PACKAGE}          {result['import_ms']:7.1f} ms more")
    print(f"  from {PACKAGE} import Agent {result['import_agent_ms']:5.1f} ms more")
    print(f"  {PACKAGE} --version       {result['cli_version_ms']:7.1f} ms (wall, python -m)")
    if result["wheel_bytes"] is None:
        print("  wheel                          (none in dist/: run build_mini.py)")
    else:
        print(f"  wheel {result['wheel']}  {result['wheel_bytes'] / 1000:.1f} KB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
