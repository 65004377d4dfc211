"""scripts/check_platforms.py: how pip's answers become table rows (pip itself needs PyPI).

The real resolution runs in `python scripts/check_platforms.py`; here pip's two possible answers
(a dry-run report, or "No matching distribution") are fed in, shaped as pip 23 prints them.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "check_platforms.py"
NO_PYYAML = (
    "ERROR: Could not find a version that satisfies the requirement PyYAML>=5.4 (from versions: "
    "none)\nERROR: No matching distribution found for PyYAML>=5.4\n"
)


def load():
    spec = importlib.util.spec_from_file_location("check_platforms", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def install_item(name: str, version: str, filename: str) -> dict:
    return {
        "metadata": {"name": name, "version": version},
        "download_info": {"url": f"https://files.example/{filename}"},
    }


REPORT = {
    "install": [
        install_item("httpx", "0.28.1", "httpx-0.28.1-py3-none-any.whl"),
        install_item(
            "charset-normalizer",
            "3.4.0",
            "charset_normalizer-3.4.0-cp311-cp311-manylinux_2_17_armv7l.manylinux2014_armv7l.whl",
        ),
    ]
}


def test_sdist_fallback_is_resolved_without_it(monkeypatch: pytest.MonkeyPatch) -> None:
    module = load()
    asked = []

    def fake_resolve(requirements, tags, python, work):
        asked.append(list(requirements))
        if any(r.startswith("PyYAML") for r in requirements):
            return None, NO_PYYAML
        return REPORT, ""

    monkeypatch.setattr(module, "pip_resolve", fake_resolve)
    rows = module.check_platform("linux armv7l", ["httpx>=0.24", "PyYAML>=5.4"], "3.11", Path("."))
    assert asked == [["httpx>=0.24", "PyYAML>=5.4"], ["httpx>=0.24"]]
    shown = {(r.name, r.status, r.artifact) for r in rows}
    assert shown == {
        ("pyyaml", "sdist fallback", "sdist"),
        ("httpx", "pure wheel", "py3-none-any"),
        (
            "charset-normalizer",
            "binary wheel",
            "cp311-cp311-manylinux_2_17_armv7l.manylinux2014_armv7l",
        ),
    }
    assert all(row.ok for row in rows)


def test_a_dependency_without_wheel_or_known_sdist_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    module = load()
    error = "ERROR: No matching distribution found for fancy-ext\n"
    monkeypatch.setattr(module, "pip_resolve", lambda *args: (None, error))
    rows = module.check_platform("musllinux x86_64", ["fancy-ext"], "3.11", Path("."))
    assert [(r.name, r.status, r.ok) for r in rows] == [("fancy-ext", "missing", False)]
    assert "MISSING" in module.render(rows, {}, "3.11")


def test_platform_tags_cover_the_targets() -> None:
    platforms = load().PLATFORMS
    assert "manylinux_2_17_armv7l" in platforms["linux armv7l"]
    assert "manylinux_2_36_armv7l" in platforms["linux armv7l"]  # Raspberry Pi OS 12
    assert "manylinux_2_28_aarch64" in platforms["linux aarch64"]
    assert platforms["musllinux x86_64"] == ["musllinux_1_1_x86_64", "musllinux_1_2_x86_64"]
