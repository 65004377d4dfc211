"""What one model request costs in a big home: 100,000 messages in a topic, 50,000 memories.

    python scripts/bench/bench_request.py            # human-readable
    python scripts/bench/bench_request.py --json     # the same numbers as one JSON object
    python scripts/bench/bench_request.py --messages 20000 --memories 10000   # smaller

Builds a throw-away home (bulk inserts: one topic of user turns with a tool call, a tool output
and an answer; its L2 ring and L3 summary; memories with local-embedder vectors), then measures
what a user pays:

(a) building one model request through the real path, in a fresh process: ``Runtime.session``,
    the history window read from the store, the tools offered and ``Runtime.build_context``
    (system prompt, tools, skills, memories, L3/L2/L1 history): the first one after the start
    (the toolkit already loaded, as every front end does at start), then warm, median of
    ``--runs``. Also a later request of the same turn (the turn's context block is kept), and
    the parts: the history read, memory selection, skills, the topic read, L2/L3.
(b) the first turn after a fresh process start, run in a subprocess against the scripted model
    server (tests/fakes): with all the memories and with none (a copy of the home with the
    memories deleted); the difference is what the memories add to the first answer.

Prints numbers only; it asserts no thresholds (targets: (a) <= 20 ms, (b) extra <= 150 ms).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))  # last: an installed tea_agent_mini (run.py's venv) comes first

from timing import fresh_env, median_ms, package_dir  # noqa: E402 - beside this script

WORDS = [
    *("parser", "database", "server", "scheduler", "memory", "exporter", "config", "token"),
    *("budget", "summary", "cache", "test", "release", "branch", "review", "latency", "deploy"),
    *("docker", "python", "module", "function", "class", "error", "fix", "build", "garden"),
    *("coffee", "tea", "meeting", "report", "backup", "invoice", "client", "travel", "music"),
]
SYLLABLES = [a + b for a in "kmnstrvzpdfgh" for b in "aeiou"]
CJK = "用户喜欢绿茶咖啡项目部署服务器数据库备份周末会议报告语言中文英文旅行家庭音乐"
QUERY = "how do I deploy the database server with docker and keep the backup schedule"
MODEL_NAME = "bench-model"


def text(rng: random.Random, vocab: list[str], words: int) -> str:
    body = " ".join(rng.choices(vocab, k=words))
    if rng.random() < 0.2:
        start = rng.randrange(len(CJK) - 10)
        body += " " + CJK[start : start + 10]
    return body


def vocabulary(rng: random.Random, size: int = 3000) -> list[str]:
    words = list(WORDS)
    while len(words) < size:
        words.append("".join(rng.choices(SYLLABLES, k=rng.randint(2, 4))))
    return words


# -- building the home ------------------------------------------------------------------------


def message_rows(topic: str, count: int, rng: random.Random, vocab: list[str]) -> list[tuple]:
    """Rows for ``messages``: turns of user, assistant tool call, tool output, answer."""
    rows: list[tuple] = []
    stamp = time.time() - count
    for turn in range(count // 4):
        call = json.dumps([{"id": f"c{turn}", "name": "toolkit_file", "arguments": "{}"}])
        output = text(rng, vocab, rng.randint(40, 300))
        for role, content, calls, call_id in (
            ("user", text(rng, vocab, rng.randint(8, 60)), None, None),
            ("assistant", None, call, None),
            ("tool", output, None, f"c{turn}"),
            ("assistant", text(rng, vocab, rng.randint(20, 150)), None, None),
        ):
            stamp += 1.0
            rows.append((topic, role, content, calls, call_id, stamp))
    return rows


def fill_messages(store: Any, topic: str, count: int, rng: random.Random) -> None:
    rows = message_rows(topic, count, rng, vocabulary(rng))
    with store.transaction() as tx:
        for start in range(0, len(rows), 5000):
            for row in rows[start : start + 5000]:
                tx.execute(
                    "INSERT INTO messages (topic_id, role, content, tool_calls, tool_call_id, "
                    "created_at) VALUES (?, ?, ?, ?, ?, ?)",
                    row,
                )


def fill_levels(store: Any, topic: str) -> None:
    """The topic's L2 ring (50 pairs) and L3 summary, as the background upkeep leaves them."""
    from tea_agent_mini.context.pairs import new_pairs
    from tea_agent_mini.context.records import ContextRecords, TopicSummary
    from tea_agent_mini.context.summary import RING_LIMIT

    records = ContextRecords(store.db)
    pairs = new_pairs(store.messages.of_topic(topic, limit=4 * (RING_LIMIT + 12)), 0)
    ring = pairs[-RING_LIMIT - 10 : -10]  # the last turns are not recorded yet
    records.save_pairs(topic, ring, time.time())
    summary = TopicSummary(
        topic_id=topic,
        content="## Decisions\n" + "- a decision about the parser\n" * 40,
        tool_counts={"toolkit_file": (1000, 3)},
        pairs_covered=1000,
        last_message_id=ring[0].user_message_id - 1,
    )
    records.apply_summary(summary, [])


def fill_memories(store: Any, count: int, rng: random.Random) -> None:
    """``count`` memories with local-embedder vectors, through the repository (one transaction)."""
    from tea_agent_mini.memory.embedder import LocalEmbedder
    from tea_agent_mini.memory.model import CATEGORIES

    embedder = LocalEmbedder(256)
    vocab = vocabulary(rng, 5000)
    weights = [1.0 / (rank + 1) ** 1.07 for rank in range(len(vocab))]
    now = time.time()
    with store.transaction():
        for n in range(count):
            content = " ".join(rng.choices(vocab, weights, k=rng.randint(6, 14))) + f" #{n}"
            (vector,) = embedder.embed([content])
            store.memories.add(
                content,
                priority=rng.choices(range(4), weights=(1, 4, 10, 10))[0],
                importance=rng.randint(1, 5),
                category=rng.choice(CATEGORIES),
                embedding=vector,
                embedding_model=embedder.model_name,
                now=now - rng.uniform(0, 200) * 86400.0,
            )


def write_config(home: Path, api_url: str) -> None:
    config = {
        "main_model": {"api_url": api_url, "model_name": MODEL_NAME, "api_key": "sk-bench"},
        "agent": {"workspace": str(home / "workspace")},
    }
    (home / "workspace").mkdir(exist_ok=True)
    # JSON is YAML too
    (home / "config.yaml").write_text(json.dumps(config, indent=2), encoding="utf-8")


def build_home(home: Path, messages: int, memories: int, seed: int) -> tuple[str, dict]:
    from tea_agent_mini.store import Store

    rng = random.Random(seed)
    timings = {}
    with Store.open(home / "chat.db") as store:
        topic = store.topics.create(title="bench").id
        started = time.perf_counter()
        fill_messages(store, topic, messages, rng)
        fill_levels(store, topic)
        timings["messages_s"] = round(time.perf_counter() - started, 1)
        started = time.perf_counter()
        fill_memories(store, memories, rng)
        timings["memories_s"] = round(time.perf_counter() - started, 1)
    return topic, timings


def without_memories(source: Path, target: Path) -> None:
    """A copy of the home whose store has no memories at all."""
    from tea_agent_mini.store import Store

    target.mkdir()
    shutil.copy2(source / "chat.db", target / "chat.db")
    with Store.open(target / "chat.db") as store, store.transaction() as tx:
        tx.execute("DELETE FROM memories")
        if tx.query_one("SELECT 1 FROM sqlite_master WHERE name = 'memories_fts'"):
            tx.execute("DELETE FROM memories_fts")


# -- (a) one request, warm ----------------------------------------------------------------------


def read_history(store: Any, topic: str) -> list:
    """The stored messages the request is built from: the last turns the window can hold."""
    from tea_agent_mini.context.history import RECENT_TURNS

    return store.messages.recent_turns(topic, RECENT_TURNS)


def build(runtime: Any, session: Any, history: list) -> list:
    """What the turn loop does before each model call: choose the tools, build the messages."""
    runtime.offered_tools(session, history)
    return runtime.build_context(session, history)


def measure_request(topic: str, runs: int) -> dict:
    from tea_agent_mini.config import load_config
    from tea_agent_mini.context.builder import load_levels
    from tea_agent_mini.runtime import Runtime
    from tea_agent_mini.skills.loader import load_skills

    runtime = Runtime(load_config())
    store = runtime.store
    runtime.toolkit  # noqa: B018 - loaded at start by every front end; not a per-request cost
    started = time.perf_counter()  # the session, then its first request: all read cold
    session = runtime.session(topic)
    build(runtime, session, read_history(store, topic))
    cold_build_ms = (time.perf_counter() - started) * 1000.0
    history = read_history(store, topic)

    def first_request() -> None:  # a turn starts: memories, skills, tools chosen, then built
        session.turn_context = None
        build(runtime, session, read_history(store, topic))

    def next_request() -> None:  # a later call of the same turn reuses the turn's context
        build(runtime, session, read_history(store, topic))

    config = runtime.config
    parts = {
        "request_build_ms": median_ms(first_request, runs),
        "per_iteration_build_ms": median_ms(next_request, runs),
        "history_read_ms": median_ms(lambda: read_history(store, topic), runs),
        "memory_block_ms": median_ms(lambda: runtime.memory.prompt_block(QUERY), runs),
        "skills_ms": median_ms(lambda: load_skills(config.home, config.workspace), runs),
        "skills_cached_ms": median_ms(lambda: runtime.skills.catalog(), runs),
        "topic_read_ms": median_ms(lambda: store.topics.get(topic), runs),
        "topic_prompt_ms": median_ms(lambda: store.topics.system_prompt(topic), runs),
        "l2_l3_read_ms": median_ms(lambda: load_levels(store, topic), runs),
    }
    request_messages = len(build(runtime, session, history))
    asyncio.run(runtime.aclose())
    return {
        "history_messages": len(history),
        "request_messages": request_messages,
        "first_build_ms": round(cold_build_ms, 2),
        **{name: round(value, 2) for name, value in parts.items()},
    }


# -- (b) the first turn after a start, in a fresh process ---------------------------------------


async def one_turn(topic: str) -> dict:
    started = time.perf_counter()
    from tea_agent_mini.config import load_config
    from tea_agent_mini.runtime import Runtime

    runtime = Runtime(load_config())
    session = runtime.session(topic)
    text = ""
    async for event in session.run_turn(QUERY):
        text = getattr(event, "text", text)
    turn_ms = (time.perf_counter() - started) * 1000.0
    await runtime.aclose()
    return {"turn_ms": turn_ms, "answer": text}


def in_fresh_process(home: Path, *args: str) -> dict:
    """This script's JSON answer to ``args``, run by a fresh interpreter in ``home``."""
    env = fresh_env(TEA_AGENT_HOME=str(home))
    env.pop("TEA_AGENT_PROFILE", None)
    result = subprocess.run(
        [sys.executable, __file__, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=home,
        timeout=600,
    )
    if result.returncode != 0:
        raise RuntimeError(result.stderr.strip()[-800:])
    return json.loads(result.stdout.strip().splitlines()[-1])


def first_turn_ms(home: Path, topic: str) -> float:
    data = in_fresh_process(home, "--first-turn", topic)
    if not data["answer"].startswith("echo:"):
        raise RuntimeError(f"the turn did not reach the model: {data['answer'][:200]!r}")
    return float(data["turn_ms"])


def measure_first_turn(home: Path, bare: Path, topic: str, repeats: int) -> dict:
    with_memories = statistics.median(first_turn_ms(home, topic) for _ in range(repeats))
    without = statistics.median(first_turn_ms(bare, topic) for _ in range(repeats))
    return {
        "with_memories_ms": round(with_memories, 1),
        "without_memories_ms": round(without, 1),
        "memories_extra_ms": round(with_memories - without, 1),
    }


# -- running it -----------------------------------------------------------------------------


def run(messages: int, memories: int, runs: int, repeats: int, seed: int) -> dict:
    from tests.fakes.scripted_server import ScriptedServer

    with tempfile.TemporaryDirectory() as tmp, ScriptedServer() as server:
        home, bare = Path(tmp) / "home", Path(tmp) / "bare"
        home.mkdir()
        topic, build = build_home(home, messages, memories, seed)
        without_memories(home, bare)
        for path in (home, bare):
            write_config(path, server.base_url)
        request = in_fresh_process(home, "--request", topic, "--runs", str(runs))
        first = measure_first_turn(home, bare, topic, repeats)
    return {
        "python": platform.python_version(),
        "package": str(package_dir()),
        "messages": messages,
        "memories": memories,
        "runs": runs,
        "setup": build,
        "request": request,
        "first_turn": first,
    }


def show(result: dict) -> None:
    req, first = result["request"], result["first_turn"]
    print(f"Python {result['python']}, {result['messages']:,} messages in the topic, "
          f"{result['memories']:,} memories, median of {result['runs']}")  # fmt: skip
    print(f"  (a) a turn's first request, warm   {req['request_build_ms']:9.2f} ms  (target <= 20)")
    print(f"      each further request of it     {req['per_iteration_build_ms']:9.2f} ms")
    print(f"      read the history window        {req['history_read_ms']:9.2f} ms  "
          f"({req['history_messages']} messages)")  # fmt: skip
    print(f"      memory selection               {req['memory_block_ms']:9.2f} ms")
    print(f"      skills, parsed                 {req['skills_ms']:9.2f} ms")
    print(f"      skills, cached                 {req['skills_cached_ms']:9.2f} ms")
    print(f"      topic read (counts messages)   {req['topic_read_ms']:9.2f} ms")
    print(f"      topic system prompt only       {req['topic_prompt_ms']:9.2f} ms")
    print(f"      L2 and L3 read                 {req['l2_l3_read_ms']:9.2f} ms")
    print(f"      the first after a start        {req['first_build_ms']:9.2f} ms  "
          "(the session too; the toolkit loaded)")  # fmt: skip
    print(f"  (b) first turn after a start       {first['with_memories_ms']:9.1f} ms")
    print(f"      the same with no memories      {first['without_memories_ms']:9.1f} ms")
    print(f"      what the memories add          {first['memories_extra_ms']:9.1f} ms  "
          "(target <= 150)")  # fmt: skip
    print(f"  setup: messages {result['setup']['messages_s']} s, "
          f"memories {result['setup']['memories_s']} s")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000, help="messages in the topic")
    parser.add_argument("--memories", type=int, default=50_000, help="memories in the store")
    parser.add_argument("--runs", type=int, default=15, help="timed requests (median reported)")
    parser.add_argument("--repeats", type=int, default=3, help="fresh processes per first turn")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--request", metavar="TOPIC", help=argparse.SUPPRESS)
    parser.add_argument("--first-turn", metavar="TOPIC", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.request:  # the fresh process of (a)
        print(json.dumps(measure_request(args.request, args.runs)))
        return 0
    if args.first_turn:  # the fresh processes of (b)
        print(json.dumps(asyncio.run(one_turn(args.first_turn))))
        return 0
    result = run(args.messages, args.memories, args.runs, args.repeats, args.seed)
    if args.json:
        print(json.dumps(result))
    else:
        show(result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
