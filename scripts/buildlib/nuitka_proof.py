"""Prove a compiled executable: start it, serve, answer a chat turn, with no Python around.

The executable runs from a temp directory outside the source tree with a scrubbed environment
whose PATH is one empty directory, so neither a ``python`` nor the checkout can help it. Its
onefile cache (``{CACHE_DIR}``) points into the temp directory, so the first start really
unpacks (the cold start) and the later ones show whether the cache is reused (the warm starts).
The steps that do not care how the CLI was installed come from the wheel proof.
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import procs, proof
from .model_server import ScriptedModel
from .nuitka_build import EXE_STEM, product_version
from .results import Check

# Environment variables the executable may keep: locale, time zone, and what Windows needs.
KEPT = ("LANG", "LC_ALL", "LC_CTYPE", "TZ", "SYSTEMROOT", "WINDIR", "COMSPEC", "TEMP", "TMP")
PLACEHOLDER_MARK = b"web UI is not bundled"
SERVE_TIMEOUT = 60.0


@dataclass
class ExeProof:
    """What the wheel proof's steps expect of a proof (``cli``, ``version``, ``tools``,
    ``workspace``), for an executable, plus the start-up timings."""

    root: Path
    exe: Path
    version: str
    tools: list[str]
    work: Path
    onefile: bool
    warm_runs: int = 3
    checks: list[Check] = field(default_factory=list)
    cold_seconds: float | None = None
    warm_seconds: list[float] = field(default_factory=list)
    cache_snapshot: dict[str, int] = field(default_factory=dict)
    page: procs.Response | None = None
    model: ScriptedModel | None = None

    @property
    def home(self) -> Path:
        return self.work / "tea-home"

    @property
    def workspace(self) -> Path:
        return self.work / "workspace"

    @property
    def cache(self) -> Path:
        return self.work / "cache"

    @property
    def path_dir(self) -> Path:
        return self.work / "empty-path"

    @property
    def unpacked(self) -> Path:
        """Where the onefile unpacks itself: onefile_tempdir_spec() under our {CACHE_DIR}."""
        return self.cache / EXE_STEM / product_version(self.version)

    @property
    def warm_median(self) -> float | None:
        return statistics.median(self.warm_seconds) if self.warm_seconds else None

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k in KEPT}
        env.update(
            PATH=str(self.path_dir),
            HOME=str(self.work / "user"),
            USERPROFILE=str(self.work / "user"),
            XDG_CACHE_HOME=str(self.cache),
            TEA_AGENT_HOME=str(self.home),
        )
        return env

    def cli(self, *args: str, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
        return procs.run(
            [str(self.exe), *args], cwd=self.workspace, env=self.env(), timeout=timeout
        )


def prove(
    root: Path, exe: Path, version: str, tools: list[str], onefile: bool, warm_runs: int = 3
) -> ExeProof:
    """Run every step; the returned ExeProof carries one Check per step and the timings."""
    with tempfile.TemporaryDirectory(prefix="tea-agent-mini-exe-proof-") as tmp:
        work = Path(tmp).resolve()
        if work.is_relative_to(root.resolve()):
            raise procs.ProcError(f"the temp dir {work} lies inside the source tree")
        exe_proof = ExeProof(
            root.resolve(), exe.resolve(), version, tools, work, onefile, warm_runs=warm_runs
        )
        for folder in (exe_proof.home, exe_proof.workspace, exe_proof.path_dir, work / "user"):
            folder.mkdir()
        model_env = {k: v for k, v in os.environ.items() if k not in proof.SCRUBBED}
        with ScriptedModel(exe_proof.root, work, model_env) as model:
            exe_proof.model = model
            steps = [
                ("no python on PATH", step_no_python, ""),
                ("cold start: serve /health", step_cold_start, "no python on PATH"),
                ("web UI on /", step_page, "cold start: serve /health"),
                ("warm start: serve /health", step_warm_start, "cold start: serve /health"),
                ("--version", proof.step_version, "no python on PATH"),
                ("tools --json", proof.step_tools, "no python on PATH"),
                ("scripted model", step_model, ""),
                ("chat turn with a tool call", proof.step_chat, "scripted model"),
                ("bundled skills readable", step_skills, "chat turn with a tool call"),
            ]
            for name, func, needs in steps:
                exe_proof.checks.append(proof._run_step(exe_proof, name, func, needs))
        exe_proof.model = None
        return exe_proof


def step_no_python(exe_proof: ExeProof, check: Check) -> None:
    env = exe_proof.env()
    found = [
        str(entry)
        for folder in env["PATH"].split(os.pathsep)
        for entry in Path(folder).glob("python*")
    ]
    leaks = sorted(k for k in env if k.startswith("PYTHON") or k == "VIRTUAL_ENV")
    if found or leaks:
        check.fail(f"python reachable: {found} {leaks}")
    check.detail = f"PATH={env['PATH']}, cwd outside the tree"


def serve_once(exe_proof: ExeProof) -> tuple[float, procs.Response, procs.Response]:
    """Start ``serve``; seconds from spawning it to the first 200 on /health, and / after."""
    port = procs.free_port()
    command = [str(exe_proof.exe), "serve", "--host", "127.0.0.1", "--port", str(port)]
    base = f"http://127.0.0.1:{port}"
    started = time.perf_counter()
    with procs.Background(command, cwd=exe_proof.workspace, env=exe_proof.env()) as server:
        health, _ = server.wait_for_http(f"{base}/health", timeout=SERVE_TIMEOUT)
        seconds = time.perf_counter() - started
        page = procs.http_get(f"{base}/")
    return seconds, health, page


def step_cold_start(exe_proof: ExeProof, check: Check) -> None:
    seconds, health, exe_proof.page = serve_once(exe_proof)
    exe_proof.cold_seconds = round(seconds, 3)
    if f'"{exe_proof.version}"'.encode() not in health.body:
        check.fail(f"/health answered {health.body[:200]!r}, expected version {exe_proof.version}")
    if exe_proof.onefile:
        exe_proof.cache_snapshot = _snapshot(exe_proof.unpacked)
        if not exe_proof.cache_snapshot:
            check.fail(f"nothing unpacked into the cache dir {exe_proof.unpacked}")
    where = f", unpacked to {exe_proof.unpacked.name}/" if exe_proof.cache_snapshot else ""
    check.detail = f"/health 200 after {seconds:.2f} s{where}"


def step_page(exe_proof: ExeProof, check: Check) -> None:
    """/ must be the source tree's index.html; the placeholder only when the tree has none."""
    page = exe_proof.page
    assert page is not None
    if page.status != 200 or "html" not in page.content_type:
        check.fail(f"/ answered HTTP {page.status} ({page.content_type or 'no type'})")
        return
    index = exe_proof.root / "tea_agent_mini" / "server" / "static" / "index.html"
    if index.is_file():
        if page.body != index.read_bytes():
            check.fail("/ is not static/index.html of the source tree: the web UI is missing")
        check.detail = f"static/index.html ({len(page.body)} bytes)"
    elif PLACEHOLDER_MARK not in page.body:
        check.fail("/ is neither the web UI nor the placeholder page")
    else:
        check.detail = "the placeholder page (the source tree has no static/index.html)"


def step_warm_start(exe_proof: ExeProof, check: Check) -> None:
    for _ in range(exe_proof.warm_runs):
        seconds, _, _ = serve_once(exe_proof)
        exe_proof.warm_seconds.append(round(seconds, 3))
    if exe_proof.onefile:
        now = _snapshot(exe_proof.unpacked)
        if now != exe_proof.cache_snapshot:
            changed = sorted(set(now.items()) ^ set(exe_proof.cache_snapshot.items()))
            check.fail(f"the warm start unpacked again: {len(changed)} cache entries changed")
    shown = ", ".join(f"{s:.2f}" for s in exe_proof.warm_seconds)
    check.detail = f"/health 200 after {shown} s (median {exe_proof.warm_median:.2f} s)"


def _snapshot(folder: Path) -> dict[str, int]:
    """File -> modification time (ns) under ``folder``: a rewrite changes it."""
    if not folder.is_dir():
        return {}
    return {
        str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()
    }


def bundled_skills(root: Path) -> dict[str, str]:
    """Skill name -> first line of its instructions, for each SKILL.md in the source tree."""
    skills = {}
    for path in sorted((root / "tea_agent_mini" / "skills" / "bundled").glob("*/SKILL.md")):
        text = path.read_text(encoding="utf-8")
        match = re.match(r"---\n(.*?)\n---\n(.*)", text, re.S)
        head, body = (match.group(1), match.group(2)) if match else ("", text)
        name = re.search(r"^name:\s*(\S+)", head, re.M)
        first = next((line.strip() for line in body.splitlines() if line.strip()), "")
        skills[name.group(1) if name else path.parent.name] = first
    return skills


def script_for(skills: dict[str, str]) -> list[dict]:
    """The wheel proof's script, plus listing the skills and loading the first one."""
    first, *rest = proof.SCRIPT
    calls = list(first["tool_calls"])
    if skills:
        calls.append({"name": "toolkit_skills", "arguments": {"action": "list"}})
        load = {"action": "load", "name": next(iter(skills))}
        calls.append({"name": "toolkit_skills", "arguments": load})
    return [{**first, "tool_calls": calls}, *rest]


def step_model(exe_proof: ExeProof, check: Check) -> None:
    assert exe_proof.model is not None
    check.detail = exe_proof.model.start(script_for(bundled_skills(exe_proof.root)))
    exe_proof.model.write_config(exe_proof.home, exe_proof.workspace)


def step_skills(exe_proof: ExeProof, check: Check) -> None:
    skills = bundled_skills(exe_proof.root)
    if not skills:
        check.detail = "no bundled skills in the source tree"
        return
    assert exe_proof.model is not None
    results = list(exe_proof.model.tool_results().values())
    listing = next((r for r in results if re.search(r"\d+ skill\(s\):", r)), "")
    missing = [name for name in skills if f"- {name} [bundled]" not in listing]
    if not listing or missing:
        check.fail(
            f"toolkit_skills list lacks bundled {missing or list(skills)}: {listing[:300]!r}"
        )
    name, first_line = next(iter(skills.items()))
    loaded = next((r for r in results if r.startswith(f"# Skill: {name}")), "")
    if first_line not in loaded:
        check.fail(f"loading {name!r} did not return its SKILL.md: {loaded[:300]!r}")
    check.detail = f"{len(skills)} bundled skills listed, {name}/SKILL.md read"
