"""toolkit_run_tests: run pytest in the workspace and report its summary as numbers."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from tea_agent_mini.errors import ToolError
from tea_agent_mini.shell.runner import CommandResult
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.programs import python_has, require_python, run_program, tail
from tea_agent_mini.toolkit.registry import tool

MAX_TIMEOUT = 3600.0
OUTPUT_LIMIT = 256 * 1024
_COUNT_RE = re.compile(
    r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?|rerun)\b"
)
_SUMMARY_RE = re.compile(r"^=*\s*(.*?)\s+in ([\d.]+)s\b.*?=*$")
_FAILED_RE = re.compile(r"^(FAILED|ERROR) (\S+)")
EXIT_MEANINGS = {
    0: "all tests passed",
    1: "some tests failed",
    2: "test run interrupted",
    3: "pytest internal error",
    4: "pytest usage error",
    5: "no tests were collected",
}


@dataclass
class TestSummary:
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    xfailed: int = 0
    xpassed: int = 0
    deselected: int = 0
    warnings: int = 0
    duration: float | None = None
    failing: list[str] = field(default_factory=list)
    line: str = ""  # pytest's own summary line, when there was one


def parse_pytest_output(text: str) -> TestSummary:
    """Counts from the final summary line and the ids from the FAILED/ERROR lines (-rfE)."""
    summary = TestSummary()
    for raw in reversed(text.splitlines()):
        line = raw.strip()
        match = _SUMMARY_RE.match(line)
        if match and (_COUNT_RE.search(match.group(1)) or "no tests ran" in match.group(1)):
            summary.line = line.strip("= ")
            summary.duration = float(match.group(2))
            for number, word in _COUNT_RE.findall(match.group(1)):
                key = {"error": "errors", "warning": "warnings", "rerun": ""}.get(word, word)
                if key:
                    setattr(summary, key, int(number))
            break
    for line in text.splitlines():
        match = _FAILED_RE.match(line)
        if match and match.group(2) not in summary.failing:
            summary.failing.append(match.group(2))
    return summary


@tool("toolkit_run_tests", mutates=True)
def toolkit_run_tests(
    ctx: ToolContext, path: str = ".", args: str = "", timeout: float = 300
) -> str:
    """Run the project's tests with pytest (python -m pytest -q) in the workspace and return
    the counts (passed, failed, errors, skipped), the ids of failing tests and the end of
    pytest's output. `path` is a test file, directory or node id like
    'tests/test_x.py::test_name'; `args` are extra pytest options such as '-k name -x'.
    `timeout` is how long the run may stay idle (no CPU or I/O) before it is stopped.

    Args:
        path: tests to run, relative to the workspace (default '.')
        args: extra pytest arguments, e.g. '-k login'
        timeout: idle timeout in seconds (default 300)
    """
    if not 0 < timeout <= MAX_TIMEOUT:
        raise ToolError(f"timeout must be between 0 and {MAX_TIMEOUT:g} seconds")
    file_part, sep, node = (path or ".").partition("::")
    target = ctx.resolve(file_part or ".", must_exist=True)
    try:
        extra = shlex.split(args or "")
    except ValueError as exc:
        raise ToolError(f"cannot split args {args!r}: {exc}") from exc
    python = require_python(target, ctx.resolve("."), "run the tests")
    if not python_has(python, "pytest"):
        raise ToolError(
            f"pytest is not installed for {python}; install it with "
            f"'{python} -m pip install pytest' (tests were not run)"
        )
    argv = [python, "-m", "pytest", "-q", "-rfE", "--color=no"]
    argv += [ctx.relative(target) + sep + node, *extra]
    result = run_program(ctx, argv, timeout=timeout, output_limit=OUTPUT_LIMIT)
    return format_report(parse_pytest_output(result.output), result.exit_code, result)


def format_report(summary: TestSummary, exit_code: int, result: CommandResult) -> str:
    counts = [
        f"{getattr(summary, name)} {name}"
        for name in ("passed", "failed", "errors", "skipped", "xfailed", "xpassed", "deselected")
        if getattr(summary, name)
    ]
    meaning = EXIT_MEANINGS.get(exit_code, "pytest stopped abnormally")
    head = f"pytest: {', '.join(counts) or 'no results'}"
    if summary.duration is not None:
        head += f" in {summary.duration:.2f}s"
    lines = [f"{head} (exit code {exit_code}: {meaning})"]
    if result.killed:
        lines.append(result.killed)
    if summary.failing:
        lines.append("failing tests:")
        lines += [f"  {test_id}" for test_id in summary.failing[:100]]
    lines.append("---")
    lines.append(tail(result.output.rstrip(), 800 if exit_code == 0 else 6000))
    return "\n".join(lines)
