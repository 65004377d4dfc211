"""Time per-turn memory selection over a store of 5,000 memories (target: 50 ms or less).

    python scripts/bench/bench_memory.py             # human-readable
    python scripts/bench/bench_memory.py --json      # the same numbers as one JSON object
    python scripts/bench/bench_memory.py --like      # keyword search on LIKE instead of FTS5

Builds a throw-away SQLite store with synthetic memories (Zipf-distributed words, some Chinese,
all priorities and categories, local-embedder vectors), then measures in fresh processes, as a
user pays it after a start: opening the store; the first ``MemoryManager.select_for_turn``
(which loads the vectors' sign codes and the keyword backend), and the same first call in a
second process after ``MemoryManager.warm()`` (what the server does in a worker thread when its
first client shows up); then, warm, the median of later calls, the median right after a memory
was added (as extraction does after each turn), and the parts of one call. Prints numbers only;
it asserts no thresholds.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))  # last: an installed tea_agent_mini (run.py's venv) comes first

from timing import fresh_env, median_ms, package_dir  # noqa: E402 - beside this script

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


def open_manager(db: Path, like: bool) -> MemoryManager:
    store = Store.open(db)
    if like:  # as on an SQLite built without FTS5
        store.memories = MemoryRepository(store.db, use_fts=False)
    return MemoryManager(store, LocalEmbedder(256), clock=lambda: NOW)


def queries(seed: int, count: int) -> list[str]:
    vocab = vocabulary(random.Random(seed), 5000)  # the vocabulary the store was filled from
    rng = random.Random(seed + 1)
    return [sentence(rng, vocab) for _ in range(count)]


def since_ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0


def measure_first(db: Path, seed: int, like: bool, warm: bool) -> dict:
    """In a fresh process: open the store, warm up if asked, then the first selection."""
    (query,) = queries(seed, 1)
    start = time.perf_counter()
    manager = open_manager(db, like)
    result = {"open_ms": since_ms(start)}
    if warm:
        start = time.perf_counter()
        manager.warm()
        result["warm_ms"] = since_ms(start)
    start = time.perf_counter()
    manager.select_for_turn(query)
    result["first_call_ms"] = since_ms(start)
    return result


def measure_warm(db: Path, runs: int, seed: int, like: bool) -> dict:
    """After a first call: the median call, the median call after a write, and the parts."""
    manager = open_manager(db, like)
    texts = queries(seed, 2 * runs + 1)
    manager.select_for_turn(texts[-1])
    pending = iter(texts)
    select_ms = median_ms(lambda: manager.select_for_turn(next(pending)), runs)
    after_write = []
    for query in texts[runs : 2 * runs]:
        manager.add(query + " (new)")  # as extraction does after each turn
        start = time.perf_counter()
        manager.select_for_turn(query)
        after_write.append(since_ms(start))

    # the steps of select_for_turn, one by one
    repo, vectors = manager.repo, manager.vectors
    pool_size, limits = manager.candidate_pool, manager.limits
    query = texts[0]
    keyword = repo.keyword_scores(query, limit=pool_size, now=NOW)
    vector = {i: s for s, i in vectors.search(query, pool_size, now=NOW, also=keyword)}
    relevant = keyword.keys() | vector.keys()
    pool = manager._selection_pool(relevant, NOW, True)
    parts = {
        "refresh_vectors_ms": median_ms(lambda: vectors.refresh(NOW), runs),
        "keyword_scores_ms": median_ms(
            lambda: repo.keyword_scores(query, limit=pool_size, now=NOW), runs
        ),
        "vector_search_ms": median_ms(
            lambda: vectors.search(query, pool_size, now=NOW, also=keyword), runs
        ),
        "selection_pool_ms": median_ms(lambda: manager._selection_pool(relevant, NOW, True), runs),
        "score_and_pick_ms": median_ms(
            lambda: select_memories(pool, keyword, vector, NOW, limits), runs
        ),
    }
    return {
        "keyword_backend": repo.stats(NOW).keyword_backend,
        "selected": len(manager.select_for_turn(query)),
        "pool": len(pool),
        "select_median_ms": select_ms,
        "select_after_a_write_ms": statistics.median(after_write),
        **parts,
    }


def in_fresh_process(db: Path, *args: str) -> dict:
    command = [sys.executable, __file__, "--measure", str(db), *args]
    result = subprocess.run(
        command, capture_output=True, text=True, env=fresh_env(), cwd=db.parent, timeout=900
    )
    if result.returncode != 0:
        raise RuntimeError(result.stderr.strip()[-800:])
    return json.loads(result.stdout.strip().splitlines()[-1])


def run(count: int, runs: int, seed: int, like: bool = False) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        rng = random.Random(seed)
        vocab = vocabulary(rng, 5000)
        start = time.perf_counter()
        with Store.open(db) as store:
            fill(MemoryManager(store, LocalEmbedder(256), clock=lambda: NOW), count, rng, vocab)
        fill_s = time.perf_counter() - start
        options = ["--seed", str(seed), *(["--like"] if like else [])]
        cold = in_fresh_process(db, "--first", *options)
        warmed = in_fresh_process(db, "--first", "--warm", *options)
        warm = in_fresh_process(db, "--runs", str(runs), *options)
    rounded = {name: round(value, 2) for name, value in warm.items() if name.endswith("_ms")}
    return {
        "python": platform.python_version(),
        "package": str(package_dir()),
        "memories": count,
        "runs": runs,
        "keyword_backend": warm["keyword_backend"],
        "fill_seconds": round(fill_s, 2),
        "selected": warm["selected"],
        "pool": warm["pool"],
        "open_store_ms": round(cold["open_ms"], 2),
        "select_first_call_ms": round(cold["first_call_ms"], 2),
        "warm_up_ms": round(warmed["warm_ms"], 2),
        "select_first_call_after_warm_up_ms": round(warmed["first_call_ms"], 2),
        **rounded,
    }


PARTS = (
    "refresh_vectors_ms",
    "keyword_scores_ms",
    "vector_search_ms",
    "selection_pool_ms",
    "score_and_pick_ms",
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=5000, help="memories in the store")
    parser.add_argument("--runs", type=int, default=15, help="timed calls (median reported)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--like", action="store_true", help="keyword search without FTS5")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)  # the fresh processes
    parser.add_argument("--first", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--warm", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.measure:
        if args.first:
            print(json.dumps(measure_first(args.measure, args.seed, args.like, args.warm)))
        else:
            print(json.dumps(measure_warm(args.measure, args.runs, args.seed, args.like)))
        return 0
    result = run(args.count, args.runs, args.seed, like=args.like)
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"Python {result['python']}, {result['memories']:,} memories, "
          f"keyword search on {result['keyword_backend']}, median of {result['runs']}")  # fmt: skip
    print("  after a start (fresh processes):")
    print(f"    open the store              {result['open_store_ms']:9.2f} ms")
    print(f"    first select_for_turn       {result['select_first_call_ms']:9.2f} ms")
    print(f"    warm() (the server's)       {result['warm_up_ms']:9.2f} ms")
    print(f"    first call after warm()     {result['select_first_call_after_warm_up_ms']:9.2f} ms")
    print("  later calls:")
    print(f"    select_for_turn             {result['select_median_ms']:9.2f} ms  (target <= 50)")
    print(f"    right after a write         {result['select_after_a_write_ms']:9.2f} ms")
    print("    its parts:")
    for name in PARTS:
        print(f"      {name[:-3].replace('_', ' '):25} {result[name]:9.2f} ms")
    print(f"  memories selected per turn    {result['selected']:9d} "
          f"(from a pool of {result['pool']})")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
