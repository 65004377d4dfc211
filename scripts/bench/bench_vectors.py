"""Time top-k cosine search in pure Python: VectorIndex against the plain top_k scan.

    python scripts/bench/bench_vectors.py            # 10,000 x 256, top-10, human-readable
    python scripts/bench/bench_vectors.py --json     # the same numbers as one JSON object

Prints numbers only; it asserts no thresholds.
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))  # last: an installed tea_agent_mini (run.py's venv) comes first

from timing import median_ms  # noqa: E402 - beside this script

from tea_agent_mini.vectors import VectorIndex, normalize, pack, top_k, unpack  # noqa: E402


def random_unit_vectors(rng: random.Random, count: int, dim: int) -> list[list[float]]:
    return [normalize([rng.gauss(0.0, 1.0) for _ in range(dim)]) for _ in range(count)]


def run(count: int, dim: int, k: int, runs: int, seed: int) -> dict:
    rng = random.Random(seed)
    vectors = random_unit_vectors(rng, count, dim)
    queries = random_unit_vectors(rng, runs, dim)

    start = time.perf_counter()
    blobs = [pack(vec) for vec in vectors]
    items = [(n, unpack(blob)) for n, blob in enumerate(blobs)]
    unpack_ms = (time.perf_counter() - start) * 1000.0

    start = time.perf_counter()
    index = VectorIndex(dim)
    for key, vec in items:
        index.add(key, vec)
    build_ms = (time.perf_counter() - start) * 1000.0

    pending = iter(queries)
    index_ms = median_ms(lambda: index.search(next(pending), k), runs)
    pending = iter(queries)
    top_k_ms = median_ms(lambda: top_k(next(pending), items, k), runs)

    agree = all(
        [key for _, key in index.search(q, k)] == [key for _, key in top_k(q, items, k)]
        for q in queries[:3]
    )
    return {
        "python": platform.python_version(),
        "sumprod": hasattr(math, "sumprod"),
        "count": count,
        "dim": dim,
        "k": k,
        "runs": runs,
        "pack_unpack_ms": round(unpack_ms, 2),
        "index_build_ms": round(build_ms, 2),
        "index_search_ms": round(index_ms, 2),
        "top_k_ms": round(top_k_ms, 2),
        "results_agree": agree,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000, help="vectors in the index")
    parser.add_argument("--dim", type=int, default=256, help="dimensions per vector")
    parser.add_argument("-k", type=int, default=10, help="results per search")
    parser.add_argument("--runs", type=int, default=7, help="searches timed (median shown)")
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    result = run(args.count, args.dim, args.k, args.runs, args.seed)
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"Python {result['python']} (math.sumprod: {'yes' if result['sumprod'] else 'no'})")
    print(f"{args.count} x {args.dim}-dim float32 vectors, top-{args.k}, median of {args.runs}")
    print(f"  pack + unpack all      {result['pack_unpack_ms']:9.2f} ms")
    print(f"  VectorIndex build      {result['index_build_ms']:9.2f} ms")
    print(f"  VectorIndex.search     {result['index_search_ms']:9.2f} ms")
    print(f"  top_k (plain scan)     {result['top_k_ms']:9.2f} ms")
    print(f"  same results           {'yes' if result['results_agree'] else 'NO'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
