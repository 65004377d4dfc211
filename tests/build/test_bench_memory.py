"""scripts/bench/bench_memory.py runs end to end at a small size and reports every figure."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "scripts" / "bench" / "bench_memory.py"


def test_the_memory_benchmark_runs_and_reports_its_figures() -> None:
    result = subprocess.run(
        [sys.executable, str(BENCH), "--count", "300", "--runs", "2", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["memories"] == 300 and 0 < report["selected"] <= 30
    assert 0 < report["pool"] <= 300
    timings = {name: value for name, value in report.items() if name.endswith("_ms")}
    assert set(timings) == {
        *("open_store_ms", "select_first_call_ms", "warm_up_ms"),
        *("select_first_call_after_warm_up_ms", "select_median_ms", "select_after_a_write_ms"),
        *("refresh_vectors_ms", "keyword_scores_ms", "vector_search_ms", "selection_pool_ms"),
        "score_and_pick_ms",
    }
    assert all(isinstance(value, float) for value in timings.values())  # some round to 0.0
    assert report["select_first_call_ms"] > 0 and report["select_median_ms"] > 0
