"""toolkit_git (read-only: status, diff, log, branch, show) and toolkit_git_commit.

git runs with ``-C <workspace>``; paths given by the model pass through the workspace
confinement first. Read-only calls use ``--no-optional-locks`` so that they can run next to
each other (and next to the user's own git) without taking the index lock, and run none of the
repository's own programs (hooks, filters, diff drivers, fsmonitor ...; see ``gitsafe.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from tea_agent_mini.errors import ToolError
from tea_agent_mini.shell.runner import CommandResult
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.programs import require_program, run_program
from tea_agent_mini.toolkit.registry import tool
from tea_agent_mini.tools.git.gitsafe import read_only_options

TIMEOUT = 60.0
OUTPUT_LIMIT = 256 * 1024
MAX_LOG = 500
FALLBACK_IDENTITY = ("-c", "user.name=tea-agent", "-c", "user.email=tea-agent@localhost")
_REF_RE = re.compile(r"^[^\s\-][^\s]{0,199}$")
_STATUS_WORDS = {
    "M": "modified",
    "A": "added",
    "D": "deleted",
    "R": "renamed",
    "C": "copied",
    "T": "type changed",
    "U": "unmerged",
}
_CONFLICTS = frozenset({"DD", "AU", "UD", "UA", "DU", "AA", "UU"})
# repository-named diff programs stay off; submodules are not entered (their configs can name
# programs too), so a submodule shows as changed only when its commit differs
NO_DIFF_PROGRAMS = ("--no-ext-diff", "--no-textconv")
NO_SUBMODULE_GIT = "--ignore-submodules=dirty"
STATUS = ("status", "--porcelain=v1", "--branch", NO_SUBMODULE_GIT)


def run_git(ctx: ToolContext, *args: str, read_only: bool = True) -> CommandResult:
    require_program("git", "run git commands")
    workspace = ctx.resolve(".")
    argv = ["git", "--no-pager", "-c", "core.quotepath=off", "-c", "color.ui=never"]
    if read_only:
        argv += ["--no-optional-locks", *read_only_options(workspace)]
    else:
        argv += ["-c", "core.fsmonitor=false"]
    argv += ["-C", str(workspace), *args]
    return run_program(ctx, argv, cwd=workspace, timeout=TIMEOUT, output_limit=OUTPUT_LIMIT)


def git_output(ctx: ToolContext, *args: str, read_only: bool = True) -> str:
    """git's output; raises ToolError with git's message when it fails."""
    result = run_git(ctx, *args, read_only=read_only)
    if result.exit_code != 0 or result.killed:
        raise failure(args[0], result)
    return result.output


def failure(command: str, result: CommandResult) -> ToolError:
    message = result.output.strip() or result.killed or f"exit code {result.exit_code}"
    if "not a git repository" in message:
        message += " (the workspace is not inside a git repository; 'git init' creates one)"
    return ToolError(f"git {command} failed: {message}")


def _pathspec(ctx: ToolContext, path: str | None) -> list[str]:
    if not path:
        return []
    return ["--", ctx.relative(ctx.resolve(path))]


def _ref(ref: str | None) -> list[str]:
    if not ref:
        return []
    if not _REF_RE.match(ref):
        raise ToolError(f"invalid ref {ref!r}: a commit, branch, tag or range like 'HEAD~3..HEAD'")
    return [ref]


@tool("toolkit_git", concurrency_safe=True)
def toolkit_git(
    ctx: ToolContext,
    action: Literal["status", "diff", "log", "branch", "show"],
    path: str | None = None,
    ref: str | None = None,
    staged: bool = False,
    stat: bool = False,
    max_count: int = 20,
) -> str:
    """Read-only git in the workspace. status: branch and changed files (staged, not staged,
    untracked, conflicts). diff: working-tree changes (staged=true: what is staged; `ref`:
    against a commit or range; stat=true: summary only). log: recent commits (one line each,
    `max_count`, optionally of `ref` or `path`). branch: local and remote branches. show: one
    commit with its patch (default HEAD). To commit use toolkit_git_commit.

    Args:
        action: which read-only git view to show
        path: limit to this file or directory
        ref: [diff/log/show] commit, branch, tag or range (a..b)
        staged: [diff] show staged changes
        stat: [diff/show] only the per-file summary
        max_count: [log] how many commits (default 20)
    """
    where = _pathspec(ctx, path)
    if action == "status":
        output = git_output(ctx, *STATUS, "--untracked-files=normal", *where)
        return format_status(parse_status(output))
    if action == "diff":
        flags = [*NO_DIFF_PROGRAMS, NO_SUBMODULE_GIT] + (["--cached"] if staged else [])
        flags += ["--stat"] if stat else []
        return git_output(ctx, "diff", *flags, *_ref(ref), *where) or "(no differences)"
    if action == "log":
        count = min(max(1, max_count), MAX_LOG)
        fmt = "--format=%h %ad %an%d %s"
        return git_output(
            ctx, "log", f"--max-count={count}", "--date=short", fmt, *_ref(ref), *where
        )
    if action == "branch":
        return git_output(ctx, "branch", "--all", "-vv") or "(no branches yet)"
    if action == "show":
        flags = [*NO_DIFF_PROGRAMS, "--stat"] + ([] if stat else ["--patch"])
        return git_output(ctx, "show", *flags, *(_ref(ref) or ["HEAD"]), *where)
    raise ToolError(f"unknown action {action!r}; use status, diff, log, branch or show")


@dataclass
class Status:
    branch: str = ""
    staged: list[tuple[str, str]] = field(default_factory=list)  # (word, path)
    unstaged: list[tuple[str, str]] = field(default_factory=list)
    untracked: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)


def parse_status(output: str) -> Status:
    """``git status --porcelain=v1 --branch`` output as a Status."""
    status = Status()
    for line in output.splitlines():
        if line.startswith("## "):
            status.branch = line[3:]
            continue
        if len(line) < 4 or line[2] != " ":
            continue
        code, path = line[:2], _unquote_path(line[3:])
        if code == "??":
            status.untracked.append(path)
        elif code in _CONFLICTS:
            status.conflicts.append(path)
        elif code != "!!":
            if code[0] not in " ?":
                status.staged.append((_STATUS_WORDS.get(code[0], code[0]), path))
            if code[1] not in " ?":
                status.unstaged.append((_STATUS_WORDS.get(code[1], code[1]), path))
    return status


def _unquote_path(text: str) -> str:
    """git quotes names with special characters: "a\\"b" -> a"b (also for 'old -> new')."""
    parts = re.findall(r'"(?:[^"\\]|\\.)*"|[^"]+', text)
    return "".join(_unquote(part) if part.startswith('"') else part for part in parts)


def _unquote(quoted: str) -> str:
    escapes = {"n": b"\n", "t": b"\t", '"': b'"', "\\": b"\\", "a": b"\a", "b": b"\b"}
    out = bytearray()
    body = quoted[1:-1]
    i = 0
    while i < len(body):
        char = body[i]
        if char == "\\" and re.match(r"[0-7]{3}", body[i + 1 : i + 4]):
            out.append(int(body[i + 1 : i + 4], 8))
            i += 4
        elif char == "\\" and body[i + 1 : i + 2] in escapes:
            out += escapes[body[i + 1]]
            i += 2
        else:
            out += char.encode("utf-8")
            i += 1
    return out.decode("utf-8", errors="replace")


def format_status(status: Status) -> str:
    lines = [f"branch: {status.branch or '(unknown)'}"]
    groups = [
        ("staged (will be committed)", [f"{word}: {path}" for word, path in status.staged]),
        ("not staged", [f"{word}: {path}" for word, path in status.unstaged]),
        ("untracked", status.untracked),
        ("conflicts (unmerged)", status.conflicts),
    ]
    for title, items in groups:
        if items:
            lines.append(f"{title} ({len(items)}):")
            lines += [f"  {item}" for item in items[:200]]
            if len(items) > 200:
                lines.append(f"  ... and {len(items) - 200} more")
    if len(lines) == 1:
        lines.append("working tree clean")
    return "\n".join(lines)


@tool("toolkit_git_commit", mutates=True)
def toolkit_git_commit(
    ctx: ToolContext, message: str, files: list[str] | None = None, all: bool = False
) -> str:
    """Commit in the workspace's git repository. `files` are staged first (paths relative to
    the workspace; deleted files too); all=true stages every change under the workspace, new
    files included (.gitignore respected). Without either, what is already staged is
    committed. The message must not be empty. Returns the new commit's hash and summary.

    Args:
        message: the commit message
        files: files to stage before committing
        all: stage all changes (git add -A)
    """
    if not message.strip():
        raise ToolError("the commit message is empty; say what the change does")
    if files:
        paths = [ctx.relative(ctx.resolve(name)) for name in files]
        git_output(ctx, "add", "--", *paths, read_only=False)
    elif all:
        git_output(ctx, "add", "-A", "--", ".", read_only=False)
    staged = run_git(ctx, "diff", *NO_DIFF_PROGRAMS, "--cached", "--quiet")
    if staged.exit_code not in (0, 1):
        raise failure("diff", staged)
    if staged.exit_code == 0:
        state = format_status(parse_status(git_output(ctx, *STATUS)))
        raise ToolError(
            f"nothing to commit: no staged changes. Pass files=[...] or all=true.\n{state}"
        )
    result = run_git(ctx, "commit", "-m", message, read_only=False)
    if result.exit_code != 0 and _needs_identity(result.output):
        result = run_git(ctx, *FALLBACK_IDENTITY, "commit", "-m", message, read_only=False)
    if result.exit_code != 0 or result.killed:
        raise failure("commit", result)
    summary = git_output(
        ctx, "show", *NO_DIFF_PROGRAMS, "--stat", "--format=%H%n%an <%ae>%n%s", "HEAD"
    )
    commit, author, subject, *stat = summary.strip("\n").split("\n")
    branch = git_output(ctx, "rev-parse", "--abbrev-ref", "HEAD").strip()
    body = "\n".join(line for line in stat if line.strip())
    return f"committed {commit[:12]} on {branch}: {subject}\nauthor: {author}\n{body}".rstrip()


def _needs_identity(output: str) -> bool:
    return "Please tell me who you are" in output or "unable to auto-detect email" in output
