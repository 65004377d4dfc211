"""The completion script, run in a real bash: what Tab offers after a few typed words."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from tea_agent_mini.cli.completion import script
from tea_agent_mini.cli.parser import build_parser

BASH = shutil.which("bash")


def offered(*typed: str) -> list[str]:
    """COMPREPLY after ``tea-agent-mini *typed`` (the last word is the one being completed)."""
    words = " ".join(f"'{w}'" for w in ("tea-agent-mini", *typed))
    program = (
        f"{script('bash', build_parser())}\n"
        f"COMP_WORDS=({words}); COMP_CWORD={len(typed)}; _tea_agent_mini\n"
        'printf "%s\\n" "${COMPREPLY[@]}"'
    )
    done = subprocess.run([BASH, "-c", program], capture_output=True, text=True, timeout=10)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


@pytest.mark.skipif(BASH is None, reason="needs bash")
def test_tab_offers_commands_then_each_commands_options():
    assert offered("ru") == ["run"]
    assert {"serve", "chat", "logs", "completion"} <= set(offered(""))
    assert offered("serve", "--p") == ["--port", "--profile"]
    # a global option's value is not taken for the command
    assert offered("--profile", "work", "run", "--j") == ["--json"]
    assert offered("logs", "--f") == ["--follow"]


def test_the_command_prints_a_script_for_bash_and_zsh():
    bash = subprocess.run(
        [sys.executable, "-m", "tea_agent_mini", "completion", "bash"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bash.returncode == 0 and "complete -o default -F _tea_agent_mini" in bash.stdout
    assert script("zsh", build_parser()).startswith("autoload -U +X bashcompinit")
    with pytest.raises(ValueError, match="bash or zsh"):
        script("fish", build_parser())
