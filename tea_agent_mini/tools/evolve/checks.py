"""The layers of toolkit_self_evolve, each one a :class:`Layer` in the report.

Before the change: the git snapshot (``snapshot``: HEAD when the tree is clean; git's read-only
options, so none of the repository's programs run) and the lint baseline. After it: ``syntax``,
``compile`` (to a temporary folder, never the workspace's ``__pycache__``), ``lint`` (ruff, when
installed: no finding that was not there before), ``signatures`` (public functions and classes
whose parameters changed or that disappeared, with their callers; a warning, never a failure)
and ``tests`` (pytest, when the project has tests, in the sandbox shell commands get).
"""

from __future__ import annotations

import ast
import json
import py_compile
import re
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from tea_agent_mini.errors import ToolError
from tea_agent_mini.shell.orphans import JobTable
from tea_agent_mini.shell.runner import run_command
from tea_agent_mini.toolkit.context import SKIP_DIRS, ToolContext
from tea_agent_mini.toolkit.programs import (
    command_line,
    find_program,
    project_python,
    python_has,
    run_program,
    tail,
)
from tea_agent_mini.tools.dev.testrun import OUTPUT_LIMIT, parse_pytest_output
from tea_agent_mini.tools.dev.tomlreader import loads as toml_loads
from tea_agent_mini.tools.evolve.target import Target
from tea_agent_mini.tools.git.gitsafe import read_only_options

Status = Literal["ok", "failed", "skipped", "warning"]
GIT_TIMEOUT = 30.0
RUFF_TIMEOUT = 60.0
MAX_CALLER_FILES = 2000
MAX_CALLER_BYTES = 1024 * 1024
SHOWN_CALLERS = 5
Finding = tuple[str, str]  # (rule, message): lines move when code changes, so they are left out


@dataclass(frozen=True)
class Layer:
    name: str
    status: Status
    detail: str = ""

    def line(self) -> str:
        detail = self.detail.strip().replace("\n", "\n    ")
        return f"- {self.name}: {self.status}" + (f" - {detail}" if detail else "")


# ---- before the change -------------------------------------------------------------------------


def git_snapshot(ctx: ToolContext, target: Target) -> Layer:
    """HEAD as the snapshot when the tree is clean; skipped when there is no repository, no
    commit yet, or uncommitted changes (the backup keeps the original then)."""
    if target.user_tool is not None:
        return Layer("snapshot", "skipped", "your tools folder is not a git repository")
    if find_program("git") is None:
        return Layer("snapshot", "skipped", "git is not installed")
    root = target.root
    head = _git(ctx, root, "rev-parse", "--verify", "-q", "HEAD")
    if head is None:
        return Layer("snapshot", "skipped", "not a git repository, or no commit yet")
    status = _git(ctx, root, "status", "--porcelain=v1", "--untracked-files=no")
    if status is None:
        return Layer("snapshot", "skipped", "git status failed")
    changed = [line for line in status.splitlines() if line.strip()]
    if changed:
        return Layer(
            "snapshot",
            "skipped",
            f"{len(changed)} uncommitted change(s) in the tree: no git snapshot (the backup "
            "keeps the original)",
        )
    return Layer("snapshot", "ok", f"the tree is clean: HEAD {head[:12]} is the snapshot")


def _git(ctx: ToolContext, root: Path, *args: str) -> str | None:
    try:
        argv = ["git", "--no-pager", "--no-optional-locks", *read_only_options(root)]
        argv += ["-C", str(root), *args]
        result = run_program(ctx, argv, cwd=root, timeout=GIT_TIMEOUT)
    except ToolError:  # a config git cannot read or read-only git refuses: no snapshot
        return None
    if result.exit_code != 0 or result.killed:
        return None
    return result.output.strip()


def backup(home: Path, target: Target, original: bytes | None, stamp: str) -> Layer:
    """A copy of the original under ``<home>/backups/self_evolve/<stamp>/``."""
    if original is None:
        return Layer("backup", "skipped", "a new file: nothing to back up")
    copy = Path(home) / "backups" / "self_evolve" / stamp / target.shown.lstrip("/")
    try:
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_bytes(original)
    except OSError as exc:
        return Layer("backup", "failed", f"cannot write {copy}: {exc.strerror or exc}")
    return Layer("backup", "ok", str(copy))


# ---- after the change --------------------------------------------------------------------------


def syntax(target: Target, text: str) -> Layer:
    import yaml

    parsers = {
        ".py": lambda: ast.parse(text, filename=target.shown),
        ".pyi": lambda: ast.parse(text, filename=target.shown),
        ".json": lambda: json.loads(text),
        ".yaml": lambda: yaml.safe_load(text),
        ".yml": lambda: yaml.safe_load(text),
        ".toml": lambda: toml_loads(text),
    }
    suffix = target.path.suffix.lower()
    parse = parsers.get(suffix)
    if parse is None:
        return Layer("syntax", "skipped", f"no syntax check for {suffix or 'this'} files")
    try:
        parse()
    except SyntaxError as exc:
        return Layer("syntax", "failed", f"line {exc.lineno}: {exc.msg}")
    except (ValueError, yaml.YAMLError) as exc:  # JSON, TOML (a ValueError too) and YAML
        return Layer("syntax", "failed", f"{type(exc).__name__}: {exc}")
    return Layer("syntax", "ok")


def byte_compile(target: Target) -> Layer:
    if target.path.suffix != ".py":
        return Layer("compile", "skipped", "not a Python module")
    with tempfile.TemporaryDirectory(prefix="tea-evolve-") as temp:
        try:
            py_compile.compile(str(target.path), cfile=str(Path(temp) / "x.pyc"), doraise=True)
        except py_compile.PyCompileError as exc:
            return Layer("compile", "failed", exc.msg.strip())
    return Layer("compile", "ok")


def ruff_argv(ctx: ToolContext, target: Target) -> list[str] | None:
    if find_program("ruff") is not None:
        return ["ruff"]
    python = project_python(target.root, ctx.resolve("."))
    return [python, "-m", "ruff"] if python and python_has(python, "ruff") else None


def lint_findings(ctx: ToolContext, target: Target) -> list[dict] | None:
    """ruff's findings on the file as it is now; None when ruff is not there or failed."""
    ruff = ruff_argv(ctx, target)
    if ruff is None or target.path.suffix != ".py" or not target.path.is_file():
        return None
    with tempfile.TemporaryDirectory(prefix="tea-evolve-") as temp:
        report = Path(temp) / "ruff.json"
        argv = [*ruff, "check", "--no-cache", "--no-fix", "--exit-zero", "--output-format"]
        argv += ["json", "--output-file", str(report), str(target.path)]
        try:
            run_program(ctx, argv, cwd=target.root, timeout=RUFF_TIMEOUT)
            items = json.loads(report.read_text(encoding="utf-8"))
        except (OSError, ValueError, ToolError):  # no report: "ruff failed"
            return None
    return [item for item in items if isinstance(item, dict)]


def lint(ctx: ToolContext, target: Target, before: list[dict] | None) -> Layer:
    if target.path.suffix != ".py":
        return Layer("lint", "skipped", "not a Python module")
    after = lint_findings(ctx, target)
    if after is None:
        reason = "ruff is not installed" if ruff_argv(ctx, target) is None else "ruff failed"
        return Layer("lint", "skipped", reason)
    new = Counter(map(_finding, after)) - Counter(map(_finding, before or []))
    if not new:
        return Layer("lint", "ok", f"ruff: no new findings ({len(before or [])} before)")
    shown = []
    for item in after:
        if new.get(_finding(item), 0) > 0:
            new[_finding(item)] -= 1
            row = (item.get("location") or {}).get("row", "?")
            shown.append(f"line {row}: {item.get('code')} {item.get('message')}")
    return Layer("lint", "failed", "new ruff findings:\n" + "\n".join(shown[:20]))


def _finding(item: dict) -> Finding:
    return str(item.get("code") or "syntax"), str(item.get("message") or "")


def public_api(source: str) -> dict[str, str]:
    """Public top-level functions and classes (and their public methods) -> parameters."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    api: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _public(node.name):
            api[node.name] = f"{node.name}({ast.unparse(node.args)})"
        elif isinstance(node, ast.ClassDef) and _public(node.name):
            api[node.name] = f"class {node.name}"
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and (
                    _public(item.name) or item.name == "__init__"
                ):
                    key = f"{node.name}.{item.name}"
                    api[key] = f"{key}({ast.unparse(item.args)})"
    return api


def _public(name: str) -> bool:
    return not name.startswith("_")


def signatures(target: Target, old: str | None, new: str) -> Layer:
    if target.path.suffix != ".py":
        return Layer("signatures", "skipped", "not a Python module")
    if old is None:
        return Layer("signatures", "skipped", "a new file")
    before, after = public_api(old), public_api(new)
    notes = []
    for key, shape in before.items():
        if key in after and after[key] == shape:
            continue
        what = f"{shape} -> {after[key]}" if key in after else f"{shape} was removed"
        word = key.split(".")[0] if key.endswith(".__init__") else key.rpartition(".")[2]
        callers = find_callers(target, word)
        notes.append(what + (f"; used in {', '.join(callers)}" if callers else ""))
    if not notes:
        return Layer("signatures", "ok", "no public signature changed")
    return Layer("signatures", "warning", "\n".join(notes))


def find_callers(target: Target, word: str) -> list[str]:
    """Where ``word`` appears in the project's other Python files (``file:line``, a few)."""
    pattern = re.compile(rf"\b{re.escape(word)}\b")
    found: list[str] = []
    for index, path in enumerate(_python_files(target.root)):
        if index >= MAX_CALLER_FILES or len(found) >= SHOWN_CALLERS:
            break
        if path == target.path:
            continue
        try:
            if path.stat().st_size > MAX_CALLER_BYTES:
                continue
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        for number, line in enumerate(lines, 1):
            if pattern.search(line):
                found.append(f"{path.relative_to(target.root).as_posix()}:{number}")
                break
    return found


def _python_files(root: Path) -> Iterator[Path]:
    pending = [root]
    while pending:
        folder = pending.pop()
        try:
            entries = sorted(folder.iterdir())
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir() and not entry.is_symlink():
                if entry.name not in SKIP_DIRS and not entry.name.startswith("."):
                    pending.append(entry)
            elif entry.suffix == ".py":
                yield entry


def has_tests(root: Path) -> bool:
    if (root / "tests").is_dir() or (root / "test").is_dir():
        return True
    return any(root.glob("test_*.py")) or any(root.glob("*_test.py"))


def run_tests(ctx: ToolContext, target: Target, selection: list[str], timeout: float) -> Layer:
    """The project's tests (or ``selection``) with pytest, when there are tests to run."""
    if target.user_tool is not None:
        return Layer("tests", "skipped", "your own tools have no test suite")
    root = target.root
    if not selection and not has_tests(root):
        return Layer("tests", "skipped", f"no tests in {root}")
    python = project_python(root, ctx.resolve("."))
    if python is None or not python_has(python, "pytest"):
        return Layer("tests", "skipped", "pytest is not installed")
    argv = [python, "-m", "pytest", "-q", "-x", "-rfE", "--color=no", "-p", "no:cacheprovider"]
    try:
        result = run_command(
            command_line([*argv, *selection]),
            root,
            timeout,
            OUTPUT_LIMIT,
            cancel=ctx.cancel_event,
            jobs=JobTable.at(ctx.home),
            prefix=ctx.sandbox.prefix(ctx.workspace, root),
        )
    except ToolError as exc:  # the sandbox is required and cannot be had, or the run failed
        return Layer("tests", "failed", f"the tests could not run: {exc}")
    summary = parse_pytest_output(result.output)
    if result.exit_code == 0 and not result.killed:
        return Layer("tests", "ok", summary.line or "pytest passed")
    if result.exit_code == 5:
        return Layer("tests", "skipped", "pytest collected no tests")
    detail = [result.killed or summary.line or f"pytest exit code {result.exit_code}"]
    detail += [f"failing: {test}" for test in summary.failing[:10]]
    detail.append(tail(result.output.rstrip(), 1500))
    return Layer("tests", "failed", "\n".join(detail))
