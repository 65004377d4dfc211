"""What one model request costs in an everyday home: 1,000 messages in a topic, 5,000 memories.

    python scripts/bench/bench_context.py            # human-readable
    python scripts/bench/bench_context.py --json     # the same numbers as one JSON object

bench_request.py at that size (its options pass through): the whole request a turn builds before
each model call (system prompt, tools offered, skills, memories, L3/L2/L1 history), warm and
first after a start, its parts, and the first turn after a start against the scripted model.
Building the history part alone would leave out most of what a turn pays.
"""

from __future__ import annotations

import sys

import bench_request  # beside this script

EVERYDAY = ["--messages", "1000", "--memories", "5000"]


def main(argv: list[str] | None = None) -> int:
    return bench_request.main([*EVERYDAY, *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    raise SystemExit(main())
