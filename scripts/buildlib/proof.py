"""Prove a built wheel: install it into a fresh venv and use it like a person would.

Everything runs from a temporary directory outside the source tree, with a clean environment,
so nothing can be imported from the checkout by accident. Each step is its own Check; a failed
install skips the rest, a failed model server skips the chat turn.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
import venv
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from . import procs, sizes
from .results import Check
from .whitelist import PACKAGE

CLI = "tea-agent-mini"
PROOF_FILE = "proof.txt"
PROOF_TEXT = "written by the wheel proof"
FINAL_ANSWER = "The proof file is written."
SCRIPT = [
    {
        "tool_calls": [
            {
                "name": "toolkit_file",
                "arguments": {"action": "write", "filename": PROOF_FILE, "content": PROOF_TEXT},
            }
        ]
    },
    {"text": FINAL_ANSWER},
]
# Variables of the calling shell that could point the CLI at another install or model.
SCRUBBED = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP")
SCRUBBED_PREFIXES = ("OPENAI_", "TEA_AGENT_")


@dataclass
class Proof:
    root: Path
    wheel: Path
    version: str
    tools: list[str]
    work: Path
    checks: list[Check] = field(default_factory=list)
    installed: sizes.InstalledSizes | None = None
    model_url: str = ""

    @property
    def venv(self) -> Path:
        return self.work / "venv"

    @property
    def bin_dir(self) -> Path:
        return self.venv / ("Scripts" if os.name == "nt" else "bin")

    @property
    def home(self) -> Path:
        return self.work / "home"

    @property
    def workspace(self) -> Path:
        return self.work / "workspace"

    def env(self) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in SCRUBBED and not k.startswith(SCRUBBED_PREFIXES)
        }
        env.update(
            PATH=f"{self.bin_dir}{os.pathsep}{env.get('PATH', '')}",
            TEA_AGENT_HOME=str(self.home),
            PYTHONNOUSERSITE="1",
            PIP_DISABLE_PIP_VERSION_CHECK="1",
        )
        return env

    def cli(self, *args: str, timeout: float = 60.0):
        return procs.run(
            [str(self.bin_dir / CLI), *args], cwd=self.workspace, env=self.env(), timeout=timeout
        )


def prove(root: Path, wheel: Path, version: str, tools: list[str]) -> Proof:
    """Run every proof step; the returned Proof carries one Check per step and the sizes."""
    with tempfile.TemporaryDirectory(prefix="tea-agent-mini-proof-") as tmp:
        work = Path(tmp).resolve()
        if work.is_relative_to(root.resolve()):
            raise procs.ProcError(f"the temp dir {work} lies inside the source tree")
        proof = Proof(root.resolve(), wheel.resolve(), version, tools, work)
        proof.home.mkdir()
        proof.workspace.mkdir()
        with _ModelServer() as model:
            steps: list[tuple[str, Callable[[Proof, Check], None], str]] = [
                ("install", step_install, ""),
                ("import location", step_import_location, "install"),
                ("--version", step_version, "install"),
                ("tools --json", step_tools, "install"),
                ("scripted model", model.start, "install"),
                ("serve /health and /", step_serve, "install"),
                ("chat turn with a tool call", step_chat, "scripted model"),
            ]
            for name, func, needs in steps:
                proof.checks.append(_run_step(proof, name, func, needs))
        return proof


def _run_step(proof: Proof, name: str, func: Callable[[Proof, Check], None], needs: str) -> Check:
    check = Check(f"proof: {name}")
    blocker = next((c for c in proof.checks if c.name == f"proof: {needs}"), None)
    started = time.perf_counter()
    if blocker is not None and not blocker.ok:
        check.fail(f"skipped: {needs} failed")
    else:
        try:
            func(proof, check)
        except (procs.ProcError, OSError, ValueError) as exc:
            check.fail(str(exc))
    check.seconds = round(time.perf_counter() - started, 2)
    return check


def step_install(proof: Proof, check: Check) -> None:
    venv.EnvBuilder(with_pip=True, clear=True).create(proof.venv)
    python = str(proof.bin_dir / "python")
    result = procs.run(
        [python, "-m", "pip", "install", "--no-input", "--quiet", str(proof.wheel)],
        cwd=proof.workspace,
        env=proof.env(),
        timeout=600,
    )
    if result.returncode != 0:
        check.fail(f"pip install failed: {(result.stderr or result.stdout).strip()[-1500:]}")
        return
    proof.installed = sizes.measure(proof.venv, PACKAGE)
    deps = [n for n in proof.installed.per_dist if n not in sizes.TOOLING]
    check.detail = f"{len(deps)} distributions: {', '.join(sorted(deps))}"


def step_import_location(proof: Proof, check: Check) -> None:
    code = f"import {PACKAGE}; print({PACKAGE}.__file__)"
    result = procs.run(
        [str(proof.bin_dir / "python"), "-c", code], cwd=proof.workspace, env=proof.env()
    )
    where = Path(result.stdout.strip() or ".").resolve()
    if result.returncode != 0 or not where.is_relative_to(proof.venv):
        check.fail(f"{PACKAGE} imported from {where}, not from the venv: {result.stderr.strip()}")
    check.detail = str(where.parent.relative_to(proof.work)) if check.ok else ""


def step_version(proof: Proof, check: Check) -> None:
    result = proof.cli("--version")
    out = (result.stdout + result.stderr).strip()
    if result.returncode != 0 or proof.version not in out:
        check.fail(f"exit {result.returncode}, expected {proof.version}: {out[-500:]}")
    check.detail = out


def step_tools(proof: Proof, check: Check) -> None:
    result = proof.cli("tools", "--json")
    if result.returncode != 0:
        check.fail(f"exit {result.returncode}: {result.stderr.strip()[-800:]}")
        return
    try:
        listed = json.loads(result.stdout)
        names = sorted(tool["name"] for tool in listed)
    except (ValueError, TypeError, KeyError) as exc:
        check.fail(f"not a JSON list of tools: {exc}: {result.stdout[:200]!r}")
        return
    expected = sorted(proof.tools)
    if names != expected:
        missing, extra = sorted(set(expected) - set(names)), sorted(set(names) - set(expected))
        check.fail(
            f"{len(names)} tools, manifest says {len(expected)}: missing {missing}, extra {extra}"
        )
    warnings = [line for line in result.stderr.splitlines() if "warning" in line.lower()]
    check.problems.extend(f"stderr: {line}" for line in warnings)
    check.detail = f"{len(names)} tools"


def step_serve(proof: Proof, check: Check) -> None:
    port = procs.free_port()
    command = [str(proof.bin_dir / CLI), "serve", "--host", "127.0.0.1", "--port", str(port)]
    base = f"http://127.0.0.1:{port}"
    with procs.Background(command, cwd=proof.workspace, env=proof.env()) as server:
        health, seconds = server.wait_for_http(f"{base}/health", timeout=30)
        try:
            status = json.loads(health.body).get("status")
        except (ValueError, AttributeError):
            status = None
        if status != "ok":
            check.fail(f"/health answered {health.body[:200]!r}, expected status ok")
        page = procs.http_get(f"{base}/")
        if page.status != 200 or "html" not in page.content_type:
            check.fail(f"/ answered HTTP {page.status} ({page.content_type or 'no type'})")
    check.detail = f"/health 200 after {seconds:.2f} s; / {page.status} {page.content_type}"


def step_chat(proof: Proof, check: Check) -> None:
    result = proof.cli("run", "--json", "Write the proof file, please.", timeout=120)
    try:
        turn = json.loads(result.stdout)
    except ValueError:
        check.fail(f"exit {result.returncode}, no JSON: {(result.stderr or result.stdout)[-800:]}")
        return
    calls = turn.get("tool_calls") or []
    if result.returncode != 0 or not turn.get("ok"):
        check.fail(f"exit {result.returncode}, error {turn.get('error')}")
    if not calls or calls[0].get("name") != "toolkit_file" or not calls[0].get("ok"):
        check.fail(f"expected one successful toolkit_file call, got {calls}")
    written = proof.workspace / PROOF_FILE
    content = written.read_text(encoding="utf-8") if written.is_file() else None
    if content != PROOF_TEXT:
        check.fail(f"{PROOF_FILE} in the workspace holds {content!r}, expected {PROOF_TEXT!r}")
    if turn.get("answer") != FINAL_ANSWER:
        check.fail(f"answer {turn.get('answer')!r}, expected {FINAL_ANSWER!r}")
    check.detail = f"{len(calls)} tool call(s), answer {turn.get('answer')!r}"


class _ModelServer:
    """The scripted OpenAI-compatible server from tests/fakes, run by this interpreter."""

    def __init__(self) -> None:
        self.process: procs.Background | None = None

    def start(self, proof: Proof, check: Check) -> None:
        script = proof.work / "script.json"
        script.write_text(json.dumps(SCRIPT), encoding="utf-8")
        command = [sys.executable, "-m", "tests.fakes.scripted_server", "--port", "0"]
        env = {k: v for k, v in os.environ.items() if k not in SCRUBBED}
        self.process = procs.Background(
            [*command, "--script", str(script)], cwd=proof.root, env=env
        )
        url = self.process.wait_for_line("READY ", timeout=30)
        config = {
            "main_model": {"api_url": url, "model_name": "scripted-model", "api_key": "sk-proof"},
            "agent": {"workspace": str(proof.workspace), "approval": "auto"},
        }
        # JSON is valid YAML, and this script must not need PyYAML
        (proof.home / "config.yaml").write_text(json.dumps(config), encoding="utf-8")
        check.detail = url

    def __enter__(self) -> _ModelServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        if self.process is not None:
            self.process.stop()
