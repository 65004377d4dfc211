"""The approval policy: the one place that decides whether something that changes state may run.

Every path that can write files or run code asks :func:`decide`: the tool executor (built-in,
self-made and MCP tools), ``POST /v1/tools/{name}/run``, scheduled shell tasks when they are
created and again at every run (the policy may have changed since), and whatever else a front end
adds. The callers only turn the decision into their own kind of refusal (a tool error the model
reads, a 403, a failed task run).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Decision", "POLICIES", "decide"]

POLICIES = ("auto", "ask", "never")
Verdict = Literal["run", "ask", "refuse"]


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    reason: str = ""  # why it was refused, worded for whoever made the call

    @property
    def runs(self) -> bool:
        return self.verdict == "run"


def decide(
    policy: str,
    subject: str,
    *,
    changes: bool,
    can_ask: bool = False,
    confirmed: bool = False,
) -> Decision:
    """What happens to ``subject`` (a tool name, "shell task ...") under ``policy``.

    ``changes``: it writes files, runs commands or acts on the world. ``can_ask``: a person can
    be asked now (a terminal, the web UI). ``confirmed``: the person already said yes for this
    very call (``"confirm": true`` on a direct run, or creating the task that now runs).
    """
    if not changes or policy == "auto":
        return Decision("run")
    if policy == "never":
        return Decision(
            "refuse",
            f"{subject} is not available in read-only mode (approval: never): it writes files "
            "or runs commands, so it was not run",
        )
    if confirmed:
        return Decision("run")
    if can_ask:
        return Decision("ask")
    return Decision(
        "refuse",
        f"{subject} needs the user's approval (approval: ask), but nobody can be asked here; "
        "it was not run",
    )
