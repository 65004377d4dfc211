"""Argument parsing and dispatch for ``tea-agent-mini``."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable

from .._version import __version__
from ..errors import ConfigError, TeaAgentError
from .logs import add_parser as add_logs_parser

EXIT_OK, EXIT_FAILED, EXIT_CONFIG, EXIT_INTERRUPTED = 0, 1, 2, 130


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--profile", help="profile name: <home>/<name>.yaml (default: config.yaml)")
    common.add_argument("--workspace", help="directory the tools work in (default: current)")
    common.add_argument("-v", "--verbose", action="store_true", help="log debug details")

    parser = argparse.ArgumentParser(
        prog="tea-agent-mini",
        description="A small, embeddable AI agent runtime.",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"tea-agent-mini {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    serve = sub.add_parser("serve", parents=[common], help="start the web server (default)")
    serve.add_argument("--host", help="address to bind (default: server.host, 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default: server.port, 8080)")
    serve.add_argument(
        "--api-key", help="access token required on /v1 routes (16+ characters beyond loopback)"
    )

    run = sub.add_parser("run", parents=[common], help="run one prompt and print the answer")
    run.add_argument("prompt", nargs="+", help="the prompt ('-' reads it from stdin)")
    run.add_argument("--json", action="store_true", help="print one JSON object at the end")
    run.add_argument("--topic", help="continue this topic id")
    run.add_argument("--show-reasoning", action="store_true", help="print model thinking")

    chat = sub.add_parser("chat", parents=[common], help="interactive terminal chat")
    chat.add_argument("--topic", help="continue this topic id")
    chat.add_argument("--show-reasoning", action="store_true", help="print model thinking")

    tools = sub.add_parser("tools", parents=[common], help="list the available tools")
    tools.add_argument("--json", action="store_true", help="print the tools as JSON")

    sub.add_parser("scheduler", parents=[common], help="run scheduled tasks (no web server)")
    tasks = sub.add_parser("tasks", parents=[common], help="list, add, change or run tasks")
    tasks.add_argument(
        "action",
        nargs="?",
        default="list",
        help="list (default), add, update, delete, enable, disable, run_now, history or test",
    )
    tasks.add_argument("id", nargs="?", help="the task's id or name")
    for option in ("--name", "--schedule", "--prompt", "--tz", "--kind"):
        tasks.add_argument(option)
    # not dest "command": that one names the subcommand
    tasks.add_argument("--command", dest="shell_command", help="shell command of a shell task")
    tasks.add_argument("--timeout", type=float, help="seconds (default 300)")
    tasks.add_argument("--count", type=int, help="fire times to show (test) or runs (history)")
    tasks.add_argument("--notify", action="store_true", default=None, help="notify when done")

    add_logs_parser(sub, common)
    sub.add_parser("doctor", parents=[common], help="check config, model, database, features")
    sub.add_parser("version", parents=[common], help="print the version")
    return parser


def configure_logging(verbose: bool) -> None:
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    if not verbose:
        for noisy in ("httpx", "httpcore"):
            logging.getLogger(noisy).setLevel(logging.WARNING)


def _command(name: str) -> Callable[[argparse.Namespace], int]:
    if name == "logs":
        from .logs import cmd_logs

        return cmd_logs
    from . import commands

    return getattr(commands, f"cmd_{name}")


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose)
    name = args.command or "serve"
    if name == "serve" and not hasattr(args, "host"):
        args.host = args.port = args.api_key = None
    try:
        return _command(name)(args)
    except ConfigError as exc:
        print(f"config error: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except TeaAgentError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
