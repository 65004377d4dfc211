"""Skill crystallisation: a task that went well becomes a SKILL.md the next conversations get.

A finished turn whose evaluation says success with quality 4 or more, and that took several
tool calls, is worth keeping. The cheap model writes the skill (when to use it, the steps, the
pitfalls met, the tools used) from the turn's request, calls and answer; without a model the
calls themselves make the steps. The skill lands in ``<home>/skills/learned/<name>/SKILL.md``
with its provenance (topic, date, score, version) in the front matter's ``metadata``.

Before writing, the draft is compared with the skills there are (the local embedder's cosine of
name, description and triggers): close to a learned skill, it becomes that skill's next version
(the old text kept under ``versions/``, triggers merged); close to any other skill (bundled or
the user's), it is not written, since that skill already covers it.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
import logging
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..skills.loader import SKILL_FILE, Skill, load_skills
from .skillmatch import closest

if TYPE_CHECKING:
    from ..store import Store
    from ..store.evaluations import Evaluation
    from ..types import ChatModel, Message

log = logging.getLogger(__name__)

__all__ = ["Crystal", "Draft", "crystallise", "learned_dir", "worth_crystallising"]

LEARNED = "learned"
MIN_QUALITY = 4
MIN_TOOL_CALLS = 2
SAME_SKILL = 0.75  # cosine (local embedder) at which a draft is the same skill as one there is
MAX_STEPS = 12
MAX_TURN_MESSAGES = 80
ARGUMENT_CHARS = 160
ANSWER_CHARS = 1500
TIMEOUT = 60.0

CRYSTALLISE_PROMPT = """You turn a task that was completed well into a reusable skill for next
time: the general method, not this one case's details. Answer with one JSON object only:
{"name": "<two to four words naming the method, joined by hyphens>",
 "description": "<what the skill does and when to use it, one sentence>",
 "when_to_use": "<...>", "steps": ["<...>", "<...>"], "pitfalls": ["<...>"],
 "triggers": ["<a request a user would make for it>"]}"""
TURN_TEXT = """The request: {request}

The tool calls, in order:
{calls}

The final answer: {answer}"""


@dataclass(frozen=True)
class Draft:
    name: str
    description: str
    when_to_use: str
    steps: tuple[str, ...]
    pitfalls: tuple[str, ...] = ()
    triggers: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    source: str = "model"  # model | heuristic

    def match_text(self) -> str:
        return " ".join([self.name.replace("-", " "), self.description, *self.triggers])


@dataclass(frozen=True)
class Crystal:
    """What crystallisation did: ``created``, ``updated`` (a new version) or ``skipped``."""

    action: str
    name: str = ""
    path: Path | None = None
    version: int = 0
    reason: str = ""


@dataclass
class _Turn:
    request: str
    calls: list[tuple[str, str]] = field(default_factory=list)  # (tool, arguments)
    answer: str = ""


def learned_dir(home: Path) -> Path:
    return Path(home) / "skills" / LEARNED


def worth_crystallising(evaluation: Evaluation) -> bool:
    """A success of quality 4+ that took several tool calls."""
    return (
        evaluation.outcome == "success"
        and evaluation.quality >= MIN_QUALITY
        and evaluation.tool_calls >= MIN_TOOL_CALLS
        and evaluation.errors < evaluation.tool_calls
    )


async def crystallise(
    store: Store,
    home: Path,
    evaluation: Evaluation,
    llm: ChatModel | None = None,
    *,
    workspace: Path | None = None,
) -> Crystal:
    """Write (or version) the learned skill of ``evaluation``'s turn; never raises for a model
    that fails (the heuristic draft is used) or a turn that is gone (skipped)."""
    import asyncio

    if not worth_crystallising(evaluation):
        return Crystal("skipped", reason="not a multi-step success of quality 4 or more")
    turn = await asyncio.to_thread(_read_turn, store, evaluation)
    if turn is None:
        return Crystal("skipped", reason="the turn is no longer stored")
    draft = await _model_draft(llm, turn) if llm is not None else None
    draft = draft or heuristic_draft(turn)
    return await asyncio.to_thread(write_learned, home, draft, evaluation, workspace)


def _read_turn(store: Store, evaluation: Evaluation) -> _Turn | None:
    first = int(evaluation.user_message_id)
    messages = store.messages.of_topic(
        evaluation.topic_id, limit=MAX_TURN_MESSAGES, after_id=first - 1
    )
    if not messages or messages[0].id != first:
        return None
    turn = _Turn(request=messages[0].text)
    for message in messages[1:]:
        if message.role == "user":
            break
        _add(turn, message)
    return turn


def read_turn(store: Store, evaluation: Evaluation) -> _Turn | None:
    """The evaluated turn's request, calls and answer, as stored (None when it is gone)."""
    return _read_turn(store, evaluation)


def loaded_skills(turn: _Turn) -> list[str]:
    """The skills the turn loaded (``toolkit_skills action=load``), in order, each once."""
    names: list[str] = []
    for tool, arguments in turn.calls:
        if tool != "toolkit_skills" or '"load"' not in arguments:
            continue
        found = re.search(r'"name"\s*:\s*"([^"]+)"', arguments)
        if found and found.group(1) not in names:
            names.append(found.group(1))
    return names


def _add(turn: _Turn, message: Message) -> None:
    if message.role == "assistant":
        for call in message.tool_calls:
            turn.calls.append((call.name, call.arguments[:ARGUMENT_CHARS]))
        if not message.tool_calls and message.text:
            turn.answer = message.text[:ANSWER_CHARS]


async def _model_draft(llm: ChatModel, turn: _Turn) -> Draft | None:
    import asyncio

    from ..errors import LLMError
    from ..llm.repair import repair_json

    calls = "\n".join(f"- {name} {arguments}" for name, arguments in turn.calls) or "(none)"
    text = TURN_TEXT.format(request=turn.request[:1000], calls=calls, answer=turn.answer or "-")
    messages = [
        {"role": "system", "content": CRYSTALLISE_PROMPT},
        {"role": "user", "content": text},
    ]
    try:
        completion = await asyncio.wait_for(llm.complete(messages), TIMEOUT)
        data = repair_json(completion.content or "")
    except (LLMError, asyncio.TimeoutError) as exc:
        log.info("crystallisation: the model gave no draft (%s); using the calls", exc)
        return None
    return _draft_from(data, turn) if isinstance(data, dict) else None


def _draft_from(data: dict[str, Any], turn: _Turn) -> Draft | None:
    """The model's draft; a small model copies the format's placeholders, which are dropped
    (a name then comes from the request, the request becomes the trigger)."""
    name = "" if _placeholder(data.get("name")) else slug(str(data.get("name") or ""))
    description = " ".join(str(data.get("description") or "").split())[:300]
    steps = [step for step in _strings(data.get("steps"))[:MAX_STEPS] if not _placeholder(step)]
    if _placeholder(description) or not description or not steps:
        return None
    triggers = [t for t in _strings(data.get("triggers"))[:8] if not _placeholder(t)]
    when = str(data.get("when_to_use") or "")
    return Draft(
        name=name or request_name(turn.request),
        description=description,
        when_to_use=" ".join((description if _placeholder(when) else when).split())[:500],
        steps=tuple(steps),
        pitfalls=tuple(p for p in _strings(data.get("pitfalls"))[:6] if not _placeholder(p)),
        triggers=tuple(triggers or [" ".join(turn.request.split())[:100]]),
        tools=_tools(turn),
    )


_PLACEHOLDER_WORDS = ("lowercase-words", "words naming", "a user would", "<", "...")


def _placeholder(value: Any) -> bool:
    text = str(value or "").strip().lower()
    return not text or any(word in text for word in _PLACEHOLDER_WORDS)


def request_name(request: str) -> str:
    """A skill name from the request's first meaningful words."""
    from ..terms import STOPWORDS

    words = [w for w in re.findall(r"[a-z0-9]+", request.lower()) if w not in STOPWORDS]
    return slug("-".join(words[:5])) or "learned-task"


def heuristic_draft(turn: _Turn) -> Draft:
    """A skill made of the turn's own calls, for when no model can write one."""
    name = request_name(turn.request)
    request = " ".join(turn.request.split())[:200]
    steps = [f"Call {tool} with arguments like {arguments}" for tool, arguments in turn.calls]
    return Draft(
        name=name,
        description=f"How a task like '{request}' was done before.",
        when_to_use=f"When asked something like: {request}",
        steps=tuple(steps[:MAX_STEPS]),
        triggers=(request[:100],),
        tools=_tools(turn),
        source="heuristic",
    )


def write_learned(
    home: Path, draft: Draft, evaluation: Evaluation, workspace: Path | None = None
) -> Crystal:
    """Write the draft as a new learned skill, or as the next version of the one it matches."""
    skills = list(load_skills(home, workspace).skills.values())
    similarity, match = closest(draft.match_text(), skills)
    if match is not None and similarity >= SAME_SKILL:
        if match.source != LEARNED:
            return Crystal("skipped", match.name, reason=f"the {match.source} skill covers it")
        return _new_version(home, match, draft, evaluation)
    name = _free_name(draft.name, {skill.name for skill in skills})
    return _write(learned_dir(home) / name, name, draft, evaluation, version=1, action="created")


def _new_version(home: Path, skill: Skill, draft: Draft, evaluation: Evaluation) -> Crystal:
    folder = learned_dir(home) / Path(str(skill.location)).name
    old = folder / SKILL_FILE
    version = learned_version(skill) + 1
    if old.is_file():
        (folder / "versions").mkdir(exist_ok=True)
        os.replace(old, folder / "versions" / f"v{version - 1}.md")
    triggers = tuple(dict.fromkeys([*skill.triggers, *draft.triggers]))[:10]
    merged = dataclasses.replace(draft, name=skill.name, triggers=triggers)
    return _write(folder, skill.name, merged, evaluation, version=version, action="updated")


def _write(
    folder: Path, name: str, draft: Draft, evaluation: Evaluation, *, version: int, action: str
) -> Crystal:
    from ..skills.authoring import render_skill_md
    from ..skills.loader import parse_skill

    metadata = {
        "learned_from": evaluation.topic_id,
        "learned_at": _dt.date.today().isoformat(),
        "score": evaluation.quality,
        "version": version,
        "tools": list(draft.tools),
        "draft": draft.source,
    }
    text = render_skill_md(
        name, draft.description, _body(draft, evaluation, version), (), draft.triggers, metadata
    )
    parse_skill(text, folder_name=name)  # what is written must read back
    folder.mkdir(parents=True, exist_ok=True)
    temporary = folder / f".{SKILL_FILE}.tmp"
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, folder / SKILL_FILE)
    return Crystal(action, name, folder / SKILL_FILE, version)


def _body(draft: Draft, evaluation: Evaluation, version: int) -> str:
    lines = [
        f"# {draft.name.replace('-', ' ').capitalize()}",
        "",
        "## When to use",
        draft.when_to_use,
    ]
    lines += ["", "## Steps", *(f"{n}. {step}" for n, step in enumerate(draft.steps, 1))]
    if draft.pitfalls:
        lines += ["", "## Pitfalls", *(f"- {p}" for p in draft.pitfalls)]
    if draft.tools:
        lines += ["", "## Tools used", ", ".join(draft.tools)]
    lines += [
        "",
        f"_Learned from topic {evaluation.topic_id[:8]} (quality {evaluation.quality}/5); "
        f"version {version}._",
    ]
    return "\n".join(lines)


def learned_version(skill: Skill) -> int:
    """The version a learned skill records in its front matter's metadata (1 when none)."""
    meta = skill.metadata.get("metadata")
    value = meta.get("version") if isinstance(meta, dict) else None
    return int(value) if isinstance(value, int) and value > 0 else 1


def slug(text: str) -> str:
    """``text`` as a skill name: lowercase words joined by single hyphens, at most 48 chars."""
    words = re.findall(r"[a-z0-9]+", text.lower())
    return "-".join(words)[:48].strip("-")


def _free_name(name: str, taken: set[str]) -> str:
    candidate, number = name, 2
    while candidate in taken:
        candidate, number = f"{name}-{number}", number + 1
    return candidate


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, Sequence):
        return []
    return [" ".join(str(item).split())[:300] for item in value if str(item).strip()]


def _tools(turn: _Turn) -> tuple[str, ...]:
    return tuple(dict.fromkeys(name for name, _ in turn.calls))


def describe(crystal: Crystal) -> str:
    """One line for logs and the job record."""
    return json.dumps({k: str(v) for k, v in crystal.__dict__.items() if v})
