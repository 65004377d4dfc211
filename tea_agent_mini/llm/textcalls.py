"""Tool calls that a model wrote into its text instead of the ``tool_calls`` field.

Local models behind servers that do not parse their chat template print calls as text. Only the
shapes such models print are taken for calls, and only when the calls end the reply:

1. Tags, which are call syntax and nothing else: Hermes/Qwen ``<tool_call>{...}</tool_call>``
   and ``<function=name>{...}</function>`` (or with ``<parameter=k>v</parameter>``). Each tag
   starts its own line, only whitespace separates tags. Either they end the reply (any text may
   come before: models often think aloud first), or they open it (after one short line at most)
   and what follows is dropped: a small model goes on to imagine the calls' results. A tag
   inside a code fence or inline code is text.
2. Otherwise the whole reply must be calls: JSON objects or lists of them, bare or in fences
   (```json, ```, ```tool_call, ```tool_code), separated only by whitespace. One short line may
   lead in ("Sure, I'll create the file:"), if it has no code and does not introduce an example;
   a ``<think>`` block printed before it is reasoning, not reply, and is set aside.

So JSON quoted in an explanation never runs: an example in prose, documentation written for the
user, a call followed by more text, a fenced block among paragraphs. Everything in the reply that
looks like a call must be one, or none is taken. What a single call may look like (and which names
count) is in textcall_shapes.py.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from ..types import ToolCall
from .assemble import clean_template_tokens
from .repair import JSONRepairError, read_json_value
from .textcall_shapes import (
    FUNCTION_TAG,
    ToolNames,
    calls_from_value,
    function_tag_call,
    tool_call_tag_calls,
)

__all__ = ["extract_text_tool_calls", "quoted_calls"]

_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|\Z)", re.S)
_CODE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]+`", re.S)
# The closing fence starts a line: a JSON string cannot hold a raw newline, so ``` inside the
# content of a file being written does not end the block.
_FENCE = re.compile(
    r"```[ \t]*(?:json5?|tool_call|tool_code)?[ \t]*\r?\n(.*?)(?:\n[ \t]*```|\Z)", re.S | re.I
)
# Words that introduce an example or an explanation rather than an action.
_EXAMPLE = re.compile(
    r"\b(?:examples?|for instance|samples?|syntax|format|schema|template|usage|how to|such as"
    r"|looks? like|would look|here is|here's|here are)\b|\be\.g\.",
    re.I,
)
_EMPTY_TOOLS = re.compile(r"<tools>\s*</tools>\s*")
_TOOLS_TAG = re.compile(r"<(/?)tools>")
_THINK = re.compile(r"\s*<think>.*?</think>\s*", re.S)
_LEAD_IN_MAX = 200
_BLOCK_STARTS = ("{", "[", "```")

_Found = tuple[str, list[ToolCall]]
_Span = tuple[int, int, list[ToolCall]]


def extract_text_tool_calls(
    content: str, tool_names: Collection[str]
) -> tuple[str, list[ToolCall]]:
    """Split ``content`` into (the text without the calls, the calls in order).

    When the reply is not calls by the rules above, it comes back unchanged with no calls.
    """
    names = ToolNames(frozenset(tool_names))
    if not content or not names.known:
        return content, []
    text = _normalise(content)
    found = _tag_calls(text, names) or _reply_calls(text, names)
    return found or (content, [])


def quoted_calls(content: str, tool_names: Collection[str]) -> list[ToolCall]:
    """Calls of known tools that ``content`` quotes among other text, in order: what a small
    model writes when it describes its steps instead of taking them. They are never run (the
    rules above hold); the turn loop asks the model to make the call instead."""
    names = ToolNames(frozenset(n for n in tool_names))
    text = _normalise(content)
    calls: list[ToolCall] = []
    pos = text.find("{")
    while pos >= 0:
        try:
            value, end = read_json_value(text, pos)
        except JSONRepairError:
            pos = text.find("{", pos + 1)
            continue
        found = calls_from_value(value, names)
        calls += [call for call in found if call.name in names.known]
        pos = text.find("{", max(end, pos + 1))
    return calls


def _normalise(content: str) -> str:
    """Undo two slips of small Qwen models that echo their chat template: ``<tools>`` (the tag
    that lists the schemas) used for ``<tool_call>``, often as an empty pair before the call, and
    a call in doubled braces (``{{"name": ...}}``, as in a template's escaped example)."""
    text = _EMPTY_TOOLS.sub("", content)
    text = _TOOLS_TAG.sub(lambda m: "</tool_call>" if m.group(1) else "<tool_call>", text)
    stripped = text.strip()
    if stripped.startswith("{{") and stripped.endswith("}}"):
        return stripped[1:-1]
    return text


def _tag_calls(content: str, names: ToolNames) -> _Found | None:
    spans = _tag_spans(content, names)
    if not spans or any(not calls for _, _, calls in spans):
        return None
    if not all(_starts_line(content, start) for start, _, _ in spans):
        return None
    group = [spans[0]]  # the first run of tags, separated by whitespace only
    for span in spans[1:]:
        if content[group[-1][1] : span[0]].strip():
            break
        group.append(span)
    lead = content[: group[0][0]].strip()
    if _EXAMPLE.search(lead.rsplit("\n", 1)[-1]):
        return None
    rest = clean_template_tokens(content[group[-1][1] :]).strip().strip("`").strip()
    # Text after the calls is taken only when they open the reply (after one short line at
    # most): a small model goes on to imagine the calls' results, which are dropped.
    if rest and (len(group) < len(spans) or "\n" in lead or len(lead) > _LEAD_IN_MAX):
        return None
    return lead, [call for _, _, calls in group for call in calls]


def _tag_spans(content: str, names: ToolNames) -> list[_Span]:
    """Every tag outside code, in order, with the calls it holds (none if it holds no call)."""
    code = [match.span() for match in _CODE.finditer(content)]
    spans: list[_Span] = []
    for match in _TOOL_CALL.finditer(content):
        if not _inside(match.start(), code):
            spans.append((match.start(), match.end(), tool_call_tag_calls(match.group(1), names)))
    taken = list(spans)
    for match in FUNCTION_TAG.finditer(content):
        if not _inside(match.start(), code) and not _inside(match.start(), taken):
            call = function_tag_call(match.group(1), match.group(2), names)
            spans.append((match.start(), match.end(), [call] if call else []))
    return sorted(spans, key=lambda span: span[0])


def _inside(pos: int, spans: list[tuple[int, int]] | list[_Span]) -> bool:
    return any(span[0] <= pos < span[1] for span in spans)


def _starts_line(content: str, pos: int) -> bool:
    return not content[content.rfind("\n", 0, pos) + 1 : pos].strip()


def _reply_calls(content: str, names: ToolNames) -> _Found | None:
    """The whole reply as calls, after at most one lead-in line."""
    text = clean_template_tokens(content)
    thinking = _THINK.match(text)  # reasoning printed inline is not part of the reply
    text = text[thinking.end() :] if thinking else text
    if text.startswith(_BLOCK_STARTS):
        lead, body = "", text
    else:
        lead, _, body = text.partition("\n")
        lead, body = lead.strip(), body.lstrip()
        if not body.startswith(_BLOCK_STARTS) or not _is_lead_in(lead):
            return None
    calls = _block_calls(body, names)
    kept = f"{thinking.group().strip()}\n{lead}".strip() if thinking else lead
    return (kept, calls) if calls else None


def _is_lead_in(line: str) -> bool:
    too_long = len(line) > _LEAD_IN_MAX
    return not too_long and "{" not in line and "```" not in line and not _EXAMPLE.search(line)


def _block_calls(text: str, names: ToolNames) -> list[ToolCall]:
    """Fenced blocks and bare JSON values up to the end of ``text``, all of them calls."""
    calls: list[ToolCall] = []
    pos = 0
    while (pos := _skip_space(text, pos)) < len(text):
        fence = _FENCE.match(text, pos)
        if fence:
            found, pos = _values_calls(fence.group(1), names), fence.end()
        elif text.startswith("```", pos):
            return []  # a fence of another language: code, not a call
        else:
            found, pos = _value_calls(text, pos, names)
        if not found:
            return []
        calls += found
    return calls


def _values_calls(text: str, names: ToolNames) -> list[ToolCall]:
    """One or more JSON values separated by whitespace, all of them calls."""
    calls: list[ToolCall] = []
    pos = 0
    while (pos := _skip_space(text, pos)) < len(text):
        found, pos = _value_calls(text, pos, names)
        if not found:
            return []
        calls += found
    return calls


def _value_calls(text: str, pos: int, names: ToolNames) -> tuple[list[ToolCall], int]:
    if text[pos] not in "{[":
        return [], pos
    try:
        value, end = read_json_value(text, pos)
    except JSONRepairError:
        return [], pos
    return calls_from_value(value, names), end


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos
