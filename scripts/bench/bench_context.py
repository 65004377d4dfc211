"""Time building the request of a turn for a 1,000-message session (target: 20 ms or less).

    python scripts/bench/bench_context.py            # human-readable
    python scripts/bench/bench_context.py --json     # the same numbers as one JSON object

Builds a throw-away store holding one topic of 1,000 messages (user turns with a tool call, a tool
output and an answer; some Chinese), its L2 ring of 50 pairs and an L3 summary, then times what
each model call of a turn does with them: reading the messages, reading L2 and L3, and building
the request (L1 window, placeholders, relevance, budget), with no budget and with a tight one
that makes every trimming step work. Also times the whole ``Runtime.build_context`` (system
prompt, memories and skills included). Prints numbers only; it asserts no thresholds.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from timing import median_ms  # noqa: E402 - beside this script

from tea_agent_mini.config import Config, ModelConfig  # noqa: E402
from tea_agent_mini.context.builder import ContextInputs, build_request, load_levels  # noqa: E402
from tea_agent_mini.context.pairs import new_pairs  # noqa: E402
from tea_agent_mini.context.records import ContextRecords, TopicSummary  # noqa: E402
from tea_agent_mini.context.summary import RING_LIMIT  # noqa: E402
from tea_agent_mini.llm.tokens import estimate_messages_tokens  # noqa: E402
from tea_agent_mini.runtime import Runtime  # noqa: E402
from tea_agent_mini.store import Store  # noqa: E402
from tea_agent_mini.types import Message, ToolCall  # noqa: E402

WORDS = [
    *("parser", "database", "server", "scheduler", "memory", "exporter", "config", "token"),
    *("budget", "summary", "cache", "test", "release", "branch", "review", "latency", "deploy"),
    *("docker", "python", "module", "function", "class", "error", "fix", "build"),
]
CJK = "用户喜欢绿茶咖啡项目部署服务器数据库备份周末会议报告语言中文英文旅行家庭音乐"
SYSTEM = "You are a helpful agent.\n" + "Some rules about working with tools. " * 60


def text(rng: random.Random, words: int) -> str:
    body = " ".join(rng.choices(WORDS, k=words))
    if rng.random() < 0.2:
        start = rng.randrange(len(CJK) - 10)
        body += " " + CJK[start : start + 10]
    return body


def fill(store: Store, topic: str, messages: int, rng: random.Random) -> None:
    with store.transaction():
        for turn in range(messages // 4):
            path = f"src/{rng.choice(WORDS)}.py"
            call = ToolCall(f"c{turn}", "toolkit_file", json.dumps({"filename": path}))
            for message in (
                Message(role="user", content=text(rng, rng.randint(20, 120))),
                Message(role="assistant", tool_calls=(call,), reasoning=text(rng, 40)),
                Message(
                    role="tool", tool_call_id=call.id, content=text(rng, rng.randint(80, 1500))
                ),
                Message(role="assistant", content=text(rng, rng.randint(40, 300))),
            ):
                store.messages.add(topic, message)


def levels(store: Store, topic: str) -> None:
    records = ContextRecords(store.db)
    pairs = new_pairs(store.messages.list(topic), 0)
    records.save_pairs(topic, pairs[-RING_LIMIT:], time.time())
    folded = len(pairs) - RING_LIMIT
    summary = TopicSummary(
        topic_id=topic,
        content="## Decisions\n" + "- a decision about the parser\n" * 40,
        tool_counts={"toolkit_file": (folded, 3)},
        files=("src/parser.py",),
        pairs_covered=folded,
        last_message_id=pairs[-RING_LIMIT - 1].user_message_id,
    )
    records.apply_summary(summary, [])


def run(count: int, runs: int, seed: int) -> dict:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        config = Config(
            main_model=ModelConfig(api_url="http://127.0.0.1:9/v1", model_name="bench"),
            home=Path(tmp),
        )
        config.agent.workspace = tmp
        runtime = Runtime(config)
        store = runtime.store
        topic = store.topics.create().id
        fill(store, topic, count, rng)
        levels(store, topic)
        history = store.messages.list(topic)
        pairs, summary = load_levels(store, topic)
        free = ContextInputs(SYSTEM, history, pairs=pairs, summary=summary)
        tight = ContextInputs(SYSTEM, history, pairs=pairs, summary=summary, max_tokens=4000)
        session = SimpleNamespace(topic_id=topic)
        runtime.build_context(session, history)  # load tools and skills once
        parts = {
            "read_messages_ms": median_ms(lambda: store.messages.list(topic), runs),
            "read_l2_l3_ms": median_ms(lambda: load_levels(store, topic), runs),
            "build_ms": median_ms(lambda: build_request(free), runs),
            "build_tight_budget_ms": median_ms(lambda: build_request(tight), runs),
            "runtime_build_context_ms": median_ms(
                lambda: runtime.build_context(session, history), runs
            ),
        }
        request = build_request(free)
        store.close()
        return {
            "python": platform.python_version(),
            "messages": len(history),
            "l2_pairs": len(pairs),
            "runs": runs,
            "request_messages": len(request),
            "request_tokens": estimate_messages_tokens(request),
            "turn_build_ms": round(
                parts["read_messages_ms"] + parts["read_l2_l3_ms"] + parts["build_ms"], 2
            ),
            **{name: round(value, 2) for name, value in parts.items()},
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1000, help="messages in the session")
    parser.add_argument("--runs", type=int, default=25, help="timed calls (median reported)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    result = run(args.messages, args.runs, args.seed)
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"Python {result['python']}, {result['messages']:,} messages, "
          f"{result['l2_pairs']} L2 pairs, median of {result['runs']}")  # fmt: skip
    print(f"  context build for a turn      {result['turn_build_ms']:9.2f} ms  (target <= 20)")
    print(f"    read the messages           {result['read_messages_ms']:9.2f} ms")
    print(f"    read L2 and L3              {result['read_l2_l3_ms']:9.2f} ms")
    print(f"    build the request           {result['build_ms']:9.2f} ms")
    print(f"  build with a tight budget     {result['build_tight_budget_ms']:9.2f} ms")
    print(f"  Runtime.build_context         {result['runtime_build_context_ms']:9.2f} ms  "
          "(system prompt, memories, skills too)")  # fmt: skip
    print(f"  request: {result['request_messages']} messages, "
          f"~{result['request_tokens']:,} tokens")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
