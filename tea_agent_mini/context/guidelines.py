"""The guidelines: the versioned block of the system prompt (the agent's identity and rules).

Version 0 is the built-in text of the prompt profile (``prompts.builtin_guidelines``); a stored
version (``store/prompts.py``) holds the whole replacement text, used with either profile. Every
version must:

- keep :data:`REQUIRED_RULES`, the rules the turn loop relies on (do the work with tool calls,
  paths inside the workspace, toolkit_find_tools for the other tools). What keeps the agent safe
  is not in this block and never versioned: the approval policy, workspace confinement and the
  deny-list are enforced in code, and the environment section that states a read-only or
  ask-first policy follows the guidelines in every prompt;
- fit the profile's budget (:data:`LIMITS`, characters): a version too long for the profile in
  use is refused when it is set or accepted, and one that became too long (the profile changed
  since, e.g. a smaller model) is not used: the turn runs with version 0 and says so in the log;
- hold no secret: nothing that looks like a key, a token or a password, and none of the
  configured secrets.
"""

from __future__ import annotations

import difflib
import logging
import re
import unicodedata
from collections.abc import Iterable
from typing import TYPE_CHECKING, Literal

from ..errors import TeaAgentError
from .prompts import builtin_guidelines

if TYPE_CHECKING:
    from ..store.prompts import PromptVersion
    from .prompts import Profile

__all__ = [
    "LIMITS",
    "REQUIRED_RULES",
    "PromptVersionError",
    "builtin_version",
    "check_guidelines",
    "diff_versions",
    "guidelines_in_use",
    "missing_rules",
]

log = logging.getLogger(__name__)

# Characters. The compact profile is for windows of 16k tokens or less, where the system prompt
# and the tools share 40 % of the window (turn.PROMPT_SHARE): 1,200 characters is ~300 tokens,
# about twice the built-in compact text.
LIMITS: dict[str, int] = {"full": 4000, "compact": 1200}

# phrase every version must contain (case and spacing aside) -> the rule it stands for
REQUIRED_RULES: dict[str, str] = {
    "with tool calls": "Do the task with tool calls; do not hand the user code or commands to "
    "run instead.",
    "relative to the workspace": "Paths are relative to the workspace; stay inside it.",
    "toolkit_find_tools": "toolkit_find_tools finds the other tools by what you need.",
}

SECRET_SHAPES = re.compile(
    r"\b(?:sk|pk|rk)-[A-Za-z0-9_-]{16,}"  # OpenAI-style API keys
    r"|\bgh[pousr]_[A-Za-z0-9]{20,}"  # GitHub tokens
    r"|\bxox[abpr]-[A-Za-z0-9-]{10,}"  # Slack tokens
    r"|\bAKIA[0-9A-Z]{16}\b"  # AWS access key ids
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----"
    r"|\b(?:api[_-]?key|token|secret|passw(?:or)?d)\s*[:=]\s*['\"]?[^\s'\"]{8,}",
    re.IGNORECASE,
)

Reason = Literal["invalid", "missing", "conflict"]


class PromptVersionError(TeaAgentError):
    """A prompt version that breaks the rules above (``invalid``), names no version
    (``missing``), or an action the versions' state does not allow (``conflict``)."""

    def __init__(self, message: str, reason: Reason = "invalid") -> None:
        super().__init__(message)
        self.reason = reason


def _flat(text: str) -> str:
    return " ".join(text.lower().split())


def missing_rules(text: str) -> list[str]:
    """The required rules ``text`` does not keep."""
    flat = _flat(text)
    return [rule for phrase, rule in REQUIRED_RULES.items() if _flat(phrase) not in flat]


def check_guidelines(text: str, profile: Profile, secrets: Iterable[str] = ()) -> str:
    """``text`` tidied (line ends, outer blank space) if it may be a version of the guidelines.

    Raises:
        PromptVersionError: empty, too long for ``profile``, a control character, a required
            rule dropped, or something that looks like a secret.
    """
    lines = text.replace("\r\n", "\n").replace("\r", "\n").strip().split("\n")
    tidy = "\n".join(line.rstrip() for line in lines)
    if not tidy:
        raise PromptVersionError("the guidelines are empty")
    limit = LIMITS[profile]
    if len(tidy) > limit:
        raise PromptVersionError(
            f"the guidelines are {len(tidy):,} characters; the {profile} prompt profile allows "
            f"{limit:,} (they are part of every request's system prompt)"
        )
    if any(unicodedata.category(c) == "Cc" and c not in "\n\t" for c in tidy):
        raise PromptVersionError("the guidelines contain a control character")
    missing = missing_rules(tidy)
    if missing:
        raise PromptVersionError(
            "the guidelines must keep these rules (in these words or close): " + " ".join(missing)
        )
    if SECRET_SHAPES.search(tidy) or any(s and s in tidy for s in secrets):
        raise PromptVersionError("the guidelines look like they contain a secret (key or token)")
    return tidy


def guidelines_in_use(active: PromptVersion | None, profile: Profile) -> tuple[int, str | None]:
    """(version, text) the system prompt uses: the active version, or (0, None) for the
    built-in text — also when the active one is too long for ``profile``."""
    if active is None:
        return 0, None
    if len(active.text) > LIMITS[profile]:
        log.warning(
            "prompt version %d is longer than the %s profile allows (%d characters); the "
            "built-in guidelines are used instead",
            active.version,
            profile,
            LIMITS[profile],
        )
        return 0, None
    return active.version, active.text


def builtin_version(profile: Profile, active: bool) -> PromptVersion:
    """Version 0: the built-in text of ``profile`` (``active``: no stored version is)."""
    from ..store.prompts import PromptVersion

    status = "active" if active else "retired"
    return PromptVersion(0, builtin_guidelines(profile), status=status, source="builtin")


def diff_versions(old: PromptVersion, new: PromptVersion) -> str:
    """A unified diff from ``old`` to ``new`` ("" when the texts are the same)."""
    lines = difflib.unified_diff(
        old.text.splitlines(),
        new.text.splitlines(),
        fromfile=f"version {old.version}",
        tofile=f"version {new.version}",
        lineterm="",
    )
    return "\n".join(lines)
