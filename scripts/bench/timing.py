"""What the benchmarks share (imported by the bench_*.py scripts beside it): one timing helper,
and where the measured tea_agent_mini comes from.

Each bench puts the checkout at the *end* of ``sys.path``: run by ``run.py`` in its clean venv,
the installed wheel is what gets imported (and measured); run straight from a checkout without
an install, the checkout is. Fresh interpreters a bench starts import the same one
(:func:`fresh_env`), from a working directory outside the checkout.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path


def median_ms(func: Callable[[], object], runs: int) -> float:
    """The median wall time of ``runs`` calls of ``func``, in milliseconds."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        func()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000.0


def package_dir() -> Path:
    """The directory of the tea_agent_mini this interpreter imports."""
    import tea_agent_mini

    return Path(tea_agent_mini.__file__).resolve().parent


def installed() -> bool:
    """Whether tea_agent_mini comes from an installed wheel rather than a source tree
    (an editable install counts as a source tree)."""
    return bool({"site-packages", "dist-packages"} & set(package_dir().parts))


def fresh_env(**extra: str) -> dict[str, str]:
    """The environment for a fresh interpreter that imports the same tea_agent_mini as this one:
    no PYTHONPATH of the caller's, the source tree's when that is what this one imports."""
    drop = ("PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME")
    env = {key: value for key, value in os.environ.items() if key not in drop}
    if not installed():
        env["PYTHONPATH"] = str(package_dir().parent)
    env.update(extra)
    return env
