"""Run every benchmark in scripts/bench/ in a clean venv and print one combined table (or JSON).

    python scripts/bench/run.py                      # all bench_*.py, one table
    python scripts/bench/run.py --json               # {"bench_x": {...}, ...} plus the machine
    python scripts/bench/run.py --only startup --only vectors
    python scripts/bench/run.py --venv ~/.cache/tea-bench     # keep the venv there, reuse it
    python scripts/bench/run.py --here               # this interpreter as it is (quick, not clean)

The figures are what a user pays, so by default they are measured the way a user runs the
package: a new venv in a temporary directory (``python -m venv``), the checkout installed into
it as a user installs it (``pip install <checkout>``: not editable, the runtime dependencies
only, no test extras), and each ``bench_<name>.py`` started by that venv's interpreter in a fresh
process, from outside the checkout and without PYTHONPATH, so that it imports the installed
wheel (the benches only borrow the scripted model server from the checkout's tests/fakes).
With ``--venv PATH`` the venv is created there once and reused; the checkout is reinstalled into
it on every run. ``--here`` skips all that and runs the benches with this interpreter and
whatever tea_agent_mini it imports.

Each bench prints, with ``--json``, one JSON object; this runner flattens nested keys (``a.b``)
and reports a benchmark that fails or prints no JSON as an error row (exit status 1). No
thresholds.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
# what the host line says once instead of every benchmark repeating it
HOST_KEYS = ("python", "machine", "package")
DESCRIBE = """\
import json, os, platform
import tea_agent_mini
print(json.dumps({
    "python": platform.python_version(),
    "implementation": platform.python_implementation(),
    "machine": platform.machine(),
    "system": platform.system(),
    "cpus": os.cpu_count(),
    "package": os.path.dirname(os.path.realpath(tea_agent_mini.__file__)),
}))
"""


class Interpreter:
    """The Python that runs the benches, with the environment and directory it runs them in."""

    def __init__(self, python: Path, env: dict[str, str], cwd: Path, origin: str) -> None:
        self.python, self.env, self.cwd, self.origin = python, env, cwd, origin

    def run(self, args: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.python), *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=self.cwd,
            env=self.env,
        )


def venv_python(venv: Path) -> Path:
    if sys.platform.startswith("win"):
        return venv / "Scripts" / "python.exe"
    return venv / "bin" / "python"


def clean_venv(venv: Path, workdir: Path) -> Interpreter:
    """``venv`` (created when missing) with the checkout installed into it, as a user would."""
    python = venv_python(venv)
    if not python.exists():
        print(f"creating a venv in {venv} ...", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    print(f"pip install {ROOT} (not editable) ...", file=sys.stderr, flush=True)
    install = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run([*install, str(ROOT)], check=True, cwd=workdir)
    drop = ("PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "VIRTUAL_ENV")
    env = {key: value for key, value in os.environ.items() if key not in drop}
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # keep the checkout's scripts/ free of __pycache__
    return Interpreter(
        python, env, workdir, "a clean venv (pip install of the checkout, not editable)"
    )


def this_interpreter() -> Interpreter:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return Interpreter(Path(sys.executable), env, ROOT, "this interpreter (--here)")


def discover(only: list[str] | None = None) -> list[Path]:
    found = sorted(HERE.glob("bench_*.py"))
    if only:
        wanted = {name.removeprefix("bench_").removesuffix(".py") for name in only}
        found = [path for path in found if path.stem.removeprefix("bench_") in wanted]
    return found


def run_one(path: Path, python: Interpreter, timeout: float) -> dict[str, Any]:
    """The benchmark's JSON object, or ``{"error": ...}``; ``_seconds`` is its wall time."""
    started = time.perf_counter()
    try:
        result = python.run([str(path), "--json"], timeout)
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
        if not (metric in HOST_KEYS and value == host.get(metric))
    ]
    width_b = max([len("benchmark"), *(len(r[0]) for r in rows)])
    width_m = max([len("metric"), *(len(r[1]) for r in rows)])
    lines = [f"{'benchmark':<{width_b}}  {'metric':<{width_m}}  value"]
    lines.append("-" * (width_b + width_m + 20))
    lines += [f"{b:<{width_b}}  {m:<{width_m}}  {v}" for b, m, v in rows]
    return "\n".join(lines)


def describe(python: Interpreter) -> dict[str, Any]:
    """The interpreter the benches ran with, the machine, and the tea_agent_mini they import."""
    result = python.run(["-c", DESCRIBE], 120)
    if result.returncode != 0:
        raise SystemExit(f"{python.python} cannot import tea_agent_mini: {result.stderr[-500:]}")
    return {**json.loads(result.stdout), "interpreter": str(python.python), "how": python.origin}


def run_all(paths: list[Path], python: Interpreter, args: argparse.Namespace) -> int:
    host = describe(python)
    results = {}
    for path in paths:
        if not args.json:
            print(f"running {path.name} ...", file=sys.stderr, flush=True)
        results[path.stem] = run_one(path, python, args.timeout)
    failed = [name for name, data in results.items() if "error" in data]
    if args.json:
        print(json.dumps({"machine": host, "results": results}, indent=2))
    else:
        print(
            f"{host['implementation']} {host['python']} on {host['system']} {host['machine']}, "
            f"{host['cpus']} CPUs; {host['how']}: tea_agent_mini from {host['package']}\n"
            "(python scripts/bench/run.py)\n"
        )
        print(render(results, host))
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--only", action="append", help="run only bench_<NAME>.py (repeatable)")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per benchmark")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--venv", type=Path, help="create (once) and reuse the clean venv here")
    where.add_argument("--here", action="store_true", help="no clean venv: this interpreter")
    args = parser.parse_args(argv)
    paths = discover(args.only)
    if not paths:
        print("no matching scripts/bench/bench_*.py", file=sys.stderr)
        return 1
    if args.here:
        return run_all(paths, this_interpreter(), args)
    with tempfile.TemporaryDirectory(prefix="tea-bench-") as tmp:
        venv = args.venv.expanduser().resolve() if args.venv else Path(tmp) / "venv"
        return run_all(paths, clean_venv(venv, Path(tmp)), args)


if __name__ == "__main__":
    raise SystemExit(main())
