"""The CLI commands. Each takes the parsed arguments and returns the exit code."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Awaitable
from dataclasses import replace
from typing import Any, TypeVar

from .._version import __version__
from ..config import Config, load_config
from ..redact import guard_logs, mask_url
from ..runtime import Runtime, config_secrets
from .main import EXIT_CONFIG, EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK
from .mcpwait import report_failures, wait_for_mcp
from .prompts import terminal_approval, terminal_notice, terminal_question
from .render import TerminalPrinter, TurnRecorder
from .topics import find_topic, last_topic, pick_topic, print_history, topic_line

T = TypeVar("T")


def load(args: argparse.Namespace) -> Config:
    """The profile's config; from here on the log handlers mask the secrets it holds."""
    config = load_config(args.profile)
    if getattr(args, "workspace", None):
        config.agent = replace(config.agent, workspace=args.workspace)
    guard_logs([*config_secrets(config), getattr(args, "api_key", None) or ""])
    return config


def cmd_version(args: argparse.Namespace) -> int:
    print(f"tea-agent-mini {__version__}")
    return EXIT_OK


def cmd_run(args: argparse.Namespace) -> int:
    prompt = " ".join(args.prompt)
    if prompt == "-":
        prompt = sys.stdin.read()
    if not prompt.strip():
        print("error: the prompt is empty", file=sys.stderr)
        return EXIT_CONFIG
    config = load(args)
    config.require_model()
    recorder = TurnRecorder()
    printer = None
    if not args.json:
        printer = TerminalPrinter.for_terminal(show_reasoning=args.show_reasoning)
    try:
        asyncio.run(_run_turn(config, prompt, args, recorder, printer))
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    if args.json:
        print(recorder.to_json())
    if recorder.error is not None:
        if not args.json and recorder.error.kind == "interrupted":
            print("the answer above is incomplete", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_OK


async def _run_turn(
    config: Config,
    prompt: str,
    args: argparse.Namespace,
    recorder: TurnRecorder,
    printer: TerminalPrinter | None,
) -> None:
    from ..shell.orphans import reap_orphans

    runtime = Runtime(config)
    try:
        await asyncio.to_thread(reap_orphans, config.home)
        await runtime.resume_jobs()  # follow-up work an earlier process left unfinished
        topic_id = pick_topic(runtime.store, args.topic, args.resume)
        report_failures(await asyncio.to_thread(wait_for_mcp, runtime))
        status = printer.status if printer is not None else None
        session = runtime.session(
            topic_id,
            approve=terminal_approval(status),
            ask_user=terminal_question(status),
            on_notice=terminal_notice(status),
        )
        recorder.topic_id = session.topic_id
        events = session.run_turn(prompt)
        async for event in printer.follow(events) if printer is not None else events:
            recorder(event)
    finally:
        await runtime.aclose()


def cmd_chat(args: argparse.Namespace) -> int:
    from .chat import ChatRepl

    config = load(args)
    config.require_model()
    repl = ChatRepl(config, show_reasoning=args.show_reasoning)
    return repl.run(args.topic, resume=args.resume)


def cmd_history(args: argparse.Namespace) -> int:
    from ..store import Store

    config = load(args)
    if not config.store.url and not config.db_path.exists():
        print("no conversations yet", file=sys.stderr)
        return EXIT_FAILED
    store = Store.open(config.store_target)
    try:
        topic = find_topic(store, args.topic) if args.topic else last_topic(store)
        if topic is None:
            print("no conversations yet", file=sys.stderr)
            return EXIT_FAILED
        print(topic_line(topic))
        print_history(store, topic.id, args.limit, sys.stdout)
    finally:
        store.close()
    return EXIT_OK


def cmd_tools(args: argparse.Namespace) -> int:
    """The tools a turn can use: the runtime's toolkit (bundled, the user's own, MCP)."""

    runtime = Runtime(load(args))
    try:
        report_failures(wait_for_mcp(runtime))
        specs = sorted(runtime.toolkit.specs(), key=lambda s: s.name)
    finally:
        asyncio.run(runtime.aclose())
    if args.json:
        print(json.dumps([_tool_json(s) for s in specs], ensure_ascii=False, indent=2))
        return EXIT_OK
    for s in specs:
        flag = "*" if s.mutates else " "
        first_line = s.description.strip().splitlines()[0] if s.description.strip() else ""
        print(f"{flag} {s.name:32} {first_line[:90]}")
    print(f"\n{len(specs)} tools (* changes files or runs commands)")
    return EXIT_OK


def _tool_json(spec: Any) -> dict[str, Any]:
    return {
        "name": spec.name,
        "description": spec.description,
        "parameters": spec.parameters,
        "mutates": spec.mutates,
        "concurrency_safe": spec.concurrency_safe,
        "requires": list(spec.requires),
        "source": _source(spec.module),
    }


def _source(module: str) -> str:
    """bundled, user (a tool in <home>/tools) or mcp:<server>."""
    if module.startswith("mcp:"):
        return module
    return "bundled" if module.startswith("tea_agent_mini.") else "user"


def cmd_doctor(args: argparse.Namespace) -> int:
    from .doctor import run_doctor

    return EXIT_OK if run_doctor(args.profile, args.workspace, dev=args.dev) else EXIT_FAILED


def cmd_serve(args: argparse.Namespace) -> int:
    try:
        from ..server.app import serve
    except ImportError:
        print(
            "the web server is not available in this version yet; "
            "use `tea-agent-mini chat` or `tea-agent-mini run`",
            file=sys.stderr,
        )
        return EXIT_FAILED
    return serve(load(args), host=args.host, port=args.port, api_key=args.api_key)


def cmd_scheduler(args: argparse.Namespace) -> int:
    asyncio.run(_run_scheduler(load(args)))
    print("scheduler stopped", file=sys.stderr)
    return EXIT_OK


async def _run_scheduler(config: Config) -> None:
    from ..scheduler.service import run_headless

    where = mask_url(config.store.url) if config.store.url else config.db_path

    def ready(count: int) -> None:
        print(
            f"scheduler running: {count} enabled task(s) in {where}; Ctrl-C or SIGTERM stops it",
            file=sys.stderr,
            flush=True,
        )

    runtime = Runtime(config)
    try:
        await run_headless(runtime, on_ready=ready)
    finally:
        await runtime.aclose()


def cmd_tasks(args: argparse.Namespace) -> int:
    """The scheduler tool's actions from the command line (same checks, same output)."""
    from ..errors import ToolError
    from ..scheduler.errors import TaskError
    from ..scheduler.service import TaskService
    from ..toolkit.context import ToolContext
    from ..tools.scheduler import toolkit_scheduler

    config = load(args)
    runtime = Runtime(config)
    options = ("name", "schedule", "prompt", "tz", "kind", "timeout", "notify")
    given = {key: getattr(args, key) for key in options}
    given.update(command=args.shell_command, id=args.id, count=args.count)
    try:
        if args.action == "test" and args.id and not given["schedule"]:
            # `tasks test NAME`: the named task's schedule
            task = TaskService(runtime.store).get(args.id)
            given.update(schedule=task.schedule, tz=given["tz"] or task.tz)
        # no toolkit here: loading it would start the configured MCP servers for nothing
        ctx = ToolContext(config.workspace, config.home, store=runtime.store, runtime=runtime)
        print(asyncio.run(_closing(runtime, toolkit_scheduler(ctx, args.action, **given))))
    except (ToolError, TaskError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    finally:
        runtime.close_store()
    return EXIT_OK


async def _closing(runtime: Runtime, work: Awaitable[T]) -> T:
    """``await work``, then close the runtime's network clients on the same loop."""
    try:
        return await work
    finally:
        await runtime.aclose()
