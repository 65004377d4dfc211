#!/usr/bin/env python3
"""Can `pip install tea_agent_mini` work without a compiler on ARM boards and on musl (Alpine)?

    python scripts/check_platforms.py                # all platforms, text table
    python scripts/check_platforms.py --json         # the same as JSON
    python scripts/check_platforms.py --platform "linux armv7l" --no-sdist-proof

For each target it asks pip to resolve the runtime dependency closure from wheels only
(``pip install --dry-run --report --only-binary=:all: --platform … --python-version …``) and
lists every distribution with the wheel it would get. A dependency without a pure or matching
wheel fails the check, unless its sdist is known to install without a compiler; for those (PyYAML)
the fallback is proved here: the sdist is built with its C extension disabled and a compiler that
always fails (CC=/bin/false), then imported as pure Python.

Needs PyPI. Limitation: pip evaluates environment markers such as ``platform_machine`` against
this machine, not the target; none of the runtime dependencies use such markers today.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import venv
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FALLBACK_REQUIREMENTS = [
    "httpx>=0.24",
    "PyYAML>=5.4",
    "requests>=2.28",
    "starlette>=0.27",
    "uvicorn>=0.22",
    "python-multipart>=0.0.6",
]
GLIBC_MINORS = range(17, 40)  # manylinux_2_17 (manylinux2014) .. 2_39
PLATFORMS: dict[str, list[str]] = {
    "linux armv7l": ["linux_armv7l"] + [f"manylinux_2_{m}_armv7l" for m in GLIBC_MINORS],
    "linux aarch64": ["linux_aarch64"] + [f"manylinux_2_{m}_aarch64" for m in GLIBC_MINORS],
    "musllinux x86_64": ["musllinux_1_1_x86_64", "musllinux_1_2_x86_64"],
    "musllinux aarch64": ["musllinux_1_1_aarch64", "musllinux_1_2_aarch64"],
}
# Distributions whose sdist installs without a compiler, and how that is proved.
SDIST_FALLBACKS = {"pyyaml": "pure-Python build without libyaml (PYYAML_FORCE_LIBYAML=0)"}
NO_MATCH = re.compile(r"No matching distribution found for ([A-Za-z0-9._-]+)")


@dataclass
class Row:
    platform: str
    name: str
    version: str
    artifact: str
    status: str  # "pure wheel", "binary wheel", "sdist fallback", "missing"

    @property
    def ok(self) -> bool:
        return self.status != "missing"


@dataclass
class SdistProof:
    ok: bool
    detail: str
    steps: list[str] = field(default_factory=list)
    version: str = ""


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str:
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    return normalise(match.group(1)) if match else requirement


def runtime_requirements() -> list[str]:
    try:
        import tomllib
    except ImportError:
        return list(FALLBACK_REQUIREMENTS)
    with open(ROOT / "pyproject.toml", "rb") as handle:
        return list(tomllib.load(handle)["project"]["dependencies"])


def pip_resolve(requirements: list[str], tags: list[str], python: str, work: Path):
    """pip's dry-run report for ``requirements`` on the target, or the error output."""
    report = work / "report.json"
    report.unlink(missing_ok=True)
    minor = python.replace(".", "")
    command = [
        sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
        "--disable-pip-version-check", "--target", str(work / "unused-target"),
        "--report", str(report), "--only-binary=:all:", "--python-version", python,
        "--implementation", "cp", "--abi", f"cp{minor}", "--abi", "abi3", "--abi", "none",
    ]  # fmt: skip
    for tag in tags:
        command += ["--platform", tag]
    result = subprocess.run(
        command + requirements, capture_output=True, text=True, timeout=600, check=False
    )
    if result.returncode == 0 and report.is_file():
        return json.loads(report.read_text(encoding="utf-8")), ""
    return None, result.stderr + result.stdout


def check_platform(label: str, requirements: list[str], python: str, work: Path) -> list[Row]:
    pending = list(requirements)
    rows: list[Row] = []
    while True:
        report, error = pip_resolve(pending, PLATFORMS[label], python, work)
        if report is not None:
            break
        match = NO_MATCH.search(error)
        missing = normalise(match.group(1)) if match else ""
        direct = [r for r in pending if requirement_name(r) == missing]
        if missing in SDIST_FALLBACKS and direct:
            rows.append(Row(label, missing, "", "sdist", "sdist fallback"))
            pending = [r for r in pending if r not in direct]
            continue
        tail = error.strip().splitlines()[-1:] or ["pip failed without output"]
        return [*rows, Row(label, missing or "?", "", tail[0], "missing")]
    for item in report.get("install", []):
        url = item.get("download_info", {}).get("url", "")
        filename = url.rsplit("/", 1)[-1]
        pure = filename.endswith("-none-any.whl")
        tag = filename[:-4].split("-", 2)[-1] if filename.endswith(".whl") else filename
        rows.append(
            Row(
                label,
                item["metadata"]["name"],
                item["metadata"]["version"],
                tag,
                "pure wheel" if pure else "binary wheel",
            )
        )
    return sorted(rows, key=lambda row: row.name.lower())


def run(command: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> str:
    result = subprocess.run(
        command, capture_output=True, text=True, env=env, cwd=cwd, timeout=900, check=False
    )
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:4])} …: {(result.stderr or result.stdout)[-1500:]}")
    return result.stdout


def prove_pyyaml_sdist(requirement: str, work: Path) -> SdistProof:
    """Build the PyYAML sdist with no C extension and no usable compiler, then import it."""
    env_dir = work / "pyyaml-venv"
    venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
    python = str(env_dir / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    # The C extension is off, and any attempt to compile would fail loudly.
    env.update(PYYAML_FORCE_LIBYAML="0", CC="/bin/false", CXX="/bin/false", LDSHARED="/bin/false")
    pip = [python, "-m", "pip", "--disable-pip-version-check"]
    steps = []
    try:
        # Pure wheels only: a build backend that needs no compiler (no Cython on purpose).
        run([*pip, "install", "-q", "--only-binary=:all:", "setuptools>=70.1", "wheel"], env)
        steps.append("setuptools and wheel installed from pure wheels, Cython absent")
        sdists, wheels = work / "sdist", work / "wheels"
        run([*pip, "download", "-q", "--no-deps", "--no-binary=:all:", "--no-build-isolation",
             "-d", str(sdists), requirement], env)  # fmt: skip
        sdist = next(sdists.glob("*.tar.gz"))
        steps.append(f"downloaded {sdist.name}")
        run([*pip, "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(wheels),
             str(sdist)], env)  # fmt: skip
        wheel = next(wheels.glob("*.whl"))
        steps.append(f"built {wheel.name} with CC=/bin/false")
        if not wheel.name.endswith("-none-any.whl"):
            return SdistProof(False, f"{wheel.name} is not a pure wheel", steps)
        run([*pip, "install", "-q", "--no-deps", "--no-index", str(wheel)], env)
        code = (
            "import yaml; assert not yaml.__with_libyaml__, 'libyaml bindings present'; "
            "assert yaml.safe_load('a: [1, 2]') == {'a': [1, 2]}; print(yaml.__version__)"
        )
        version = run([python, "-c", code], env, cwd=work).strip()
    except (RuntimeError, StopIteration, OSError, subprocess.SubprocessError) as exc:
        return SdistProof(False, f"{type(exc).__name__}: {exc}", steps)
    steps.append(f"imported PyYAML {version} as pure Python (yaml.__with_libyaml__ is False)")
    return SdistProof(True, f"{sdist.name} -> {wheel.name}, imports pure", steps, version)


PROVERS = {"pyyaml": prove_pyyaml_sdist}


def render(rows: list[Row], proofs: dict[str, SdistProof], python: str) -> str:
    lines = [f"runtime dependency closure, CPython {python}, wheels only", ""]
    header = f"{'platform':<18} {'distribution':<19} {'version':<17} {'status':<15} artifact"
    lines += [header, "-" * (len(header) + 30)]
    for row in rows:
        status = row.status if row.ok else "MISSING"
        # a wheel's tag can list many compatible platforms; the first says enough
        artifact = row.artifact.split(".")[0] + (" …" if "." in row.artifact else "")
        lines.append(f"{row.platform:<18} {row.name:<19} {row.version:<17} {status:<15} {artifact}")
    for name, proof in proofs.items():
        lines += ["", f"{name} sdist fallback ({SDIST_FALLBACKS[name]}): "
                  f"{'proved' if proof.ok else 'FAILED'}: {proof.detail}"]  # fmt: skip
        lines += [f"  - {step}" for step in proof.steps]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python-version", default="3.11", help="target CPython (default 3.11)")
    parser.add_argument("--platform", action="append", choices=sorted(PLATFORMS), help="repeatable")
    parser.add_argument("--no-sdist-proof", action="store_true", help="skip building sdists")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args(argv)
    requirements = runtime_requirements()
    rows: list[Row] = []
    proofs: dict[str, SdistProof] = {}
    with tempfile.TemporaryDirectory(prefix="tea-platforms-") as tmp:
        work = Path(tmp)
        for label in args.platform or list(PLATFORMS):
            rows += check_platform(label, requirements, args.python_version, work)
        fallbacks = sorted({row.name for row in rows if row.status == "sdist fallback"})
        for name in fallbacks if not args.no_sdist_proof else []:
            wanted = next(r for r in requirements if requirement_name(r) == name)
            proofs[name] = PROVERS[name](wanted, work / name)
            for row in rows:
                if row.name == name and row.status == "sdist fallback":
                    row.version = proofs[name].version
    ok = all(row.ok for row in rows) and all(proof.ok for proof in proofs.values())
    if args.json:
        data = {"ok": ok, "python": args.python_version, "rows": [asdict(r) for r in rows]}
        data["sdist_proofs"] = {name: asdict(proof) for name, proof in proofs.items()}
        print(json.dumps(data, indent=2))
    else:
        print(render(rows, proofs, args.python_version))
        print(f"\nresult: {'OK' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
