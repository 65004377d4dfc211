"""toolkit_code_review: stdlib checks of Python files, plus ``ruff check`` when installed."""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from pathlib import Path
from typing import Annotated

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.programs import find_program, run_program
from tea_agent_mini.toolkit.registry import tool
from tea_agent_mini.tools.dev.pyreview import DEFAULT_MAX_FUNCTION_LINES, Finding, review_source
from tea_agent_mini.tools.files.search import walk

MAX_FILES = 300
MAX_FINDINGS_SHOWN = 300
RUFF_TIMEOUT = 60.0
# ruff rules that say the same as a built-in check: the built-in finding is dropped
SAME_AS_RUFF = {
    "F401": "unused-import",
    "E722": "bare-except",
    "B006": "mutable-default",
    "A001": "shadowed-builtin",
    "A002": "shadowed-builtin",
    "A003": "shadowed-builtin",
}


@tool("toolkit_code_review", concurrency_safe=True)
def toolkit_code_review(
    ctx: ToolContext,
    path: str = ".",
    max_function_lines: Annotated[
        int, f"report functions longer than this (default {DEFAULT_MAX_FUNCTION_LINES})"
    ] = DEFAULT_MAX_FUNCTION_LINES,
    use_ruff: bool = True,
) -> str:
    """Review Python code without running it: compiles each file (syntax errors) and checks
    for unused imports, bare 'except:', mutable default arguments, names shadowing builtins,
    over-long functions and TODO/FIXME comments; when ruff is installed its lint findings
    (project config honoured) are added. `path` is a .py file or a directory (.gitignore'd
    files skipped). Findings are 'path:line: [rule] message'.

    Args:
        path: file or directory (default '.')
        use_ruff: add ruff's findings when ruff is installed (default true)
    """
    target = ctx.resolve(path or ".", must_exist=True)
    files, more = _python_files(ctx, target)
    if not files:
        raise ToolError(f"no Python files under '{path}'")
    findings: dict[Path, list[Finding]] = {}
    for file in files:
        try:
            source = file.read_bytes().decode("utf-8", errors="replace")
        except OSError as exc:
            findings[file] = [Finding(1, "unreadable", exc.strerror or str(exc), "error")]
            continue
        findings[file] = review_source(source, file.name, max(5, max_function_lines))
    notes = [f"stopped at {MAX_FILES} files"] if more else []
    if use_ruff:
        notes.append(_add_ruff(ctx, files, findings))
    return _report(ctx, files, findings, notes)


def _python_files(ctx: ToolContext, target: Path) -> tuple[list[Path], bool]:
    if target.is_file():
        return [target], False
    found: list[Path] = []
    for entry in walk(ctx, target):
        if not entry.is_dir and entry.path.suffix in (".py", ".pyi"):
            if len(found) >= MAX_FILES:
                return found, True
            found.append(entry.path)
    return found, False


def _add_ruff(ctx: ToolContext, files: list[Path], findings: dict[Path, list[Finding]]) -> str:
    """Run ruff and merge its findings; returns a note on what happened."""
    if find_program("ruff") is None:
        return "ruff is not installed (not found on PATH): only the built-in checks ran"
    with tempfile.TemporaryDirectory(prefix="tea-review-") as temp:
        report = Path(temp) / "ruff.json"
        argv = ["ruff", "check", "--no-cache", "--no-fix", "--exit-zero"]
        argv += ["--output-format", "json", "--output-file", str(report), *map(str, files)]
        result = run_program(ctx, argv, timeout=RUFF_TIMEOUT)
        try:
            items = json.loads(report.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return f"ruff check failed (exit code {result.exit_code}): {result.output[-500:]}"
    by_path = {str(f): f for f in files}
    count = 0
    for item in items:
        name = str(item.get("filename", ""))
        file = by_path.get(name) or by_path.get(str(Path(name).resolve()))
        if file is None:
            continue
        row = (item.get("location") or {}).get("row") or 1
        code = item.get("code") or "syntax"
        same = SAME_AS_RUFF.get(code)
        found = [f for f in findings.get(file, []) if not (f.rule == same and f.line == row)]
        findings[file] = [*found, Finding(row, f"ruff {code}", item.get("message", ""))]
        count += 1
    return f"ruff check: {count} finding(s)"


def _report(
    ctx: ToolContext, files: list[Path], findings: dict[Path, list[Finding]], notes: list[str]
) -> str:
    lines: list[str] = []
    rules: Counter[str] = Counter()
    severities: Counter[str] = Counter()
    for file in files:
        for finding in sorted(findings.get(file, []), key=lambda f: f.line):
            rules[finding.rule] += 1
            severities[finding.severity] += 1
            if len(lines) < MAX_FINDINGS_SHOWN:
                lines.append(
                    f"{ctx.relative(file)}:{finding.line}: [{finding.rule}] {finding.message}"
                )
    total = sum(rules.values())
    head = f"reviewed {len(files)} Python file(s): {total} finding(s)"
    if total:
        head += " (" + ", ".join(f"{n} {s}" for s, n in sorted(severities.items())) + ")"
        head += "\nby rule: " + ", ".join(f"{rule} {n}" for rule, n in rules.most_common())
    body = "\n".join(lines)
    if total > len(lines):
        body += f"\n... {total - len(lines)} more not shown"
    return "\n".join([head, *notes]) + ("\n\n" + body if body else "")
