"""The deny-list's rules for files, devices and processes (see ``denylist``).

Each rule gets the program's name, its arguments (after ``sudo``, ``env`` ... were taken off)
and the command they came from, and returns why the command is refused, or None.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from tea_agent_mini.shell.denypaths import (
    canonical,
    describe_protected,
    is_device,
    is_disk,
    is_system_file,
)
from tea_agent_mini.shell.shellwords import OUTPUT_OPS, Command, Word

DELETERS = frozenset({"rm", "shred", "unlink", "rmdir"})
POWER = frozenset({"shutdown", "reboot", "halt", "poweroff"})
FORMATTERS = frozenset({"mkfs", "mke2fs", "mkswap", "mkdosfs", "mkntfs", "wipefs", "blkdiscard"})
PARTITIONERS = frozenset({"fdisk", "sfdisk", "cfdisk", "gdisk", "sgdisk", "parted"})
MODE = re.compile(r"[0-7]{1,4}$|[ugoa]*[-+=]")  # chmod's mode operand


@dataclass
class Line:
    """What is known while walking one command line."""

    depth: int
    cwd: str | None = None  # canonical, once a `cd` made it known
    previous: Command | None = None


def split_options(args: list[Word]) -> tuple[list[str], list[Word]]:
    """(options, operands); ``--`` ends the options."""
    options: list[str] = []
    operands: list[Word] = []
    for index, word in enumerate(args):
        if word.text == "--":
            operands.extend(args[index + 1 :])
            break
        if word.text.startswith("-") and len(word.text) > 1:
            options.append(word.text)
        else:
            operands.append(word)
    return options, operands


def redirects(command: Command, line: Line) -> str | None:
    for op, target in command.redirects:
        if op not in OUTPUT_OPS or target.text.isdigit() or target.text == "-":
            continue
        path = canonical(target.text, line.cwd)
        if path is not None and is_disk(path):
            return f"writing to the disk device {path}"
        if path is not None and is_system_file(path):
            return f"writing to the system file {path} (redirection {op})"
    return None


def _rm(name: str, args: list[Word], command: Command, line: Line) -> str | None:
    options, targets = split_options(args)
    if "--no-preserve-root" in options:
        return f"{name} --no-preserve-root"
    for target in targets:
        path = canonical(target.text, line.cwd)
        what = describe_protected(path)
        if what:
            return f"{name} of {what}"
        if path is not None and is_system_file(path):
            return f"{name} of the system file {path}"
    return None


def _find(name: str, args: list[Word], command: Command, line: Line) -> str | None:
    index = 0
    while index < len(args) and args[index].text in ("-H", "-L", "-P"):
        index += 1
    roots = []
    while index < len(args) and not args[index].text.startswith(("-", "(", "!")):
        roots.append(args[index])
        index += 1
    rest = [w.text for w in args[index:]]
    execs = [i for i, t in enumerate(rest) if t in ("-exec", "-execdir", "-ok", "-okdir")]
    deleting = "-delete" in rest or any(
        i + 1 < len(rest) and rest[i + 1].rsplit("/", 1)[-1] in DELETERS for i in execs
    )
    if deleting:
        return find_roots(roots, line)
    return None


def find_roots(roots: list[Word], line: Line) -> str | None:
    for root in roots or [Word(".")]:
        what = describe_protected(canonical(root.text, line.cwd))
        if what:
            return f"find deleting files in {what}"
    return None


def _modes(name: str, args: list[Word], command: Command, line: Line) -> str | None:
    options, operands = split_options(args)
    recursive = any(o == "--recursive" or (o[1] != "-" and "R" in o) for o in options)
    targets = operands[1:]
    if name == "chmod" and operands and not MODE.match(operands[0].text):
        targets = operands  # the mode was written like an option (chmod -x -R /)
    if any(o.startswith("--reference") for o in options):
        targets = operands
    for target in targets:
        path = canonical(target.text, line.cwd)
        what = describe_protected(path)
        if path == "/" or (recursive and what):
            return f"{name}{' -R' if recursive else ''} on {what}"
    return None


def _dd(name: str, args: list[Word], command: Command, line: Line) -> str | None:
    for word in args:
        if word.text.startswith("of="):
            path = canonical(word.text[3:], line.cwd)
            if path is not None and (is_disk(path) or is_system_file(path)):
                return f"dd onto {path}"
    return None


def _disk_tool(name: str, args: list[Word], command: Command, line: Line) -> str | None:
    options, operands = split_options(args)
    listing = {"-l", "--list", "-d", "--dump"} & set(options)
    if name in PARTITIONERS and (listing or any(w.text == "print" for w in operands)):
        return None
    for word in operands:
        path = canonical(word.text, line.cwd)
        if word.dynamic or (path is not None and is_device(path)):
            return f"{name} on a disk device ({word.text})"
    return None


def _writes(name: str, args: list[Word], command: Command, line: Line) -> str | None:
    """tee and shred: refused onto disks and system files (shred also on protected dirs)."""
    for word in split_options(args)[1]:
        path = canonical(word.text, line.cwd)
        if path is None:
            continue
        if is_disk(path) or is_system_file(path):
            return f"{name} onto {path}"
        if name == "shred" and (is_device(path) or describe_protected(path)):
            return f"shred of {describe_protected(path) or path}"
    return None


def _kill(name: str, args: list[Word], command: Command, line: Line) -> str | None:
    texts = [w.text for w in args]
    if name == "killall5":
        return "killall5 (signals every process)"
    if texts == ["-1"]:
        return "kill -1 (read as: every process)"
    index = 0
    if texts[:1] and texts[0] in ("-s", "-n", "--signal"):
        index = 2
    elif texts[:1] and re.fullmatch(r"-(?:\d+|[A-Za-z][A-Za-z0-9+-]*)", texts[0]):
        index = 1
    if texts[index : index + 1] == ["--"]:
        index += 1
    if "-1" in texts[index:]:
        return "kill of pid -1 (every process)"
    return None


def _pkill(name: str, args: list[Word], command: Command, line: Line) -> str | None:
    values = {"-u", "-U", "-g", "-G", "-P", "-s", "-t", "-F", "-o", "-y", "--signal", "--uid"}
    patterns, index = [], 0
    while index < len(args):
        text = args[index].text
        index += 2 if text in values else 1
        if not text.startswith("-"):
            patterns.append(text)
    if not patterns or any(p in ("", ".", ".*", "^", "$") for p in patterns):
        return f"{name} without a process name (kills every matching user's process)"
    return None


def _power(name: str, args: list[Word], command: Command, line: Line) -> str | None:
    texts = {w.text for w in args}
    if name in POWER or (name in ("init", "telinit") and texts & {"0", "6"}):
        return "shutting down or rebooting"
    if name == "systemctl" and texts & {"poweroff", "reboot", "halt", "kexec", "soft-reboot"}:
        return "shutting down or rebooting"
    return None


def _mv(name: str, args: list[Word], command: Command, line: Line) -> str | None:
    options, operands = split_options(args)
    sources = operands if any(o.startswith(("-t", "--target")) for o in options) else operands[:-1]
    for word in sources:
        what = describe_protected(canonical(word.text, line.cwd))
        if what:
            return f"mv of {what}"
    return None


Rule = Callable[[str, list[Word], Command, Line], "str | None"]
RULES: dict[str, Rule] = {
    "rm": _rm,
    "unlink": _rm,
    "find": _find,
    "chmod": _modes,
    "chown": _modes,
    "chgrp": _modes,
    "dd": _dd,
    "tee": _writes,
    "shred": _writes,
    "kill": _kill,
    "killall5": _kill,
    "pkill": _pkill,
    "killall": _pkill,
    "mv": _mv,
    **dict.fromkeys(FORMATTERS | PARTITIONERS, _disk_tool),
    **dict.fromkeys(POWER | {"init", "telinit", "systemctl"}, _power),
}


def rule_for(name: str) -> Rule | None:
    if name in RULES:
        return RULES[name]
    return _disk_tool if name.startswith("mkfs.") else None
