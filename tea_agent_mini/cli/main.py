"""Dispatch for ``tea-agent-mini``: logging, the command, and how failures end the process."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Callable

from ..errors import ConfigError, TeaAgentError
from .parser import build_parser

EXIT_OK, EXIT_FAILED, EXIT_CONFIG, EXIT_INTERRUPTED = 0, 1, 2, 130
EXIT_BROKEN_PIPE = 141  # what a shell reports for a process ended by SIGPIPE


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
    if name == "completion":
        from .completion import cmd_completion

        return cmd_completion
    if name == "skills":
        from .skills import cmd_skills

        return cmd_skills
    from . import commands

    return getattr(commands, f"cmd_{name}")


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:
        # the reader went away (``| head``): stop quietly, and let the interpreter's last
        # flush of stdout go to /dev/null instead of failing again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE


def _main(argv: list[str] | None) -> int:
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
