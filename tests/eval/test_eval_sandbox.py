"""The task sandbox: its config.yaml as the agent reads it, its environment, the CLI runner."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
from teaeval.sandbox import (
    ModelSettings,
    Sandbox,
    config_data,
    last_json_object,
    run_cli,
    write_config,
)

from tea_agent_mini.config import load_config


@pytest.fixture
def sandbox():
    box = Sandbox.create("unit")
    yield box
    box.remove()
    assert not box.root.exists()


def test_the_config_is_what_the_agent_loads(sandbox):
    settings = ModelSettings(model="qwen", api_key="sk-eval-key", max_context=8192)
    data = config_data(
        settings,
        "http://127.0.0.1:1/t.1/main/v1",
        "http://127.0.0.1:1/t.1/cheap/v1",
        sandbox.workspace,
    )
    write_config(sandbox.home, data)
    config = load_config(home=sandbox.home, env={})
    assert config.main_model.api_url == "http://127.0.0.1:1/t.1/main/v1"
    assert config.cheap_model.api_url.endswith("/t.1/cheap/v1")
    assert config.main_model.model_name == config.cheap_model.model_name == "qwen"
    assert config.main_model.max_context_tokens == 8192
    assert config.workspace == sandbox.workspace
    assert config.main_model.temperature is None  # the server's default unless asked


def test_a_temperature_reaches_both_models(sandbox):
    settings = ModelSettings(model="qwen", temperature=0.2)
    data = config_data(
        settings, "http://127.0.0.1:1/m/v1", "http://127.0.0.1:1/c/v1", sandbox.workspace
    )
    write_config(sandbox.home, data)
    config = load_config(home=sandbox.home, env={})
    assert config.main_model.temperature == config.cheap_model.temperature == 0.2
    assert config.agent.approval == "auto"


def test_the_environment_has_the_home_and_no_model_settings(sandbox, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://elsewhere/v1")
    monkeypatch.setenv("TEA_AGENT_MODEL", "other")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([".", "/abs/lib"]))
    env = sandbox.env()
    assert env["TEA_AGENT_HOME"] == str(sandbox.home)
    assert "OPENAI_BASE_URL" not in env and "TEA_AGENT_MODEL" not in env
    assert env["PYTHONPATH"].split(os.pathsep) == [str(Path.cwd().resolve()), "/abs/lib"]


def test_files_are_laid_out_in_folders(sandbox):
    sandbox.lay_out({"a/b/c.txt": "x", "d.txt": "y"}, sandbox.workspace)
    assert (sandbox.workspace / "a/b/c.txt").read_text() == "x"


def test_a_run_prints_its_json_in_the_workspace(sandbox):
    code = "import json, os; print('noise'); print(json.dumps({'answer': os.getcwd()}))"
    run = run_cli([sys.executable, "-c", code], [], sandbox, 30)
    assert run.exit_code == 0 and not run.timed_out
    assert run.answer == str(sandbox.workspace)


def test_a_hung_run_is_killed_at_its_timeout(sandbox):
    started = time.monotonic()
    run = run_cli([sys.executable, "-c", "import time; time.sleep(60)"], [], sandbox, 1)
    assert run.timed_out and run.data is None and run.answer == ""
    assert time.monotonic() - started < 30


def test_last_json_object():
    assert last_json_object('log line\n{"a": 1}\n') == {"a": 1}
    assert last_json_object("[1, 2]\n") is None
    assert last_json_object("no json at all") is None
