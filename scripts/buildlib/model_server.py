"""The scripted OpenAI-compatible model (``tests/fakes``) as a process, for the proofs.

Run by the build's own interpreter from the source root, it plays back a script and can record
every chat request it gets (JSON lines), so a proof can read what the agent sent back, e.g. the
results of its tool calls.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from . import procs


class ScriptedModel:
    """``python -m tests.fakes.scripted_server`` in the background; a context manager."""

    def __init__(self, root: Path, work: Path, env: dict[str, str] | None = None) -> None:
        self.root = root
        self.work = work
        self.env = dict(os.environ if env is None else env)
        self.record = work / "model-requests.jsonl"
        self.url = ""
        self.process: procs.Background | None = None

    def start(self, script: list[dict], timeout: float = 30.0) -> str:
        """Start it with ``script`` (a list of Reply dicts); returns its base URL (``…/v1``)."""
        path = self.work / "model-script.json"
        path.write_text(json.dumps(script), encoding="utf-8")
        command = [sys.executable, "-m", "tests.fakes.scripted_server", "--port", "0"]
        command += ["--script", str(path), "--record", str(self.record)]
        self.process = procs.Background(command, cwd=self.root, env=self.env)
        self.url = self.process.wait_for_line("READY ", timeout=timeout)
        return self.url

    def requests(self) -> list[dict]:
        """The chat request bodies received so far, oldest first."""
        if not self.record.is_file():
            return []
        lines = self.record.read_text(encoding="utf-8").splitlines()
        return [json.loads(line)["body"] for line in lines if line.strip()]

    def tool_results(self) -> dict[str, str]:
        """Tool-call id -> the content the agent sent back for it, over all requests."""
        results: dict[str, str] = {}
        for body in self.requests():
            for message in body.get("messages") or []:
                if message.get("role") == "tool" and isinstance(message.get("content"), str):
                    results[str(message.get("tool_call_id"))] = message["content"]
        return results

    def write_config(self, home: Path, workspace: Path) -> Path:
        """A config in ``home`` that points the agent at this model, tools auto-approved."""
        config = {
            "main_model": {"api_url": self.url, "model_name": "scripted-model", "api_key": "sk-x"},
            "agent": {"workspace": str(workspace), "approval": "auto"},
        }
        path = home / "config.yaml"
        # JSON is valid YAML, and the build scripts must not need PyYAML
        path.write_text(json.dumps(config), encoding="utf-8")
        return path

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()

    def __enter__(self) -> ScriptedModel:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
