"""Global options before or after the command, --help examples, and output into a closed pipe."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tea_agent_mini.cli.main import EXIT_BROKEN_PIPE
from tea_agent_mini.cli.parser import COMMANDS, build_parser
from tests.fakes.scripted_server import Reply, ToolCallSpec
from tests.test_cli import cli, cli_env

# what each command needs besides the global options
ARGUMENTS = {"run": ["hello"], "completion": ["bash"], "migrate": ["--to", "postgresql://h/db"]}
GLOBAL = ["--profile", "work", "--workspace", "/tmp/w", "-v"]


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("where", ["before", "after"])
def test_global_options_go_before_or_after_every_command(command, where):
    rest = [command, *ARGUMENTS.get(command, [])]
    argv = GLOBAL + rest if where == "before" else rest + GLOBAL
    args = build_parser().parse_args(argv)
    assert args.command == command
    assert (args.profile, args.workspace, args.verbose) == ("work", "/tmp/w", True)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_without_global_options_the_defaults_hold(command):
    args = build_parser().parse_args([command, *ARGUMENTS.get(command, [])])
    assert (args.profile, args.workspace, args.verbose) == (None, None, False)


def test_options_on_both_sides_the_later_wins():
    args = build_parser().parse_args(["--profile", "a", "doctor", "--profile", "b"])
    assert args.profile == "b"


def test_profile_before_the_command_is_used(scripted_server, write_config):
    # only the "work" profile names a model: the default profile would fail
    write_config({"main_model": {"api_url": scripted_server.base_url, "model_name": "m"}}, "work")
    scripted_server.push(Reply(text="from the work profile"))
    result = cli("--profile", "work", "run", "hello")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "from the work profile"


def test_workspace_before_the_command_is_where_tools_write(
    scripted_server, write_config, tmp_path: Path
):
    write_config({"main_model": {"api_url": scripted_server.base_url, "model_name": "m"}})
    target, elsewhere = tmp_path / "target", tmp_path / "cwd"
    target.mkdir()
    elsewhere.mkdir()
    write = ToolCallSpec("toolkit_file", {"action": "write", "filename": "a.txt", "content": "x"})
    scripted_server.push(Reply(tool_calls=[write]), Reply(text="written"))
    result = cli("--workspace", str(target), "run", "write a.txt", cwd=elsewhere)
    assert result.returncode == 0, result.stderr
    assert (target / "a.txt").read_text() == "x"
    assert not (elsewhere / "a.txt").exists()


def test_verbose_before_the_command_logs_debug_lines(model_config, scripted_server):
    scripted_server.push(Reply(text="hi"))
    quiet = cli("run", "hello")
    loud = cli("-v", "run", "hello")
    assert loud.returncode == 0, loud.stderr
    assert "DEBUG " not in quiet.stderr and "DEBUG " in loud.stderr


@pytest.mark.parametrize("command", [c for c, (_, examples) in COMMANDS.items() if examples])
def test_help_shows_examples(command):
    result = cli(command, "--help")
    assert result.returncode == 0
    examples = result.stdout.split("examples:\n", 1)[1]
    assert f"tea-agent-mini {command}" in examples


def test_top_level_help_says_where_global_options_go():
    result = cli("--help")
    assert "examples:" in result.stdout
    assert "go before or after the command" in result.stdout


@pytest.mark.parametrize("argv", [["tools", "--json"], ["doctor"], ["version"], ["--help"]])
def test_a_closed_pipe_ends_the_command_quietly(argv, tea_home):
    process = subprocess.Popen(
        [sys.executable, "-m", "tea_agent_mini", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=cli_env(),
    )
    process.stdout.close()  # like `| head` that has already gone: every write fails
    _, err = process.communicate(timeout=120)
    assert b"Traceback" not in err and b"BrokenPipe" not in err, err.decode()
    # argparse ignores a failed write of the help itself and exits 0
    assert process.returncode == (0 if argv == ["--help"] else EXIT_BROKEN_PIPE)
