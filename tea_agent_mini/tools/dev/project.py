"""toolkit_build (python / make / npm builds) and toolkit_read_pyproject."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any, Literal

from tea_agent_mini.errors import ToolError
from tea_agent_mini.shell.runner import format_result
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.programs import (
    command_line,
    python_has,
    require_program,
    require_python,
    run_program,
    tail,
)
from tea_agent_mini.toolkit.registry import tool
from tea_agent_mini.tools.dev.tomlreader import TomlDecodeError, load_toml

BUILD_TIMEOUT = 600.0
MAKEFILES = ("GNUmakefile", "makefile", "Makefile")
_TARGET_RE = re.compile(r"^[A-Za-z0-9_.:/+-]{1,100}$")


def detect_kind(directory: Path) -> str | None:
    """python, make or npm, from the files in ``directory`` (in that order of preference)."""
    if (directory / "pyproject.toml").is_file() or (directory / "setup.py").is_file():
        return "python"
    if any((directory / name).is_file() for name in MAKEFILES):
        return "make"
    if (directory / "package.json").is_file():
        return "npm"
    return None


@tool("toolkit_build", mutates=True)
def toolkit_build(
    ctx: ToolContext,
    kind: Literal["auto", "python", "make", "npm"] = "auto",
    target: str | None = None,
    path: str = ".",
    no_isolation: bool = False,
    timeout: float = BUILD_TIMEOUT,
) -> str:
    """Build the project in the workspace (or in `path`). kind=auto detects it: pyproject.toml
    or setup.py -> a Python wheel and sdist with 'python -m build' (or 'pip wheel --no-deps'
    when the build package is missing) into dist/; Makefile -> make [target]; package.json ->
    npm run <target> (default 'build'). no_isolation=true builds with the installed backend
    instead of downloading it (offline machines). Returns the build output, the exit code and
    the artifacts made.

    Args:
        kind: build system (auto: detected from the project files)
        target: make target, npm script, or for python 'wheel' / 'sdist'
        path: project directory (default '.')
        no_isolation: [python] use the installed build backend (default false)
        timeout: idle timeout in seconds (default 600)
    """
    directory = ctx.resolve(path or ".", must_exist=True)
    if not directory.is_dir():
        raise ToolError(f"'{path}' is not a directory")
    if target is not None and not _TARGET_RE.match(target):
        raise ToolError(f"invalid target {target!r}")
    chosen = detect_kind(directory) if kind == "auto" else kind
    if chosen is None:
        raise ToolError(
            f"no pyproject.toml, setup.py, Makefile or package.json in {ctx.relative(directory)}; "
            "cannot tell how to build it"
        )
    if chosen == "python":
        python = require_python(directory, ctx.resolve("."), "build a Python project")
        argv = _python_command(python, target, no_isolation)
    elif chosen == "make":
        argv = [require_program("make", "build with a Makefile"), *([target] if target else [])]
    elif chosen == "npm":
        argv = [require_program("npm", "build a package.json project"), "run", target or "build"]
    else:
        raise ToolError(f"unknown kind {kind!r}; use auto, python, make or npm")
    dist = directory / "dist"
    before = set(dist.iterdir()) if dist.is_dir() else set()
    result = run_program(ctx, argv, cwd=directory, timeout=timeout)
    made = sorted(set(dist.iterdir()) - before) if dist.is_dir() else []
    report = f"build ({chosen}): {command_line(argv)}\n"
    report += format_result(dataclasses.replace(result, output=tail(result.output, 6000)))
    if made:
        report += "\nartifacts: " + ", ".join(ctx.relative(p) for p in made)
    return report


def _python_command(python: str, target: str | None, no_isolation: bool) -> list[str]:
    if target not in (None, "wheel", "sdist"):
        raise ToolError("for a Python build, target is 'wheel', 'sdist' or empty for both")
    if python_has(python, "build"):
        argv = [python, "-m", "build", "--outdir", "dist"]
        argv += [f"--{target}"] if target else []
        return argv + (["--no-isolation"] if no_isolation else []) + ["."]
    if target == "sdist":
        raise ToolError(
            f"building an sdist needs the 'build' package ({python} -m pip install build); "
            "pip can only build wheels"
        )
    argv = [python, "-m", "pip", "wheel", "--no-deps", "--wheel-dir", "dist"]
    return argv + (["--no-build-isolation"] if no_isolation else []) + ["."]


@tool("toolkit_read_pyproject", concurrency_safe=True)
def toolkit_read_pyproject(
    ctx: ToolContext, path: str = "pyproject.toml", raw: bool = False
) -> dict[str, Any]:
    """Read a pyproject.toml and return its main facts as JSON: name, version (also a dynamic
    version read from the file hatch or setuptools point to), requires-python, dependencies,
    optional dependencies, scripts, build backend and the [tool.*] sections. raw=true returns
    the whole parsed file.

    Args:
        path: default 'pyproject.toml'
        raw: return every table (default false)
    """
    file = ctx.resolve(path or "pyproject.toml", must_exist=True)
    if file.is_dir():
        file = ctx.resolve(str(file / "pyproject.toml"), must_exist=True)
    try:
        data, parser = load_toml(file)
    except (TomlDecodeError, UnicodeDecodeError) as exc:
        raise ToolError(f"cannot parse {ctx.relative(file)}: {exc}") from exc
    except OSError as exc:
        raise ToolError(f"cannot read {ctx.relative(file)}: {exc.strerror or exc}") from exc
    if raw:
        return {"file": ctx.relative(file), "parser": parser, "data": _jsonable(data)}
    return {"file": ctx.relative(file), "parser": parser, **summarize_pyproject(ctx, file, data)}


def summarize_pyproject(ctx: ToolContext, file: Path, data: dict[str, Any]) -> dict[str, Any]:
    project = data.get("project", {})
    system = data.get("build-system", {})
    version, source = project.get("version"), "pyproject.toml [project].version"
    if version is None and "version" in project.get("dynamic", []):
        version, source = dynamic_version(ctx, file.parent, data)
    return _jsonable(
        {
            "name": project.get("name"),
            "version": version,
            "version_source": source if version else None,
            "description": project.get("description"),
            "requires_python": project.get("requires-python"),
            "dependencies": project.get("dependencies", []),
            "optional_dependencies": project.get("optional-dependencies", {}),
            "scripts": project.get("scripts", {}),
            "build_backend": system.get("build-backend"),
            "build_requires": system.get("requires", []),
            "tool_sections": sorted(data.get("tool", {})),
        }
    )


def version_file(root: Path, data: dict[str, Any]) -> Path | None:
    """The file holding a dynamic ``__version__``: hatch's version path, setuptools' attr."""
    hatch = data.get("tool", {}).get("hatch", {}).get("version", {})
    if isinstance(hatch.get("path"), str):
        return root / hatch["path"]
    dynamic = data.get("tool", {}).get("setuptools", {}).get("dynamic", {}).get("version", {})
    attr = dynamic.get("attr") if isinstance(dynamic, dict) else None
    if isinstance(attr, str) and "." in attr:
        module = attr.rsplit(".", 1)[0].replace(".", "/")
        for base in (root, root / "src"):
            for candidate in (base / f"{module}.py", base / module / "__init__.py"):
                if candidate.is_file():
                    return candidate
    return None


VERSION_RE = re.compile(r"""^(__version__\s*=\s*)(["'])([^"']+)\2""", re.MULTILINE)


def dynamic_version(ctx: ToolContext, root: Path, data: dict[str, Any]) -> tuple[str | None, str]:
    file = version_file(root, data)
    if file is None:
        return None, ""
    try:
        checked = ctx.resolve(str(file))
        match = VERSION_RE.search(checked.read_text(encoding="utf-8"))
    except (OSError, ToolError):
        return None, ""
    return (match.group(3), f"{ctx.relative(checked)} __version__") if match else (None, "")


def _jsonable(value: Any) -> Any:
    """Dates and times from TOML become ISO strings."""
    if isinstance(value, dict):
        return {key: _jsonable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_jsonable(item) for item in value]
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value
