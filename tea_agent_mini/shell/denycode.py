"""Code handed to interpreters (``python -c``, ``perl -e``, here-documents ...), scanned for
calls that delete ``/`` or the home directory, signal every process, or run a shell command
(whose text then goes through the shell deny-list).

Best effort: only literal arguments are seen (``shutil.rmtree("/")``,
``os.system("rm -rf /")``); code that builds its strings at run time gets past it.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable

from tea_agent_mini.shell.denypaths import canonical, describe_protected

DELETE_CALL = re.compile(
    r"\b(?:rmtree|rm_rf|rm_r|remove_tree|rmSync|rmdirSync|rimraf|fs\.rm|fs\.rmdir|remove_dir|"
    r"rmdir_p)\s*\("
)
SHELL_CALL = re.compile(
    r"\b(?:system|popen|spawnSync|execSync|exec|getoutput|getstatusoutput|check_output|"
    r"check_call|call|run|Popen|spawn|qx)\s*\("
)
SIGNAL_ALL = re.compile(r"\bkill(?:pg)?\s*\(\s*-1\b")
LITERAL = re.compile(r"""(?<!\w)[rbuRBU]{0,2}(['"])((?:\\.|(?!\1).)*?)\1""", re.S)
LIST_OF_LITERALS = re.compile(r"""\[\s*((?:[rbu]?(['"])(?:\\.|(?!\2).)*?\2\s*,?\s*)+)\]""", re.S)
ROOT_OR_HOME = re.compile(r"os\.(?:path\.)?sep\b|Path\.home\(\)|expanduser|\bHOME\b|homedir\(\)")
BACKTICKS = re.compile(r"`([^`\n]+)`")
ARGUMENTS_LIMIT = 2000


def find_danger(code: str, check_shell: Callable[[str], str | None]) -> str | None:
    """Why ``code`` is refused, or None; ``check_shell`` judges the shell commands it runs."""
    for match in DELETE_CALL.finditer(code):
        arguments = _arguments(code, match.end())
        literal = LITERAL.search(arguments)
        call = match.group().rstrip("( ")
        if literal is not None:
            what = describe_protected(canonical(_unescape(literal.group(2))))
            if what:
                return f"code deleting {what} ({call})"
        elif ROOT_OR_HOME.search(arguments):
            return f"code deleting / or the home directory ({call})"
    if SIGNAL_ALL.search(code):
        return "code signalling every process (kill of pid -1)"
    commands = [_command(_arguments(code, m.end())) for m in SHELL_CALL.finditer(code)]
    commands += [m.group(1) for m in BACKTICKS.finditer(code)]
    for command in commands:
        reason = check_shell(command) if command else None
        if reason:
            return reason
    return None


def _arguments(code: str, start: int) -> str:
    """The text from ``start`` to the parenthesis that closes the call (quotes respected)."""
    depth, index, end = 1, start, min(len(code), start + ARGUMENTS_LIMIT)
    while index < end:
        char = code[index]
        if char in "'\"":
            closing = code.find(char, index + 1)
            while closing > 0 and code[closing - 1] == "\\":
                closing = code.find(char, closing + 1)
            index = end if closing < 0 else closing
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return code[start:index]
        index += 1
    return code[start:end]


def _command(arguments: str) -> str | None:
    """The shell command a call runs: a string literal, or a list of them (argv)."""
    text = arguments.lstrip()
    listed = LIST_OF_LITERALS.match(text)
    if listed is not None:
        return shlex.join(_unescape(m.group(2)) for m in LITERAL.finditer(listed.group(1)))
    first = LITERAL.match(text)
    if first is None:
        return None
    literals = [_unescape(first.group(2))]
    rest = text[first.end() :]
    while (more := re.match(r"\s*,\s*", rest)) and (item := LITERAL.match(rest, more.end())):
        literals.append(_unescape(item.group(2)))
        rest = rest[item.end() :]
    return literals[0] if len(literals) == 1 else shlex.join(literals)


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)
