"""scripts/bench/bench_request.py runs end to end at a small size and reports every figure."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "scripts" / "bench" / "bench_request.py"


def test_the_request_benchmark_runs_and_reports_its_figures() -> None:
    small = ["--messages", "400", "--memories", "300", "--runs", "2", "--repeats", "1"]
    result = subprocess.run(
        [sys.executable, str(BENCH), *small, "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    request, first = report["request"], report["first_turn"]
    assert request["history_messages"] == 40  # the last 10 turns of 4 messages, not all 400
    assert request["request_messages"] > 1
    timings = {name: value for name, value in request.items() if name.endswith("_ms")}
    assert set(timings) == {
        *("first_build_ms", "request_build_ms", "per_iteration_build_ms", "history_read_ms"),
        *("memory_block_ms", "skills_ms", "skills_cached_ms", "topic_read_ms"),
        *("topic_prompt_ms", "l2_l3_read_ms"),
    }
    assert all(isinstance(value, float) for value in timings.values())  # some round to 0.0
    assert timings["first_build_ms"] > 0 and timings["request_build_ms"] > 0
    assert first["with_memories_ms"] > 0 and first["without_memories_ms"] > 0
