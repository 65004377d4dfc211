"""``python scripts/eval/run.py --base-url URL --model NAME [--tasks a,b] [--json]``."""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from .metrics import TaskResult
from .proxy import RecordingProxy
from .report import json_report, text_report
from .runner import ALL_TASKS, RunOptions, find_tasks, run_task
from .sandbox import ModelSettings
from .task import Task


def default_cli() -> list[str]:
    """The installed ``tea-agent-mini`` next to this Python, else on PATH, else ``-m``."""
    beside = Path(sys.executable).with_name("tea-agent-mini")
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("tea-agent-mini")
    return [found] if found else [sys.executable, "-m", "tea_agent_mini"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="run.py", description="Run small agent tasks against a model and judge their effects."
    )
    parser.add_argument("--base-url", help="the model server, e.g. http://127.0.0.1:8090/v1")
    parser.add_argument("--model", help="model name sent to the server")
    parser.add_argument("--api-key", default="sk-eval", help="bearer token for the server")
    parser.add_argument("--tasks", help="comma-separated task names (default: all)")
    parser.add_argument("--list", action="store_true", help="list the tasks and exit")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--max-context", type=int, default=8192, help="max_context_tokens")
    parser.add_argument("--max-iterations", type=int, default=20, help="agent.max_iterations")
    parser.add_argument(
        "--temperature",
        type=float,
        default=None,
        help="sampling temperature (default: the server's)",
    )
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per task")
    parser.add_argument("--request-timeout", type=float, default=600.0, help="per model call")
    parser.add_argument("--seed", default="1", help="makes the tasks' numbers and words")
    parser.add_argument("--cli", help="the agent command (default: the installed tea-agent-mini)")
    parser.add_argument("--keep", action="store_true", help="keep the temp dirs for a look")
    parser.add_argument("--proxy-port", type=int, default=0, help="port of the proxy (0: any)")
    return parser


def check_reachable(base_url: str) -> str | None:
    """Why the server cannot be reached, or None (any HTTP answer counts as reachable)."""
    try:
        with urllib.request.urlopen(base_url.rstrip("/") + "/models", timeout=10):
            return None
    except urllib.error.HTTPError:
        return None
    except (urllib.error.URLError, OSError) as exc:
        return f"cannot reach {base_url}: {getattr(exc, 'reason', exc)}"


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.list:
        for task in ALL_TASKS:
            print(f"{task.name:16} {task.about}")
        return 0
    if not args.base_url or not args.model:
        parser.error("--base-url and --model are required")
    try:
        tasks = find_tasks([n.strip() for n in (args.tasks or "").split(",") if n.strip()])
    except KeyError as exc:
        parser.error(str(exc.args[0]))
    problem = check_reachable(args.base_url)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    options = RunOptions(
        cli=tuple(shlex.split(args.cli) if args.cli else default_cli()),
        settings=ModelSettings(
            model=args.model,
            api_key=args.api_key,
            max_context=args.max_context,
            max_iterations=args.max_iterations,
            read_timeout=args.request_timeout,
            temperature=args.temperature,
        ),
        timeout=args.timeout,
        keep=args.keep,
    )
    results = _run_all(args, tasks, options)
    if args.json:
        print(json.dumps(json_report(results, _run_info(args, options)), indent=2))
    else:
        print(text_report(results))
    return 0


def _run_all(args: argparse.Namespace, tasks: list[Task], options: RunOptions) -> list[TaskResult]:
    results = []
    upstream_timeout = args.request_timeout + 30
    with RecordingProxy(args.base_url, port=args.proxy_port, timeout=upstream_timeout) as proxy:
        print(f"agent: {shlex.join(options.cli)}; proxy {proxy.base_url}", file=sys.stderr)
        for number, task in enumerate(tasks, start=1):
            result = run_task(task, task.case(args.seed), proxy, options)
            state = "pass" if result.passed else "FAIL"
            print(
                f"[{number}/{len(tasks)}] {task.name}: {state} ({result.seconds:.1f} s) "
                f"{result.reason}",
                file=sys.stderr,
                flush=True,
            )
            results.append(result)
    return results


def _run_info(args: argparse.Namespace, options: RunOptions) -> dict[str, Any]:
    return {
        "base_url": args.base_url,
        "model": args.model,
        "cli": list(options.cli),
        "seed": args.seed,
        "max_context": args.max_context,
        "max_iterations": args.max_iterations,
        "temperature": args.temperature,
        "timeout": args.timeout,
    }
