"""Read Nuitka's compilation report (``--report``) to check what went into the executable.

The pitfalls it guards against fail silently at build time: a module that leaks in through an
optional import (zstandard via ``httpx._decoders``), the ``_json`` accelerator left out, package
data not included. The report names every module and data file, so each can be checked.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from .nuitka_build import NuitkaPlan
from .results import Check
from .source_checks import package_files
from .whitelist import PACKAGE

# Package data the runtime reads through importlib.resources.
DATA_DIRS = (
    f"{PACKAGE}/server/static/",
    f"{PACKAGE}/skills/bundled/",
    f"{PACKAGE}/agent/bundled/",
)
REQUIRED_MODULES = ("_json",)


@dataclass(frozen=True)
class CompiledContents:
    modules: frozenset[str]  # every module Nuitka included, compiled or as an extension
    data_files: frozenset[str]  # destination paths, posix, relative to the app root


def read_report(path: Path) -> CompiledContents:
    """Raises OSError or ``xml.etree.ElementTree.ParseError`` when the report is unreadable."""
    root = ET.parse(path).getroot()
    modules = {node.get("name", "") for node in root.iter("module")}
    for node in root.iter("included_extension"):
        # extension modules are named by file: "_json.cpython-311-x86_64-linux-gnu.so"
        modules.add(_extension_module(node.get("dest_path") or node.get("name", "")))
    data = {(node.get("name") or "").replace("\\", "/") for node in root.iter("data_file")}
    return CompiledContents(frozenset(modules - {""}), frozenset(data - {""}))


def _extension_module(dest_path: str) -> str:
    path = dest_path.replace("\\", "/")
    parts = path.split("/")
    parts[-1] = parts[-1].split(".", 1)[0]
    return ".".join(parts)


def leaked(modules: frozenset[str], excluded: dict[str, str]) -> dict[str, str]:
    """Included modules that fall under an excluded name (the name itself or a submodule)."""
    found = {}
    for module in sorted(modules):
        for name, reason in excluded.items():
            if module == name or module.startswith(name + "."):
                found[module] = reason
    return found


def expected_data(root: Path) -> list[str]:
    """The package data files of the source tree that the executable must carry."""
    return [f for f in package_files(root) if f.startswith(DATA_DIRS) and not f.endswith(".py")]


def check_report(plan: NuitkaPlan) -> list[Check]:
    try:
        contents = read_report(plan.report)
    except (OSError, ET.ParseError) as exc:
        return [Check("compilation report", [f"cannot read {plan.report}: {exc}"])]
    return [
        check_excluded(contents, plan.excluded),
        check_required(contents),
        check_data(contents, expected_data(plan.root)),
    ]


def check_excluded(contents: CompiledContents, excluded: dict[str, str]) -> Check:
    check = Check("excluded modules kept out")
    found = leaked(contents.modules, excluded)
    roots = sorted({name.split(".")[0] for name in found})
    for name in roots:
        count = sum(1 for module in found if module.split(".")[0] == name)
        check.fail(f"{name} is in the executable ({count} modules): {excluded.get(name, '')}")
    if check.ok:
        check.detail = f"{len(contents.modules)} modules, none of {len(excluded)} excluded names"
    return check


def check_required(contents: CompiledContents) -> Check:
    check = Check("required modules included", detail=", ".join(REQUIRED_MODULES))
    for name in REQUIRED_MODULES:
        if name not in contents.modules:
            check.fail(f"{name} is missing (Nuitka drops it unless --include-module={name})")
    return check


def check_data(contents: CompiledContents, expected: list[str]) -> Check:
    check = Check("package data included")
    missing = [name for name in expected if name not in contents.data_files]
    if missing:
        shown = ", ".join(missing[:5]) + (" …" if len(missing) > 5 else "")
        check.fail(f"{len(missing)} of {len(expected)} data files missing: {shown}")
    counts = {d: sum(1 for f in expected if f.startswith(d)) for d in DATA_DIRS}
    check.detail = ", ".join(f"{n} under {d}" for d, n in counts.items())
    return check
