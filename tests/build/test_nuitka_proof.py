"""The executable proof of build_nuitka.py, run against a stand-in executable (a shell script
that runs the package with this interpreter), so its steps run for real without a compile."""

from __future__ import annotations

import json
import os
import sys
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

from buildlib import model_server, nuitka_build, nuitka_proof, source_checks  # noqa: E402
from buildlib.building import read_version  # noqa: E402

VERSION = read_version(ROOT)
posix_only = pytest.mark.skipif(os.name != "posix", reason="the stand-in is a shell script")


def test_bundled_skills_and_the_script(tmp_path: Path) -> None:
    skill = tmp_path / "tea_agent_mini" / "skills" / "bundled" / "folder"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: demo\ndescription: d\n---\n\n# Demo steps\nmore\n")
    skills = nuitka_proof.bundled_skills(tmp_path)
    assert skills == {"demo": "# Demo steps"}
    first, last = nuitka_proof.script_for(skills)
    names = [call["name"] for call in first["tool_calls"]]
    assert names == ["toolkit_file", "toolkit_skills", "toolkit_skills"]
    assert first["tool_calls"][2]["arguments"] == {"action": "load", "name": "demo"}
    assert last == {"text": nuitka_proof.proof.FINAL_ANSWER}


def test_the_proof_environment_has_no_python(tmp_path: Path) -> None:
    exe_proof = nuitka_proof.ExeProof(ROOT, tmp_path / "exe", VERSION, [], tmp_path, True)
    exe_proof.path_dir.mkdir()
    env = exe_proof.env()
    assert env["PATH"] == str(exe_proof.path_dir)
    assert not [k for k in env if k.startswith("PYTHON") or k == "VIRTUAL_ENV"]
    check = nuitka_proof.Check("no python")
    nuitka_proof.step_no_python(exe_proof, check)
    assert check.ok
    (exe_proof.path_dir / "python3").write_text("")
    nuitka_proof.step_no_python(exe_proof, check)
    assert not check.ok


def test_scripted_model_records_tool_results(tmp_path: Path) -> None:
    with model_server.ScriptedModel(ROOT, tmp_path) as model:
        url = model.start([{"text": "hello"}])
        body = {
            "model": "scripted-model",
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "tool", "tool_call_id": "call_7", "content": "tool said this"},
            ],
        }
        request = urllib.request.Request(
            f"{url}/chat/completions",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as reply:
            answer = json.loads(reply.read())
        config = json.loads(model.write_config(tmp_path, tmp_path / "ws").read_text())
    assert answer["choices"][0]["message"]["content"] == "hello"
    assert model.tool_results() == {"call_7": "tool said this"}
    assert config["main_model"]["api_url"] == url


def stand_in_executable(folder: Path) -> Path:
    """A stand-in for the compiled binary: the package run by this interpreter, which the
    proof's environment could not find by itself (PATH is an empty dir, PYTHON* scrubbed)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "tea-agent-mini"
    path.write_text(f'#!/bin/sh\nPYTHONPATH={ROOT} exec {sys.executable} -m tea_agent_mini "$@"\n')
    path.chmod(0o755)
    return path


@posix_only
def test_the_proof_passes_on_a_working_executable(tmp_path: Path) -> None:
    stand_in = stand_in_executable(tmp_path / "bin")
    tools = [n for names in source_checks.plan(ROOT).shipped_tools.values() for n in names]
    result = nuitka_proof.prove(ROOT, stand_in, VERSION, tools, onefile=False, warm_runs=1)
    failed = [f"{c.name}: {c.problems}" for c in result.checks if not c.ok]
    assert not failed
    assert [c.name for c in result.checks][-1] == "proof: bundled skills readable"
    assert result.cold_seconds and len(result.warm_seconds) == 1


@posix_only
def test_the_proof_fails_when_the_onefile_did_not_unpack(tmp_path: Path) -> None:
    stand_in = stand_in_executable(tmp_path / "bin")
    exe_proof = nuitka_proof.ExeProof(ROOT, stand_in, VERSION, [], tmp_path / "w", True)
    for folder in (
        exe_proof.home,
        exe_proof.workspace,
        exe_proof.path_dir,
        tmp_path / "w" / "user",
    ):
        folder.mkdir(parents=True)
    check = nuitka_proof.Check("cold")
    nuitka_proof.step_cold_start(exe_proof, check)
    assert check.problems == [f"nothing unpacked into the cache dir {exe_proof.unpacked}"]
    cache = tmp_path / "w" / "cache" / "tea-agent-mini"
    assert exe_proof.unpacked == cache / nuitka_build.product_version(VERSION)
