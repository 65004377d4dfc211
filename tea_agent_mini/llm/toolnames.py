"""Which real tool a wrong tool name probably meant: ``file`` -> toolkit_file, ``bash`` ->
toolkit_exec, ``search_files`` -> toolkit_grep.

Small models call tools by the names they know from other agents or by a part of ours. A name is
scored against each real one by spelling (difflib, with the shared ``toolkit_`` prefix left out),
by its words (``read_file`` shares ``file`` with toolkit_file) and by a few common synonyms.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Iterable

__all__ = ["CLOSE", "close_tool_names", "rank_tool_names", "unknown_tool_message"]

CLOSE = 0.75
"""A score from here up means "almost certainly meant this tool"."""
_ALIKE = 0.5

_PREFIX = "toolkit_"
# Words other agents use for what one of our tools does; the value is that tool's name without
# the prefix. Whole names are looked up first, then each word.
_SYNONYMS = {
    "bash": "exec", "shell": "exec", "sh": "exec", "terminal": "exec", "run": "exec",
    "command": "exec", "cmd": "exec", "execute": "exec", "subprocess": "exec", "python": "exec",
    "read": "file", "write": "file", "cat": "file", "open": "file", "ls": "file",
    "list_files": "file", "list_dir": "file", "list_directory": "file", "create_file": "file",
    "grep": "grep", "rg": "grep", "search_files": "grep", "search_file": "grep",
    "find_in_files": "grep", "search_code": "grep", "find": "glob", "find_files": "glob",
    "edit_file": "edit", "str_replace": "edit", "replace": "edit", "replace_in_file": "edit",
    "fetch": "web_fetch", "curl": "web_fetch", "wget": "web_fetch", "browse": "web_fetch",
    "web_search": "search", "search_web": "search", "google": "search",
    "time": "gettime", "date": "gettime", "now": "gettime", "current_time": "gettime",
    "remember": "memory", "recall": "memory", "ask": "question", "ask_user": "question",
    "patch": "apply_patch", "apply_diff": "apply_patch", "todos": "todo", "todo_write": "todo",
    "str_replace_editor": "edit", "str_replace_based_edit_tool": "edit",
}  # fmt: skip
_SPLIT = re.compile(r"[^a-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def rank_tool_names(name: str, names: Iterable[str]) -> list[tuple[str, float]]:
    """Every name in ``names`` with its score for ``name`` (0..1), best first."""
    wanted = _normal(name)
    scored = [(real, _score(wanted, _normal(real))) for real in names]
    return sorted(scored, key=lambda pair: (-pair[1], pair[0]))


def close_tool_names(name: str, names: Iterable[str], limit: int = 3) -> list[str]:
    """The real names ``name`` very likely meant, best first (none when nothing is close)."""
    return [real for real, score in rank_tool_names(name, names)[:limit] if score >= CLOSE]


def unknown_tool_message(name: str, names: Collection[str], shown: int = 8) -> str:
    """A short error for a call to ``name``: the likely names first, then how many others."""
    if not names:
        return f"unknown tool {name!r}. No tools are available."
    ranked = rank_tool_names(name, names)
    close = [real for real, score in ranked[:3] if score >= CLOSE]
    # after a likely match, only names that are at least somewhat alike are worth the tokens
    floor = _ALIKE if close else 0.0
    others = [real for real, score in ranked if real not in close and score >= floor]
    others = others[: max(0, shown - len(close))]
    hidden = len(names) - len(close) - len(others)
    parts = [f"unknown tool {name!r}."]
    if close:
        parts.append(f"Did you mean: {', '.join(close)}?")
    if others:
        label = "Other tools" if close else "Tools with the nearest names"
        parts.append(f"{label}: {', '.join(others)}" + (f" and {hidden} more." if hidden else "."))
    elif hidden:
        parts.append("1 other tool exists." if hidden == 1 else f"{hidden} other tools exist.")
    parts.append("Call a tool by its exact name.")
    return " ".join(parts)


def _normal(name: str) -> str:
    name = _CAMEL.sub("_", name.strip()).lower().removeprefix("functions.")
    return "_".join(word for word in _SPLIT.split(name) if word)


def _core(name: str) -> str:
    return name.removeprefix(_PREFIX)


def _score(wanted: str, real: str) -> float:
    if wanted == real:
        return 1.0
    want, have = _core(wanted), _core(real)
    spelling = difflib.SequenceMatcher(None, want, have).ratio()
    if want == have:
        return 0.99
    synonym = _SYNONYMS.get(want)
    if synonym is not None:
        return 0.95 if synonym == have else min(spelling, 0.5)
    return max(spelling, _word_score(want, have))


def _word_score(want: str, have: str) -> float:
    """Shared words, with synonyms: ``read_file`` and ``file`` share everything that matters."""
    words = {_SYNONYMS.get(word, word) for word in want.split("_")}
    real = set(have.split("_"))
    if "_" in have:  # a multi-word tool such as web_fetch may be named by a synonym as a whole
        real |= {have}
    shared = len(words & real)
    return 0.9 * shared / max(len(words), len(set(have.split("_")))) if shared else 0.0
