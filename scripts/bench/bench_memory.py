"""Time per-turn memory selection over a store of 5,000 memories (target: 50 ms or less).

    python scripts/bench/bench_memory.py             # human-readable
    python scripts/bench/bench_memory.py --json      # the same numbers as one JSON object
    python scripts/bench/bench_memory.py --like      # keyword search on LIKE instead of FTS5

Builds a throw-away SQLite store with synthetic memories (Zipf-distributed words, some Chinese,
all priorities and categories, local-embedder vectors), then times
``MemoryManager.select_for_turn``: the first call (which builds the in-memory vector index), the
median of later calls, the median right after a memory was added (as extraction does after each
turn), and the parts of one call. Prints numbers only; it asserts no thresholds.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from timing import median_ms  # noqa: E402 - beside this script

from tea_agent_mini.memory.embedder import LocalEmbedder  # noqa: E402
from tea_agent_mini.memory.manager import MemoryManager  # noqa: E402
from tea_agent_mini.memory.model import CATEGORIES  # noqa: E402
from tea_agent_mini.memory.select import select_memories  # noqa: E402
from tea_agent_mini.store import Store  # noqa: E402
from tea_agent_mini.store.memories import MemoryRepository  # noqa: E402

# A Zipf-distributed vocabulary, like real text: a few words are everywhere, most are rare.
_COMMON_TEXT = (
    "deploy server python docker raspberry editor theme dark light coffee tea meeting report "
    "database backup schedule invoice client project release branch review test latency cache "
    "memory vector search config token budget summary garden travel flight hotel family music "
    "camera laptop keyboard language english chinese german spanish weekend monday"
)
COMMON = _COMMON_TEXT.split()
SYLLABLES = [a + b for a in "kmnstrvzpdfgh" for b in "aeiou"]
CJK = "用户喜欢绿茶咖啡项目部署服务器数据库备份周末会议报告语言中文英文旅行家庭音乐"
NOW = 1_750_000_000.0
DAY = 86400.0


Vocabulary = tuple[list[str], list[float]]


def vocabulary(rng: random.Random, size: int) -> Vocabulary:
    words = list(COMMON)
    while len(words) < size:
        words.append("".join(rng.choices(SYLLABLES, k=rng.randint(2, 4))))
    weights = [1.0 / (rank + 1) ** 1.07 for rank in range(len(words))]
    return words, weights


def sentence(rng: random.Random, vocab: Vocabulary) -> str:
    words, weights = vocab
    text = " ".join(rng.choices(words, weights, k=rng.randint(6, 14))).capitalize() + "."
    if rng.random() < 0.25:
        start = rng.randrange(len(CJK) - 8)
        text += " " + CJK[start : start + rng.randint(4, 8)]
    return text


def fill(manager: MemoryManager, count: int, rng: random.Random, vocab: Vocabulary) -> None:
    embedder = manager.embedder
    repo = manager.repo
    for _ in range(count):
        content = sentence(rng, vocab)
        (vector,) = embedder.embed([content])
        stamp = NOW - rng.uniform(0, 200) * DAY
        repo.add(
            content,
            priority=rng.choices(range(4), weights=(1, 4, 10, 10))[0],
            importance=rng.randint(1, 5),
            category=rng.choice(CATEGORIES),
            tags=rng.sample(COMMON, 2),
            embedding=vector,
            embedding_model=embedder.model_name,
            now=stamp,
        )


def run(count: int, runs: int, seed: int, like: bool = False) -> dict:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp, Store.open(Path(tmp) / "bench.db") as store:
        if like:  # as on an SQLite built without FTS5
            store.memories = MemoryRepository(store.db, use_fts=False)
        manager = MemoryManager(store, LocalEmbedder(256), clock=lambda: NOW)
        vocab = vocabulary(rng, 5000)
        start = time.perf_counter()
        fill(manager, count, rng, vocab)
        fill_s = time.perf_counter() - start
        queries = [sentence(rng, vocab) for _ in range(runs + 1)]

        start = time.perf_counter()
        first = manager.select_for_turn(queries[-1])
        cold_ms = (time.perf_counter() - start) * 1000.0

        pending = iter(queries)
        warm_ms = median_ms(lambda: manager.select_for_turn(next(pending)), runs)

        after_write = []
        for query in queries[:runs]:
            manager.add(sentence(rng, vocab))  # as extraction does after each turn
            start = time.perf_counter()
            manager.select_for_turn(query)
            after_write.append(time.perf_counter() - start)
        after_write_ms = statistics.median(after_write) * 1000.0

        repo = manager.repo
        memories = repo.active(NOW)
        query = queries[0]
        pool = manager.candidate_pool
        keyword = repo.keyword_scores(query, pool, NOW)
        vector = {i: s for s, i in manager.vectors.search(query, memories, pool)}
        parts = {
            "reload_all_rows_ms": median_ms(lambda: repo.list(limit=None, now=NOW), runs),
            "active_snapshot_ms": median_ms(lambda: repo.active(NOW), runs),
            "keyword_scores_ms": median_ms(lambda: repo.keyword_scores(query, pool, NOW), runs),
            "vector_search_ms": median_ms(
                lambda: manager.vectors.search(query, memories, pool), runs
            ),
            "score_and_pick_ms": median_ms(
                lambda: select_memories(memories, keyword, vector, NOW, manager.limits), runs
            ),
        }
        return {
            "python": platform.python_version(),
            "memories": count,
            "runs": runs,
            "keyword_backend": manager.repo.stats(NOW).keyword_backend,
            "fill_seconds": round(fill_s, 2),
            "selected": len(first),
            "select_first_call_ms": round(cold_ms, 2),
            "select_median_ms": round(warm_ms, 2),
            "select_after_a_write_ms": round(after_write_ms, 2),
            **{name: round(value, 2) for name, value in parts.items()},
        }


PARTS = (
    "active_snapshot_ms",
    "keyword_scores_ms",
    "vector_search_ms",
    "score_and_pick_ms",
    "reload_all_rows_ms",
)
# reload_all_rows is not part of a turn: it shows what the snapshot saves.


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=5000, help="memories in the store")
    parser.add_argument("--runs", type=int, default=15, help="timed calls (median reported)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--like", action="store_true", help="keyword search without FTS5")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    result = run(args.count, args.runs, args.seed, like=args.like)
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"Python {result['python']}, {result['memories']:,} memories, "
          f"keyword search on {result['keyword_backend']}, median of {result['runs']}")  # fmt: skip
    print(f"  select_for_turn, first call   {result['select_first_call_ms']:9.2f} ms")
    print(f"  select_for_turn               {result['select_median_ms']:9.2f} ms  (target <= 50)")
    print(f"  select_for_turn after a write {result['select_after_a_write_ms']:9.2f} ms")
    print("  its parts:")
    for name in PARTS:
        print(f"    {name[:-3].replace('_', ' '):27} {result[name]:9.2f} ms")
    print(f"  memories selected per turn    {result['selected']:9d}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
