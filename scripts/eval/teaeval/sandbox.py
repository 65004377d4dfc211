"""A task's throwaway world: a workspace, a TEA_AGENT_HOME with its config.yaml, and the CLI.

The agent runs as a user runs it: ``tea-agent-mini run --json "<prompt>"`` in a subprocess whose
working directory is the workspace, with ``TEA_AGENT_HOME`` pointing at the temp home. Model
settings come only from that home's config.yaml: the caller's OPENAI_* and TEA_AGENT_*
variables are not passed on.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_DROPPED_ENV_PREFIXES = ("TEA_AGENT_", "OPENAI_")


@dataclass(frozen=True)
class Sandbox:
    root: Path
    workspace: Path
    home: Path

    @classmethod
    def create(cls, name: str) -> Sandbox:
        root = Path(tempfile.mkdtemp(prefix=f"tea-eval-{name}-")).resolve()
        workspace, home = root / "workspace", root / "home"
        workspace.mkdir()
        home.mkdir()
        return cls(root, workspace, home)

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def lay_out(self, files: Mapping[str, str], where: Path) -> None:
        for relative, text in files.items():
            path = where / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(_DROPPED_ENV_PREFIXES)}
        env.update(TEA_AGENT_HOME=str(self.home), PYTHONIOENCODING="utf-8")
        if env.get("PYTHONPATH"):
            # the agent runs in the workspace, where `PYTHONPATH=.` would name the wrong folder
            parts = env["PYTHONPATH"].split(os.pathsep)
            env["PYTHONPATH"] = os.pathsep.join(str(Path(p).resolve()) if p else p for p in parts)
        return env


@dataclass(frozen=True)
class ModelSettings:
    """What every task's config.yaml gets, from the command line."""

    model: str
    api_key: str = "sk-eval"
    max_context: int = 8192
    max_iterations: int = 20
    read_timeout: float = 600.0
    temperature: float | None = None  # None: the server's default


def config_data(
    settings: ModelSettings,
    main_url: str,
    cheap_url: str,
    workspace: Path,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The config.yaml of one session: both models through the proxy, on their own lanes."""

    def model(url: str) -> dict[str, Any]:
        data = {
            "api_url": url,
            "model_name": settings.model,
            "api_key": settings.api_key,
            "max_context_tokens": settings.max_context,
            "read_timeout": settings.read_timeout,
            "max_retries": 1,
        }
        if settings.temperature is not None:
            data["temperature"] = settings.temperature
        return data

    data: dict[str, Any] = {
        "main_model": model(main_url),
        "cheap_model": model(cheap_url),
        "agent": {
            "workspace": str(workspace),
            "max_iterations": settings.max_iterations,
            "approval": "auto",
        },
    }
    data.update(extra or {})
    return data


def write_config(home: Path, data: Mapping[str, Any]) -> Path:
    path = home / "config.yaml"
    # JSON is YAML too, and needs no third-party module here
    path.write_text(json.dumps(dict(data), indent=2) + "\n", encoding="utf-8")
    return path


@dataclass
class AgentRun:
    """One CLI invocation: exit code (None when it timed out), output and the parsed JSON."""

    exit_code: int | None
    stdout: str
    stderr: str
    seconds: float
    data: dict[str, Any] | None = None

    @property
    def timed_out(self) -> bool:
        return self.exit_code is None

    @property
    def answer(self) -> str:
        answer = (self.data or {}).get("answer")
        return answer if isinstance(answer, str) else ""

    @property
    def topic_id(self) -> str | None:
        topic = (self.data or {}).get("topic_id")
        return topic if isinstance(topic, str) else None


def last_json_object(stdout: str) -> dict[str, Any] | None:
    """The JSON object ``run --json`` prints as its last line, if there is one."""
    for line in reversed(stdout.strip().splitlines()):
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            continue
        return value if isinstance(value, dict) else None
    return None


def run_cli(cli: Sequence[str], args: Sequence[str], sandbox: Sandbox, timeout: float) -> AgentRun:
    """Run ``cli args`` in the sandbox; on timeout its whole process group is killed."""
    started = time.monotonic()
    process = subprocess.Popen(
        [*cli, *args],
        cwd=sandbox.workspace,
        env=sandbox.env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        errors="replace",
        # its own group: MCP servers and shell commands it started go down with it
        start_new_session=os.name == "posix",
    )
    try:
        stdout, stderr = process.communicate(timeout=max(1.0, timeout))
        code: int | None = process.returncode
    except subprocess.TimeoutExpired:
        _kill(process)
        stdout, stderr = process.communicate(timeout=30)
        code = None
    return AgentRun(code, stdout, stderr, time.monotonic() - started, last_json_object(stdout))


def _kill(process: subprocess.Popen[str]) -> None:
    if os.name == "posix":
        try:
            os.killpg(process.pid, signal.SIGKILL)
            return
        except ProcessLookupError:
            return
    process.kill()
