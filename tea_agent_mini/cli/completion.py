"""``tea-agent-mini completion bash|zsh``: a shell completion script, written from the parser.

The script lists the commands and each command's options as the parser defines them, so it
cannot drift from the CLI; it runs no Python when the user presses Tab.
"""

from __future__ import annotations

import argparse

SHELLS = ("bash", "zsh")
# zsh reads bash completion functions through bashcompinit
ZSH_PREFIX = "autoload -U +X bashcompinit && bashcompinit\n"


def command_words(parser: argparse.ArgumentParser) -> dict[str, list[str]]:
    """Each command's options (and "" -> the top level's options and the commands)."""
    top = _options(parser)
    words: dict[str, list[str]] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                words[name] = _options(sub)
            top = top + sorted(action.choices)
    words[""] = top
    return words


def bash_script(parser: argparse.ArgumentParser, prog: str = "tea-agent-mini") -> str:
    words = command_words(parser)
    valued = _valued_global_options(parser)
    function = "_" + prog.replace("-", "_")
    cases = "\n".join(
        f'        {name}) words="{" ".join(options)}" ;;'
        for name, options in sorted(words.items())
        if name
    )
    return f"""# {prog} completion: eval "$({prog} completion bash)"
{function}() {{
    local current="${{COMP_WORDS[COMP_CWORD]}}" command="" word words skip=0
    for word in "${{COMP_WORDS[@]:1:COMP_CWORD-1}}"; do
        if [ "$skip" = 1 ]; then skip=0; continue; fi
        case "$word" in
            {"|".join(valued) or "--"}) skip=1 ;;
            -*) ;;
            *) command="$word"; break ;;
        esac
    done
    case "$command" in
{cases}
        *) words="{" ".join(words[""])}" ;;
    esac
    COMPREPLY=($(compgen -W "$words" -- "$current"))
}}
complete -o default -F {function} {prog}
"""


def script(shell: str, parser: argparse.ArgumentParser) -> str:
    if shell not in SHELLS:
        raise ValueError(f"no completion for {shell!r}; choose {' or '.join(SHELLS)}")
    text = bash_script(parser)
    return ZSH_PREFIX + text if shell == "zsh" else text


def cmd_completion(args: argparse.Namespace) -> int:
    from .parser import build_parser

    print(script(args.shell, build_parser()), end="")
    return 0


def _options(parser: argparse.ArgumentParser) -> list[str]:
    return sorted(
        option
        for action in parser._actions
        for option in action.option_strings
        if option.startswith("--") and action.help != argparse.SUPPRESS
    )


def _valued_global_options(parser: argparse.ArgumentParser) -> list[str]:
    """The top-level options that take a value: the word after one is not a command."""
    return sorted(
        option
        for action in parser._actions
        if action.option_strings
        and action.nargs != 0
        and action.default != argparse.SUPPRESS
        and not isinstance(action, (argparse._VersionAction, argparse._HelpAction))
        for option in action.option_strings
    )
