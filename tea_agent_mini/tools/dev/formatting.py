"""toolkit_format_code: run ruff format, black, clang-format or prettier when installed.

None of them is a dependency of the mini build: a formatter is used when it is on PATH, and the
answer says plainly which ones are missing. Which files changed is found by comparing hashes, so
the report is the same whatever the formatter prints.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from tea_agent_mini.errors import ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.programs import find_program, run_program, tail
from tea_agent_mini.toolkit.registry import tool
from tea_agent_mini.tools.files.search import walk

MAX_FILES = 1000
FILES_PER_RUN = 100
TIMEOUT = 120.0

PYTHON = frozenset({".py", ".pyi"})
C_FAMILY = frozenset({".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx", ".proto"})
WEB = frozenset(
    {".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".json", ".css", ".scss", ".less", ".html"}
    | {".vue", ".md", ".yaml", ".yml", ".graphql"}
)


@dataclass(frozen=True)
class Formatter:
    name: str
    program: str
    extensions: frozenset[str]
    write_args: tuple[str, ...]
    check_args: tuple[str, ...]


FORMATTERS = {
    "ruff": Formatter("ruff", "ruff", PYTHON, ("format",), ("format", "--diff")),
    "black": Formatter("black", "black", PYTHON, ("--quiet",), ("--quiet", "--check", "--diff")),
    "clang-format": Formatter(
        "clang-format", "clang-format", C_FAMILY, ("-i",), ("--dry-run", "-Werror")
    ),
    "prettier": Formatter("prettier", "prettier", WEB, ("--write",), ("--check",)),
}
# the formatter argument: auto, or a key of FORMATTERS
FormatterChoice = Literal["auto", "ruff", "black", "clang-format", "prettier"]
# For formatter=auto: per kind of file, the formatters to try in order.
AUTO_CHOICES = (
    ("Python", PYTHON, ("ruff", "black")),
    ("C/C++", C_FAMILY, ("clang-format",)),
    ("web", WEB, ("prettier",)),
)


@tool("toolkit_format_code", mutates=True)
def toolkit_format_code(
    ctx: ToolContext, path: str = ".", formatter: FormatterChoice = "auto", check: bool = False
) -> str:
    """Format source files with an installed formatter: ruff format or black (Python),
    clang-format (C/C++), prettier (JS/TS/JSON/CSS/Markdown/YAML). `path` may be a file or a
    directory (.gitignore'd files skipped). formatter=auto picks one per file type among those
    installed. check=true only reports what would change. The answer lists the files
    reformatted and names the formatters that are not installed.

    Args:
        path: file or directory (default '.')
        formatter: which formatter (default auto)
        check: report what would change without writing (default false)
    """
    target = ctx.resolve(path or ".", must_exist=True)
    if formatter != "auto" and formatter not in FORMATTERS:
        raise ToolError(f"unknown formatter {formatter!r}; use auto or {', '.join(FORMATTERS)}")
    files = _files(ctx, target)
    if formatter == "auto":
        plan, missing = _auto_plan(files)
    else:
        plan, missing = _explicit_plan(FORMATTERS[formatter], files, single=target.is_file())
    if not plan:
        if missing:
            raise ToolError("nothing formatted: " + "; ".join(missing))
        raise ToolError(f"no files under '{path}' that a formatter handles")
    reports = [_run(ctx, chosen, chosen_files, check) for chosen, chosen_files in plan]
    if missing:
        reports.append("not formatted: " + "; ".join(missing))
    return "\n\n".join(reports)


def _files(ctx: ToolContext, target: Path) -> list[Path]:
    if target.is_file():
        return [target]
    found = []
    for entry in walk(ctx, target):
        if not entry.is_dir:
            found.append(entry.path)
            if len(found) >= MAX_FILES:
                break
    return found


def _auto_plan(files: list[Path]) -> tuple[list[tuple[Formatter, list[Path]]], list[str]]:
    plan, missing = [], []
    for kind, extensions, names in AUTO_CHOICES:
        matching = [f for f in files if f.suffix.lower() in extensions]
        if not matching:
            continue
        chosen = next((FORMATTERS[n] for n in names if find_program(FORMATTERS[n].program)), None)
        if chosen is None:
            missing.append(
                f"{len(matching)} {kind} file(s): {' or '.join(names)} not installed "
                "(not found on PATH)"
            )
        else:
            plan.append((chosen, matching))
    return plan, missing


def _explicit_plan(
    formatter: Formatter, files: list[Path], *, single: bool
) -> tuple[list[tuple[Formatter, list[Path]]], list[str]]:
    if find_program(formatter.program) is None:
        installed = [n for n, f in FORMATTERS.items() if find_program(f.program)]
        raise ToolError(
            f"{formatter.name} is not installed (not found on PATH). Installed formatters: "
            f"{', '.join(installed) or 'none'}."
        )
    matching = files if single else [f for f in files if f.suffix.lower() in formatter.extensions]
    return ([(formatter, matching)] if matching else []), []


def _run(ctx: ToolContext, formatter: Formatter, files: list[Path], check: bool) -> str:
    before = {f: _digest(f) for f in files}
    outputs, nonzero = [], False
    for start in range(0, len(files), FILES_PER_RUN):
        batch = [str(f) for f in files[start : start + FILES_PER_RUN]]
        args = formatter.check_args if check else formatter.write_args
        result = run_program(ctx, [formatter.program, *args, *batch], timeout=TIMEOUT)
        if result.output.strip():
            outputs.append(result.output.strip())
        if result.killed:
            outputs.append(result.killed)
        nonzero |= result.exit_code != 0
    changed = [ctx.relative(f) for f in files if _digest(f) != before[f]]
    head = f"{formatter.name}: "
    if check:
        # in check mode a non-zero exit means "would reformat" (or could not parse a file)
        verdict = "would reformat some files" if nonzero else "all files already formatted"
        head += f"checked {len(files)} file(s), {verdict} (nothing written)"
    else:
        head += f"reformatted {len(changed)} of {len(files)} file(s)"
        if changed:
            head += ": " + ", ".join(changed[:50]) + (" ..." if len(changed) > 50 else "")
    if nonzero and not check:
        head += f"\n{formatter.name} reported errors (exit code not 0)"
    if outputs and (check or nonzero):
        head += "\n" + tail("\n".join(outputs), 6000)
    return head


def _digest(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None
