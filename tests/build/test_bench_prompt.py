"""scripts/bench/bench_prompt.py reports a first request per window, within the targets."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "scripts" / "bench" / "bench_prompt.py"


def test_the_prompt_benchmark_reports_each_window() -> None:
    result = subprocess.run(
        [sys.executable, str(BENCH), "--json"], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    rows = {row["window"]: row for row in json.loads(result.stdout)["windows"]}
    assert rows[8192]["profile"] == "compact" and rows[0]["profile"] == "full"
    assert rows[8192]["request_tokens"] <= 3000 and rows[0]["request_tokens"] <= 6000
    assert all(row["prompt_share"] <= 0.4 for row in rows.values() if row["window"])
    assert rows[0]["every_tool_full_tokens"] > 4 * rows[0]["tools_tokens"]
