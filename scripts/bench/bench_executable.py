"""The compiled executable (``python build_nuitka.py``): size, first and warm start to /health,
idle memory.

    python scripts/bench/bench_executable.py                 # build_nuitka_dist/tea-agent-mini
    python scripts/bench/bench_executable.py --exe PATH      # another build
    python scripts/bench/bench_executable.py --json

First start: a fresh cache dir (``XDG_CACHE_HOME``), so the onefile unpacks its payload. Warm
start: the same cache dir again (median of ``--runs``). Idle RSS adds the onefile bootstrap
parent and the server it starts. When no executable is built yet it says so and exits 0, so the
combined runner stays usable on machines without Nuitka. Numbers only, no thresholds.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
EXE_NAME = "tea-agent-mini.exe" if sys.platform.startswith("win") else "tea-agent-mini"
DEFAULT_EXE = ROOT / "build_nuitka_dist" / EXE_NAME
START_TIMEOUT = 60.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def rss_mb(pid: int) -> float:
    """VmRSS of ``pid`` and its children (the onefile parent starts the real server)."""
    total = 0
    for proc in [pid, *children(pid)]:
        try:
            for line in Path(f"/proc/{proc}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


def children(pid: int) -> list[int]:
    try:
        listed = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []
    found = [int(child) for child in listed]
    return found + [grand for child in found for grand in children(child)]


def wait_healthy(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.perf_counter() + START_TIMEOUT
    while time.perf_counter() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the executable exited with status {process.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=1) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            time.sleep(0.002)
    raise RuntimeError(f"no 200 from {url} within {START_TIMEOUT:.0f} s")


def serve_once(exe: Path, env: dict[str, str], measure_rss: bool) -> tuple[float, float | None]:
    """Seconds from spawning ``serve`` to the first 200 on /health, and the idle RSS after."""
    port = free_port()
    started = time.perf_counter()
    process = subprocess.Popen(
        [str(exe), "serve", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        cwd=env["TEA_AGENT_HOME"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_healthy(f"http://127.0.0.1:{port}/health", process)
        seconds = time.perf_counter() - started
        rss = None
        if measure_rss and sys.platform.startswith("linux"):
            time.sleep(1.0)
            rss = rss_mb(process.pid)
        return seconds, rss
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def bench(exe: Path, runs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="tea-exe-bench-") as tmp:
        home, cache = Path(tmp) / "home", Path(tmp) / "cache"
        home.mkdir()
        (home / "config.yaml").write_text(
            "main_model:\n  api_url: http://127.0.0.1:9/v1\n  model_name: none\n",
            encoding="utf-8",
        )
        env = {**os.environ, "TEA_AGENT_HOME": str(home), "XDG_CACHE_HOME": str(cache)}
        first, _ = serve_once(exe, env, measure_rss=False)
        warm = [serve_once(exe, env, measure_rss=index == 0) for index in range(runs)]
    return {
        "built": True,
        "executable": str(exe),
        "size_mb": round(exe.stat().st_size / 1e6, 1),
        "first_start_s": round(first, 3),
        "warm_start_s_median": round(statistics.median(s for s, _ in warm), 3),
        "idle_rss_mb": round(warm[0][1], 1) if warm[0][1] is not None else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--exe", type=Path, default=DEFAULT_EXE, help="the executable to time")
    parser.add_argument("--runs", type=int, default=3, help="warm starts to time (default 3)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    if not args.exe.is_file():
        result: dict[str, Any] = {"built": False, "how": "python build_nuitka.py"}
    else:
        result = bench(args.exe, max(1, args.runs))
    if args.json:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            print(f"{key:<22} {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
