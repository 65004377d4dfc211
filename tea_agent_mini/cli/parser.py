"""The command line of ``tea-agent-mini``: one parser, global options anywhere, examples."""

from __future__ import annotations

import argparse

from .._version import __version__

EXAMPLES = """examples:
  tea-agent-mini serve                          web UI and API on http://127.0.0.1:8080
  tea-agent-mini run "Write hello.py and run it"
  tea-agent-mini --profile work run "…"         the same with <home>/work.yaml
  tea-agent-mini chat -c                        continue the last conversation
  tea-agent-mini doctor                         check config, model, database, MCP servers

Global options (--profile, --workspace, -v) go before or after the command."""

COMMANDS: dict[str, tuple[str, str]] = {
    "serve": (
        "start the web server (default)",
        """examples:
  tea-agent-mini serve
  tea-agent-mini serve --port 8081
  tea-agent-mini serve --host 0.0.0.0 --api-key "$KEY"   beyond loopback: a key of 16+ chars""",
    ),
    "run": (
        "run one prompt and print the answer",
        """examples:
  tea-agent-mini run "Count the TODOs under src/"
  git diff | tea-agent-mini run -            the prompt from stdin
  tea-agent-mini run --json "What time is it?"
  tea-agent-mini run -c "And in Tokyo?"      continue the last conversation""",
    ),
    "chat": (
        "interactive terminal chat",
        """examples:
  tea-agent-mini chat
  tea-agent-mini chat -c                     continue the last conversation
  tea-agent-mini chat --topic 3f2a           a conversation by id prefix or title

In the chat: /new, /topics, /switch ID-OR-TITLE, /history, /good, /bad, /help, /exit.""",
    ),
    "history": (
        "print the messages of a conversation",
        """examples:
  tea-agent-mini history                     the last conversation
  tea-agent-mini history 3f2a -n 50          by id prefix (or title), the last 50 messages""",
    ),
    "tools": (
        "list the available tools (bundled, your own, MCP)",
        """examples:
  tea-agent-mini tools
  tea-agent-mini tools --json | python -m json.tool""",
    ),
    "scheduler": (
        "run scheduled tasks (no web server)",
        """examples:
  tea-agent-mini scheduler                   until Ctrl-C or SIGTERM""",
    ),
    "tasks": (
        "list, add, change or run tasks",
        """examples:
  tea-agent-mini tasks
  tea-agent-mini tasks add --name news --schedule daily:08:30 --prompt "Summarise the news"
  tea-agent-mini tasks test --schedule "*/15 * * * *" --count 3
  tea-agent-mini tasks test news              the next fire times of a task
  tea-agent-mini tasks run_now news""",
    ),
    "skills": (
        "review, edit, promote or delete the skills the agent learned",
        """examples:
  tea-agent-mini skills learned              list them, with their uses and outcomes
  tea-agent-mini skills learned show count-csv-rows
  tea-agent-mini skills learned edit count-csv-rows          in $VISUAL or $EDITOR
  tea-agent-mini skills learned edit count-csv-rows --stdin < SKILL.md
  tea-agent-mini skills learned promote count-csv-rows       make it your own skill
  tea-agent-mini skills learned delete count-csv-rows""",
    ),
    "logs": (
        "print the server log",
        """examples:
  tea-agent-mini logs                        the last 50 lines
  tea-agent-mini logs -n 0                   all of it
  tea-agent-mini logs -f                     keep printing new lines (Ctrl-C ends)""",
    ),
    "doctor": (
        "check config, model, database, MCP servers, features",
        """examples:
  tea-agent-mini doctor
  tea-agent-mini --profile work doctor
  tea-agent-mini doctor --dev                also the programs the test suite uses""",
    ),
    "migrate": (
        "copy this home's SQLite store into a PostgreSQL database",
        """examples:
  tea-agent-mini migrate --to postgresql://tea:secret@db.example/tea --dry-run
  tea-agent-mini migrate --to postgresql://tea:secret@db.example/tea

Stop the instances using this home first. Safe to run again: a stopped copy continues,
a finished one copies nothing. Then set store.url to the same URL.""",
    ),
    "completion": (
        "print a shell completion script",
        """examples:
  eval "$(tea-agent-mini completion bash)"     in ~/.bashrc
  eval "$(tea-agent-mini completion zsh)"      in ~/.zshrc""",
    ),
    "version": ("print the version", ""),
}


def add_global_options(parser: argparse.ArgumentParser, *, top: bool) -> None:
    """The options every command takes. A subcommand's copies default to SUPPRESS, so a value
    given before the command is not overwritten by the subcommand's default."""
    unset = None if top else argparse.SUPPRESS
    parser.add_argument(
        "--profile", default=unset, help="profile name: <home>/<name>.yaml (default: config.yaml)"
    )
    parser.add_argument(
        "--workspace", default=unset, help="directory the tools work in (default: current)"
    )
    parser.add_argument(
        "-v",
        "--verbose",
        action="store_true",
        default=False if top else argparse.SUPPRESS,
        help="log debug details",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tea-agent-mini",
        description="A small, embeddable AI agent runtime.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_global_options(parser, top=True)
    parser.add_argument("--version", action="version", version=f"tea-agent-mini {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands = {}
    for name, (summary, examples) in COMMANDS.items():
        command = sub.add_parser(
            name,
            help=summary,
            description=summary[0].upper() + summary[1:] + ".",
            epilog=examples or None,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        add_global_options(command, top=False)
        commands[name] = command
    _serve_options(commands["serve"])
    _turn_options(commands["run"], commands["chat"])
    commands["run"].add_argument("prompt", nargs="+", help="the prompt ('-' reads it from stdin)")
    commands["run"].add_argument(
        "--json", action="store_true", help="print one JSON object at the end"
    )
    history = commands["history"]
    history.add_argument("topic", nargs="?", help="id, id prefix or title (default: the last)")
    history.add_argument("-n", "--limit", type=int, default=20, help="messages (default 20)")
    commands["tools"].add_argument("--json", action="store_true", help="print the tools as JSON")
    _task_options(commands["tasks"])
    _skill_options(commands["skills"])
    commands["doctor"].add_argument(
        "--dev", action="store_true", help="also check the programs the test suite uses"
    )
    _log_options(commands["logs"])
    migrate = commands["migrate"]
    migrate.add_argument("--to", required=True, metavar="URL", help="postgresql://… target")
    migrate.add_argument("--dry-run", action="store_true", help="only show the row counts")
    migrate.add_argument("--batch", type=int, default=500, help="rows per transaction (500)")
    commands["completion"].add_argument("shell", choices=("bash", "zsh"), help="bash or zsh")
    return parser


def _log_options(logs: argparse.ArgumentParser) -> None:
    logs.add_argument(
        "-n", "--lines", type=int, default=50, help="lines from the end (default 50; 0: all)"
    )
    logs.add_argument(
        "-f", "--follow", action="store_true", help="keep printing lines as they are written"
    )


def _serve_options(serve: argparse.ArgumentParser) -> None:
    serve.add_argument("--host", help="address to bind (default: server.host, 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default: server.port, 8080)")
    serve.add_argument(
        "--api-key", help="access token required on /v1 routes (16+ characters beyond loopback)"
    )


def _turn_options(*parsers: argparse.ArgumentParser) -> None:
    for parser in parsers:
        which = parser.add_mutually_exclusive_group()
        which.add_argument("--topic", help="continue this conversation (id, id prefix or title)")
        which.add_argument(
            "-c", "--continue", dest="resume", action="store_true", help="continue the last one"
        )
        parser.add_argument("--show-reasoning", action="store_true", help="print model thinking")


def _skill_options(skills: argparse.ArgumentParser) -> None:
    skills.add_argument(
        "scope", nargs="?", default="learned", choices=("learned",), help="learned (the default)"
    )
    skills.add_argument(
        "action",
        nargs="?",
        default="list",
        choices=("list", "show", "edit", "promote", "delete"),
        help="list (default), show, edit, promote (make it your own skill) or delete",
    )
    skills.add_argument("name", nargs="?", help="the skill's name")
    skills.add_argument(
        "--stdin", action="store_true", help="edit: read the new SKILL.md from stdin"
    )
    skills.add_argument("--json", action="store_true", help="list, show: print JSON")


def _task_options(tasks: argparse.ArgumentParser) -> None:
    tasks.add_argument(
        "action",
        nargs="?",
        default="list",
        help="list (default), add, update, delete, enable, disable, run_now, history or test",
    )
    tasks.add_argument("id", nargs="?", help="the task's id or name (test: preview its schedule)")
    for option in ("--name", "--schedule", "--prompt", "--tz"):
        tasks.add_argument(option)
    tasks.add_argument("--kind", help="shell (or command) or prompt; implied by the text given")
    # not dest "command": that one names the subcommand
    tasks.add_argument("--command", dest="shell_command", help="shell command of a shell task")
    tasks.add_argument("--timeout", type=float, help="seconds (default 300)")
    tasks.add_argument("--count", type=int, help="fire times to show (test) or runs (history)")
    tasks.add_argument("--notify", action="store_true", default=None, help="notify when done")
