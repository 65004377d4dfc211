"""What the first request of a plain task costs, per context window (targets: <= 3,000 tokens up
to 16k, <= 6,000 with no limit; system prompt + tools <= 40 % of the window).

    python scripts/bench/bench_prompt.py             # a table
    python scripts/bench/bench_prompt.py --json      # the same numbers as one JSON object

For each window it builds, through the runtime and in a throw-away home, the request the agent
would send for "Create hello.py that prints hello world, then run it." — system prompt, context
block, message and the tools offered — and reports its estimated tokens (about four characters
a token; a real tokenizer counts somewhat more: llama.cpp reported ~1,900 for ~1,300 estimated
with Qwen2.5's template), next to what sending every tool's full schema would cost. No model is
called. Prints numbers only; it asserts no thresholds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))  # last: an installed tea_agent_mini (run.py's venv) comes first

from tea_agent_mini.config import load_config  # noqa: E402
from tea_agent_mini.llm.tokens import estimate_messages_tokens, estimate_tools_tokens  # noqa: E402
from tea_agent_mini.runtime import Runtime  # noqa: E402
from tea_agent_mini.types import Message  # noqa: E402

TASK = "Create hello.py that prints hello world, then run it."
WINDOWS = (4096, 8192, 16384, 32768, 131072, 0)


def measure(window: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        home, workspace = Path(tmp) / "home", Path(tmp) / "workspace"
        home.mkdir()
        workspace.mkdir()
        limit = f"  max_context_tokens: {window}\n" if window else ""
        (home / "config.yaml").write_text(
            "main_model:\n  api_url: http://127.0.0.1:9/v1\n  model_name: any\n"
            f"{limit}agent:\n  workspace: {workspace}\n",
            encoding="utf-8",
        )
        os.environ["TEA_AGENT_HOME"] = str(home)
        runtime = Runtime(load_config())
        try:
            session = runtime.session()
            history = [Message(role="user", content=TASK, id=1)]
            tools = runtime.offered_tools(session, history)
            messages = runtime.build_context(session, history)
            every_tool = runtime.toolkit.openai_tools()
        finally:
            asyncio.run(runtime.aclose())
    system = estimate_messages_tokens(messages[:1])
    tools_tokens = estimate_tools_tokens(tools)
    return {
        "window": window,
        "profile": runtime.prompt_profile,
        "tools": len(tools),
        "system_tokens": system,
        "tools_tokens": tools_tokens,
        "request_tokens": estimate_messages_tokens(messages) + tools_tokens,
        "prompt_share": round((system + tools_tokens) / window, 3) if window else None,
        "every_tool_full_tokens": estimate_tools_tokens(every_tool),
        "installed_tools": len(every_tool),
    }


def show(rows: list[dict]) -> None:
    print(f"Python {platform.python_version()}; first request of: {TASK!r} (estimated tokens)")
    print("  window   profile  tools  system  tools  request  system+tools  all tools, full")
    for row in rows:
        window = f"{row['window']:,}" if row["window"] else "none"
        share = f"{row['prompt_share']:.0%}" if row["prompt_share"] is not None else "-"
        print(
            f"  {window:>7}  {row['profile']:>7}  {row['tools']:>5}  {row['system_tokens']:>6,}"
            f"  {row['tools_tokens']:>5,}  {row['request_tokens']:>7,}  {share:>12}"
            f"  {row['every_tool_full_tokens']:,} ({row['installed_tools']} tools)"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    rows = [measure(window) for window in WINDOWS]
    if args.json:
        print(json.dumps({"python": platform.python_version(), "windows": rows}))
    else:
        show(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
