"""Read-only git that runs none of the repository's own programs.

A repository's config (``.git/config``, ``config.worktree`` and the files they include) can name
programs that git runs during plain reads: ``core.fsmonitor`` and clean filters on status, the
post-index-change hook on diff (which writes the index even with ``--no-optional-locks``),
textconv, smudge and external diff drivers on diff and show, ``gpg.program`` with
``log.showSignature`` on log and show, a promisor remote's ``uploadpack`` when show fetches a
missing object, and status and diff start git in submodules whose own configs do the same. An
open workspace is not a trusted one (an unpacked archive with its ``.git`` is enough), and
read-only mode (approval: never) promises that nothing runs.

So :func:`read_only_options` overrides, with ``-c`` (the highest-priority scope, inherited by
any git that git itself starts):

- every program-naming key the repository sets (any scope but system, global and command
  line): with the user's own value for that key when there is one, so a git-lfs filter set up
  in the user's config keeps working, else with a value that runs nothing;
- every ``protocol.*.allow`` that any scope sets, and ``protocol.allow``, with ``never``: reads
  must not fetch, since a promisor remote's lazy fetch runs the repository's
  ``remote.<name>.uploadpack``, which ``-c`` cannot replace (git keeps its first value);
- a fixed set: fsmonitor off, hooks looked up under the null device, no signature checks,
  short submodule diffs.

``git config --list`` itself runs nothing. Callers add ``--no-ext-diff --no-textconv`` to diff
and show and ``--ignore-submodules=dirty`` to status and diff (see ``git.py``).

Mutating calls (add, commit) keep git's behaviour but for fsmonitor, which only saves time:
they run only after the user approved them (or under approval: auto, where toolkit_exec may run
anything anyway), and filters (git-lfs, line endings), hooks and commit signing are part of what
committing in that repository means; without them the commit would hold other content than
``git commit`` would have made.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tea_agent_mini.errors import ToolError

LIST_TIMEOUT = 30.0
USER_SCOPES = frozenset({"system", "global", "command"})
# A key's last part -> a value that runs nothing, for keys that name a program (or, for
# "required", that make a filter's absence fatal).
PROGRAM_KEYS = {
    "textconv": "",
    "command": "",
    "cmd": "",
    "clean": "",
    "smudge": "",
    "process": "",
    "required": "false",
    "driver": "",
    "helper": "",
    "program": "",
    "defaultkeycommand": "",
    "sshcommand": "",
    "gitproxy": "",
    "askpass": "",
    "editor": "",
    "pager": "cat",
    "external": "",
    "alternaterefscommand": "",
    "packobjectshook": "",
}
FIXED = (
    "core.fsmonitor=false",
    f"core.hooksPath={os.devnull}",
    "log.showSignature=false",
    "diff.submodule=short",
)


@dataclass(frozen=True)
class ConfigEntry:
    scope: str
    key: str  # as git lists it: section and name in lower case, subsection as written
    value: str | None  # None for a bare key (boolean true)


def read_only_options(workspace: Path) -> list[str]:
    """``-c`` options for a read-only git call in ``workspace`` (see the module docstring)."""
    entries = list_config(workspace)
    pairs = [*repository_overrides(entries), *no_fetching(entries), *FIXED]
    return [part for pair in pairs for part in ("-c", pair)]


def list_config(workspace: Path) -> list[ConfigEntry]:
    """Every config entry git sees in ``workspace``, with its scope, includes followed."""
    argv = ["git", "--no-pager", "-C", str(workspace), "config", "--list", "--show-scope"]
    try:
        done = subprocess.run(
            [*argv, "--includes", "-z"],
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=LIST_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ToolError(f"cannot read the git config: {exc}") from exc
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip() or f"exit code {done.returncode}"
        raise ToolError(f"cannot read the git config: {message}")
    return parse_config_listing(done.stdout)


def parse_config_listing(data: bytes) -> list[ConfigEntry]:
    """``git config --list --show-scope -z`` output: ``scope NUL key [LF value] NUL`` ..."""
    fields = data.decode("utf-8", errors="surrogateescape").split("\0")
    entries = []
    for scope, item in zip(fields[0::2], fields[1::2], strict=False):
        key, newline, value = item.partition("\n")
        entries.append(ConfigEntry(scope, key, value if newline else None))
    return entries


def runs_program(key: str) -> bool:
    return key.rpartition(".")[2] in PROGRAM_KEYS or key.split(".", 1)[0] == "pager"


def repository_overrides(entries: list[ConfigEntry]) -> list[str]:
    """``key=value`` settings that undo the repository's program-naming keys."""
    repository = {e.key for e in entries if e.scope not in USER_SCOPES and runs_program(e.key)}
    overrides = []
    for key in sorted(repository):
        _check_overridable(key)
        user = [e.value for e in entries if e.key == key and e.scope in USER_SCOPES]
        if key.endswith(".helper"):  # a list: an empty value clears it, then the user's own
            overrides += [f"{key}=", *(_setting(key, value) for value in user)]
        else:
            overrides.append(_setting(key, user[-1] if user else _neutral(key)))
    return overrides


def no_fetching(entries: list[ConfigEntry]) -> list[str]:
    """``protocol.allow=never`` and the same for every protocol that has its own setting."""
    named = {e.key for e in entries if e.key.startswith("protocol.") and e.key.endswith(".allow")}
    for key in named:
        _check_overridable(key)
    return [f"{key}=never" for key in sorted(named | {"protocol.allow"})]


def _check_overridable(key: str) -> None:
    if "=" in key:
        # -c splits at the first "=", so this key cannot be overridden: refuse, not guess
        raise ToolError(f"the git config sets {key!r}; read-only git refuses to run with it")


def _neutral(key: str) -> str:
    section, _, name = key.rpartition(".")
    return "false" if section == "pager" else PROGRAM_KEYS[name]


def _setting(key: str, value: str | None) -> str:
    return key if value is None else f"{key}={value}"
