"""The evaluation harness (scripts/eval/teaeval) under test; the agent CLI runs from this tree."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EVAL_DIR = ROOT / "scripts" / "eval"
if str(EVAL_DIR) not in sys.path:
    sys.path.insert(0, str(EVAL_DIR))

AGENT_CLI = (sys.executable, "-m", "tea_agent_mini")


@pytest.fixture
def agent_cli(monkeypatch: pytest.MonkeyPatch) -> tuple[str, ...]:
    """The agent's CLI from this checkout (the sandbox passes PYTHONPATH on)."""
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    return AGENT_CLI
