"""Checkpoint files: one JSON file per run, ``<dir>/<flow name>/<run_id>.json``.

A file is written aside and renamed over the old one, so a crash leaves the previous checkpoint
or the new one, never half of either. Folders are private (0700) and files 0600, like the rest
of the user's data: steps' outputs are often the user's code and documents.
"""

from __future__ import annotations

import json
import logging
import os
import re
import tempfile
from pathlib import Path

from ..config import home_dir
from ..private import private_dirs
from .errors import FlowError, RunNotFound
from .records import FlowRun

log = logging.getLogger(__name__)

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")


def default_dir() -> Path:
    """``<home>/flows``, the home read now (``$TEA_AGENT_HOME`` or ``~/.tea_agent``)."""
    return home_dir() / "flows"


def check_name(kind: str, name: str) -> str:
    """``name`` when it can name a file; else FlowError."""
    if not NAME.match(name) or name in (".", ".."):
        raise FlowError(
            f"{kind} {name!r} cannot name a checkpoint file: use letters, digits, '_', '-', '.'"
        )
    return name


class Checkpoints:
    """The checkpoint files under one folder."""

    def __init__(self, folder: Path | str | None = None) -> None:
        self.folder = Path(folder).expanduser() if folder is not None else default_dir()

    def path(self, flow: str, run_id: str) -> Path:
        return self.folder / check_name("flow", flow) / f"{check_name('run id', run_id)}.json"

    def save(self, run: FlowRun) -> Path:
        """Write ``run`` in one step. Raises FlowError."""
        target = self.path(run.flow, run.run_id)
        text = json.dumps(run.to_json(), ensure_ascii=False, indent=1)
        temporary = None
        try:
            private_dirs(target.parent)
            descriptor, temporary = tempfile.mkstemp(
                prefix=f".{target.stem}.", suffix=".tmp", dir=target.parent
            )
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(temporary, target)
        except OSError as exc:
            if temporary is not None:
                Path(temporary).unlink(missing_ok=True)
            raise FlowError(f"cannot write the checkpoint {target}: {exc}") from exc
        return target

    def load(self, flow: str, run_id: str) -> FlowRun:
        """The run of ``flow`` named ``run_id``, or ``"last"`` for its newest one."""
        if run_id == "last":
            runs = [run for run in self.runs() if run.flow == flow]
            if not runs:
                raise RunNotFound(f"no run of {flow} to resume under {self.folder / flow}")
            return runs[0]
        path = self.path(flow, run_id)
        if not path.is_file():
            raise RunNotFound(f"no checkpoint {path}")
        return read(path)

    def find(self, run_id: str) -> FlowRun:
        """The run named ``run_id``, whichever flow it belongs to. Raises RunNotFound, or
        FlowError when its file cannot be read."""
        if NAME.match(run_id):  # else no file can have that name
            for path in sorted(self.folder.glob(f"*/{run_id}.json")):
                return read(path)
        raise RunNotFound(f"no run {run_id!r} under {self.folder}")

    def runs(self) -> list[FlowRun]:
        """Every readable run, newest first; unreadable files are logged and left out."""
        found = []
        for path in self.folder.glob("*/*.json"):
            try:
                found.append(read(path))
            except FlowError as exc:
                log.warning("%s", exc)
        found.sort(key=lambda run: (run.started, run.run_id), reverse=True)
        return found


def read(path: Path) -> FlowRun:
    """The run in the checkpoint file ``path``. Raises FlowError naming the file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise RunNotFound(f"no checkpoint {path}") from exc
    except (OSError, ValueError) as exc:
        raise FlowError(f"cannot read the checkpoint {path}: {exc}") from exc
    if not isinstance(data, dict):
        raise FlowError(f"cannot read the checkpoint {path}: not a JSON object")
    try:
        return FlowRun.from_json(data)
    except FlowError as exc:
        raise FlowError(f"cannot read the checkpoint {path}: {exc}") from exc


def list_runs(folder: Path | str | None = None) -> list[FlowRun]:
    """Every run under ``folder`` (default ``<home>/flows``), newest first."""
    return Checkpoints(folder).runs()


def load_run(folder: Path | str | None, run_id: str) -> FlowRun:
    """The run named ``run_id`` under ``folder``. Raises RunNotFound, or FlowError."""
    return Checkpoints(folder).find(run_id)
