"""The one timing helper the benchmarks share (imported by the bench_*.py scripts beside it)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_ms(func: Callable[[], object], runs: int) -> float:
    """The median wall time of ``runs`` calls of ``func``, in milliseconds."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000.0
