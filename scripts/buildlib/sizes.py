"""Installed sizes in a venv, per distribution, from each dist-info's RECORD."""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from pathlib import Path

# Installer tooling that lives in every venv and is no part of the dependency closure.
TOOLING = frozenset({"pip", "setuptools", "wheel", "distribute"})


@dataclass
class InstalledSizes:
    per_dist: dict[str, int] = field(default_factory=dict)  # name -> bytes on disk (with .pyc)
    package: str = ""

    @property
    def package_bytes(self) -> int:
        return self.per_dist.get(self.package, 0)

    @property
    def closure_bytes(self) -> int:
        """The package plus everything it pulled in, without pip/setuptools."""
        return sum(size for name, size in self.per_dist.items() if name not in TOOLING)

    def to_dict(self) -> dict[str, object]:
        closure = {k: v for k, v in self.per_dist.items() if k not in TOOLING}
        return {
            "package_bytes": self.package_bytes,
            "closure_bytes": self.closure_bytes,
            "per_dist": dict(sorted(closure.items(), key=lambda kv: -kv[1])),
            "tooling_bytes": sum(v for k, v in self.per_dist.items() if k in TOOLING),
        }


def site_packages(venv: Path) -> Path:
    found = sorted(venv.glob("lib/python3*/site-packages")) or sorted(
        venv.glob("Lib/site-packages")
    )
    if not found:
        raise FileNotFoundError(f"no site-packages under {venv}")
    return found[0]


def measure(venv: Path, package: str) -> InstalledSizes:
    site = site_packages(venv)
    sizes = InstalledSizes(package=_normalise(package))
    for dist_info in sorted(site.glob("*.dist-info")):
        name = _normalise(dist_info.name[: -len(".dist-info")].rsplit("-", 1)[0])
        sizes.per_dist[name] = _record_bytes(site, dist_info)
    return sizes


def _record_bytes(site: Path, dist_info: Path) -> int:
    record = dist_info / "RECORD"
    paths = {dist_info / "RECORD"}
    if record.is_file():
        with record.open(newline="", encoding="utf-8") as handle:
            for row in csv.reader(handle):
                if row:
                    paths.add((site / row[0]).resolve())
    # pip records the .pyc files it compiles, but count caches it did not record as well
    for path in list(paths):
        if path.suffix == ".py":
            paths.update(path.parent.glob(f"__pycache__/{path.stem}.*.pyc"))
    return sum(p.stat().st_size for p in paths if p.is_file())


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()
