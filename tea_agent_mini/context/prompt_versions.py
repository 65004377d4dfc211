"""Prompt evolution: the versions of the guidelines (``guidelines.py``) listed, set, proposed
from evidence, accepted, rolled back and compared. :class:`PromptVersions` is built by
``Runtime.prompts``; ``toolkit_prompt_evolve`` and ``/v1/prompts`` both use it.

``evolve`` gathers what recent work showed — evaluations and lessons (``store.evaluations`` and
``store.lessons``, when the store has them), the user's remembered instructions and
preferences, and how the turns of each version ended — and asks the cheap model for a revised
text. The text is checked like any version and stored as a *proposal*: no prompt changes until
the user accepts it. ``rollback`` returns to the version the active one was made from (its
``parent``), or to the version named.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import StoreError
from .guidelines import (
    LIMITS,
    REQUIRED_RULES,
    PromptVersionError,
    builtin_version,
    check_guidelines,
    diff_versions,
    guidelines_in_use,
)

if TYPE_CHECKING:
    from ..store import Store
    from ..store.prompts import PromptVersion, TurnOutcomes
    from ..types import ChatModel
    from .prompts import Profile

__all__ = ["EVOLVE_MARKER", "Evidence", "PromptVersions", "Proposal"]

log = logging.getLogger(__name__)

EVIDENCE_LIMIT = 8  # records of each kind
ITEM_CHARS = 300
EVALUATION_FIELDS = ("outcome", "quality", "summary", "feedback")
LESSON_FIELDS = ("category", "what_went_wrong", "instead")
# The evolve prompt starts with this; tests and fake models recognise evolve requests by it.
EVOLVE_MARKER = "Revise the standing instructions of an AI agent"
EVOLVE_PROMPT = (
    EVOLVE_MARKER + " from what its recent work showed. You get its current instructions and "
    "the evidence: evaluations of finished tasks, lessons learned, the user's remembered "
    "instructions and preferences, how its turns ended.\n"
    "Write the complete revised instructions:\n"
    "- short: at most {limit} characters, plain sentences or '-' bullets;\n"
    "- keep each of these rules, in these words or close to them: {rules}\n"
    "- change only what the evidence supports, and keep what works;\n"
    "- general guidance, not a record of what happened; no secrets, keys, passwords, personal "
    "data, file contents or details of one task.\n"
    "Answer with the revised instructions only: no preamble, no code fence, no explanation."
)
_THINK = re.compile(r"<think(?:ing)?>.*?(?:</think(?:ing)?>|\Z)", re.S | re.I)
_FENCE = re.compile(r"\A```[\w-]*\n(.*)\n```\Z", re.S)


@dataclass(frozen=True)
class Evidence:
    """What an evolve pass learns from; ``unavailable`` names the sources this store lacks."""

    evaluations: tuple[str, ...] = ()
    lessons: tuple[str, ...] = ()
    memories: tuple[str, ...] = ()
    outcomes: tuple[str, ...] = ()
    unavailable: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.evaluations or self.lessons or self.memories)

    def counts(self) -> dict[str, int]:
        return {
            "evaluations": len(self.evaluations),
            "lessons": len(self.lessons),
            "memories": len(self.memories),
            "versions_with_turns": len(self.outcomes),
        }

    def summary(self) -> str:
        used = ", ".join(f"{n} {kind}" for kind, n in self.counts().items() if n)
        text = f"from {used}" if used else "from no evidence"
        if self.unavailable:
            text += f" ({' and '.join(self.unavailable)} not available in this store)"
        return text

    def render(self) -> str:
        blocks = [
            ("Evaluations of recent tasks", self.evaluations),
            ("Lessons learned", self.lessons),
            ("The user's standing instructions and preferences (from memory)", self.memories),
            ("How the turns of each version of the instructions ended", self.outcomes),
        ]
        return "\n\n".join(
            f"{title}:\n" + "\n".join(f"- {item}" for item in items)
            for title, items in blocks
            if items
        )


@dataclass(frozen=True)
class Proposal:
    """A proposed version, the version it revises, the diff between them, what it came from."""

    version: PromptVersion
    base: PromptVersion
    diff: str
    evidence: Evidence


class PromptVersions:
    """The guidelines' versions for one prompt profile. ``secrets`` lists the configured
    secrets, which no version may contain (read when a text is checked)."""

    def __init__(
        self,
        store: Store,
        profile: Profile,
        secrets: Callable[[], Iterable[str]] = tuple,
    ) -> None:
        self.store = store
        self.profile = profile
        self.secrets = secrets

    def current(self) -> PromptVersion:
        """The active version (version 0 when none is stored)."""
        return self.store.prompts.active() or builtin_version(self.profile, active=True)

    def in_use(self) -> int:
        """The version the next turn's system prompt carries (0 also when the active one is
        too long for this profile)."""
        return guidelines_in_use(self.store.prompts.active(), self.profile)[0]

    def get(self, version: int) -> PromptVersion:
        """Raises PromptVersionError (missing) for a version that does not exist."""
        if version == 0:
            return builtin_version(self.profile, active=self.store.prompts.active() is None)
        found = self.store.prompts.get(version) if version > 0 else None
        if found is None:
            raise PromptVersionError(f"no prompt version {version}", "missing")
        return found

    def newest(self, limit: int = 50, offset: int = 0) -> list[PromptVersion]:
        """Stored versions, newest first (version 0 is not among them)."""
        return self.store.prompts.newest(limit, offset)

    def outcomes(self) -> dict[int, TurnOutcomes]:
        return self.store.prompts.turn_outcomes()

    def check(self, text: str) -> str:
        return check_guidelines(text, self.profile, self.secrets())

    def set(self, text: str, note: str = "") -> PromptVersion:
        """Store ``text`` as a new version and make it the active one.

        Raises:
            PromptVersionError: the text breaks the rules (``guidelines.py``), or it is the
                active text already.
        """
        tidy = self.check(text)
        base = self.current()
        if tidy == base.text:
            raise PromptVersionError(f"version {base.version} has this text already", "conflict")
        with self.store.transaction():
            added = self.store.prompts.add(tidy, source="user", parent=base.version, note=note)
            self.store.prompts.activate(added.version)
        return self.get(added.version)

    def accept(self, version: int) -> PromptVersion:
        """Make the proposal ``version`` the active version.

        Raises:
            PromptVersionError: no such version, it is not a proposal, or it does not fit this
                prompt profile.
        """
        target = self.get(version)
        if target.status != "proposed":
            raise PromptVersionError(
                f"version {version} is not a proposal (it is {target.status}); "
                f"rollback to={version} returns to an earlier version",
                "conflict",
            )
        self.check(target.text)
        self.store.prompts.activate(version)
        return self.get(version)

    def rollback(self, to: int | None = None) -> PromptVersion:
        """Return to the version the active one was made from, or to version ``to`` (0: the
        built-in text). Returns the version now active.

        Raises:
            PromptVersionError: nothing to roll back (version 0 is active), ``to`` does not
                exist, was never accepted, is active already, or does not fit this profile.
        """
        active = self.current()
        if to is None:
            if active.parent is None:
                raise PromptVersionError(
                    "the built-in guidelines (version 0) are in use: nothing to roll back",
                    "conflict",
                )
            to = active.parent
        target = self.get(to)
        if target.status == "proposed":
            raise PromptVersionError(f"version {to} was never accepted; accept it", "conflict")
        if target.version == active.version:
            raise PromptVersionError(f"version {to} is in use already", "conflict")
        if target.version:
            self.check(target.text)
        self.store.prompts.activate(target.version)
        return self.get(target.version)

    def diff(self, version: int | None = None, against: int | None = None) -> str:
        """The diff from ``against`` (default: the version ``version`` was made from) to
        ``version`` (default: the active one); "" when the texts are the same."""
        new = self.current() if version is None else self.get(version)
        if against is None:
            against = new.parent if new.parent is not None else new.version
        return diff_versions(self.get(against), new)

    def gather(self, limit: int = EVIDENCE_LIMIT) -> Evidence:
        """Recent evaluations, lessons and memories, and the turns of each version."""
        evaluations = _recent(self.store, "evaluations", limit, EVALUATION_FIELDS)
        lessons = _recent(self.store, "lessons", limit, LESSON_FIELDS)
        memories: list[str] = []
        for category in ("instruction", "preference"):
            found = self.store.memories.matching(category=category, limit=limit)
            memories += [_short(m.content) for m in found]
        in_use = self.in_use()
        outcomes = tuple(
            f"version {version}{' (current)' if version == in_use else ''}: {tally.turns} "
            f"turns, {tally.completed} completed, {tally.stopped} stopped, {tally.failed} failed"
            for version, tally in sorted(self.outcomes().items())
        )
        return Evidence(
            evaluations=evaluations or (),
            lessons=lessons or (),
            memories=tuple(memories),
            outcomes=outcomes,
            unavailable=tuple(
                name
                for name, found in (("evaluations", evaluations), ("lessons", lessons))
                if found is None
            ),
        )

    async def evolve(self, llm: ChatModel, note: str = "") -> Proposal:
        """Ask ``llm`` for a revision of the active version from the evidence, and store it as
        a proposal (not in use until accepted).

        Raises:
            PromptVersionError: no evidence yet (conflict), or the model's text breaks the rules
                or changes nothing (invalid).
            LLMError: the model call failed.
        """
        base, evidence = await asyncio.to_thread(lambda: (self.current(), self.gather()))
        if evidence.empty:
            raise PromptVersionError(
                "nothing to learn from yet: no evaluations, lessons, or instructions and "
                f"preferences in memory ({evidence.summary()})",
                "conflict",
            )
        rules = " ".join(REQUIRED_RULES.values())
        instruction = EVOLVE_PROMPT.format(limit=LIMITS[self.profile], rules=rules)
        messages = [
            {"role": "system", "content": instruction},
            {
                "role": "user",
                "content": f"Current instructions:\n{base.text}\n\n{evidence.render()}",
            },
        ]
        completion = await llm.complete(messages)
        text = _clean_reply(str(completion.content or ""))
        try:
            text = self.check(text)
        except PromptVersionError as exc:
            raise PromptVersionError(f"the model's revision was refused: {exc}") from exc
        if text == base.text:
            raise PromptVersionError("the model proposed no change to the guidelines")

        def store() -> PromptVersion:
            return self.store.prompts.add(
                text, source="evolved", parent=base.version, note=note or evidence.summary()
            )

        proposed = await asyncio.to_thread(store)
        return Proposal(proposed, base, diff_versions(base, proposed), evidence)


def _recent(store: Store, name: str, limit: int, fields: tuple[str, ...]) -> tuple[str, ...] | None:
    """The newest records of the repository ``store.<name>`` as lines, or None when this store
    has no such repository. Written against the repositories' ``recent(limit)``; a store whose
    repository answers otherwise counts as not having it."""
    recent = getattr(getattr(store, name, None), "recent", None)
    if not callable(recent):
        return None
    try:
        records = list(recent(limit))
    except (StoreError, TypeError) as exc:
        log.warning("cannot read recent %s for prompt evolution: %s", name, exc)
        return None
    lines = (_describe(record, fields) for record in records[:limit])
    return tuple(line for line in lines if line)


def _describe(record: Any, fields: tuple[str, ...]) -> str:
    parts = []
    for name in fields:
        value = record.get(name) if isinstance(record, dict) else getattr(record, name, None)
        if value not in (None, ""):
            parts.append(f"{name}: {_short(str(value))}")
    return "; ".join(parts)


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= ITEM_CHARS else flat[: ITEM_CHARS - 1] + "…"


def _clean_reply(text: str) -> str:
    """The model's answer without a think block or a code fence around it."""
    cleaned = _THINK.sub("", text).strip()
    fenced = _FENCE.match(cleaned)
    return fenced.group(1).strip() if fenced else cleaned
