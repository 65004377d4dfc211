"""scripts/bench/run.py: discovery, JSON parsing and flattening, and real runs of one benchmark,
with this interpreter and in a clean venv."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUNNER = ROOT / "scripts" / "bench" / "run.py"


def load_runner():
    spec = importlib.util.spec_from_file_location("bench_run", RUNNER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_discovers_every_bench_script() -> None:
    runner = load_runner()
    names = [path.name for path in runner.discover()]
    assert "bench_startup.py" in names
    assert names == sorted(names) and all(name.startswith("bench_") for name in names)
    assert [path.name for path in runner.discover(["startup"])] == ["bench_startup.py"]
    assert [path.name for path in runner.discover(["bench_startup"])] == ["bench_startup.py"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('{\n  "a": {"b": 2}\n}\n', {"a": {"b": 2}}),
        ('warming up\n{"a": 1}\n', {"a": 1}),
        ("12.5 ms\n", None),
        ("[1, 2]", None),
        ("", None),
    ],
)
def test_parse_json(text: str, expected: dict | None) -> None:
    assert load_runner().parse_json(text) == expected


def test_flatten_and_render() -> None:
    runner = load_runner()
    data = {"python": "3.11.7", "ms": 1.5, "n": 1000, "top": {"x": 2, "y": {}}, "w": None}
    assert runner.flatten(data) == [
        ("python", "3.11.7"),
        ("ms", 1.5),
        ("n", 1000),
        ("top.x", 2),
        ("top.y", {}),
        ("w", None),
    ]
    table = runner.render({"bench_t": data}, {"python": "3.11.7", "machine": "x86_64"})
    rows = [line.split() for line in table.splitlines()[2:]]
    assert rows == [
        ["bench_t", "ms", "1.50"],
        ["bench_t", "n", "1,000"],
        ["bench_t", "top.x", "2"],
        ["bench_t", "top.y", "{}"],
        ["bench_t", "w", "-"],
    ]


def run_startup(*options: str) -> tuple[dict, dict]:
    result = subprocess.run(
        [sys.executable, str(RUNNER), "--only", "startup", "--json", *options],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    startup = report["results"]["bench_startup"]
    assert "error" not in startup, startup["error"]
    assert startup["import_ms"] > 0 and startup["cli_version_ms"] > 0
    assert report["machine"]["python"] == startup["python"]
    return report["machine"], startup


def test_runs_the_startup_benchmark_here() -> None:
    machine, startup = run_startup("--here")
    assert machine["interpreter"] == sys.executable
    assert startup["package"] == machine["package"]


@pytest.mark.skipif(
    os.environ.get("TEA_AGENT_SKIP_WHEEL_PROOF") == "1", reason="TEA_AGENT_SKIP_WHEEL_PROOF=1"
)
@pytest.mark.timeout(600)
def test_runs_the_startup_benchmark_in_a_clean_venv(tmp_path: Path) -> None:
    # installs the runtime dependencies from the package index, like the wheel proof
    venv = tmp_path / "venv"
    machine, startup = run_startup("--venv", str(venv))
    assert Path(machine["interpreter"]).is_relative_to(venv)
    assert startup["installed"] is True and Path(startup["package"]).is_relative_to(venv)
    assert startup["package"] == machine["package"]


def test_a_failing_benchmark_is_an_error_row(tmp_path: Path) -> None:
    runner = load_runner()
    broken = tmp_path / "bench_broken.py"
    broken.write_text("import sys\nprint('boom', file=sys.stderr)\nsys.exit(3)\n")
    silent = tmp_path / "bench_silent.py"
    silent.write_text("print('no json here')\n")
    here = runner.this_interpreter()
    assert runner.run_one(broken, here, timeout=60)["error"] == "exit 3: boom"
    assert runner.run_one(silent, here, timeout=60)["error"] == "printed no JSON object"
