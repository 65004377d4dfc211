"""Inline markdown: ```code```, **bold**, *italic*, ***both*** (or with ``_``), and ``\\`` escapes.

Emphasis follows CommonMark closely enough for model output: a delimiter run opens when a
non-space follows it and closes when a non-space precedes it, ``_`` never inside a word (so
snake_case stays as it is), and the closer must be as long as the opener. Emphasis nests
(``**bold with *italic* inside**``); code spans are literal. Anything unmatched is plain text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .layout import BOLD, BOLD_ITALIC, CODE, ITALIC, REGULAR, Span

_TOKEN = re.compile(r"\\([!-/:-@\[-`{-~])|(`+)|(\*+|_+)")
_STYLES = {(False, False): REGULAR, (True, False): BOLD, (False, True): ITALIC}
_STYLES[(True, True)] = BOLD_ITALIC


@dataclass
class _Delimiter:
    run: str
    can_open: bool
    can_close: bool


_Token = str | Span | _Delimiter  # plain text, a code span, a delimiter run


def parse_inline(text: str) -> list[Span]:
    """Spans for code, bold and italic; the rest stays regular text."""
    spans = _merge(_emphasis(_tokens(text), bold=False, italic=False))
    return spans or [Span(text, REGULAR)]


def _tokens(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    position = 0
    while match := _TOKEN.search(text, position):
        tokens.append(text[position : match.start()])
        position = match.end()
        if match.group(1) is not None:
            tokens.append(match.group(1))  # an escaped punctuation character is plain text
        elif ticks := match.group(2):
            close = re.compile(rf"(?<!`){ticks}(?!`)").search(text, position)
            if close is None:
                tokens.append(ticks)
            else:
                tokens.append(Span(_code_text(text[position : close.start()]), CODE))
                position = close.end()
        else:
            run = match.group(3)
            before = text[match.start() - 1] if match.start() else " "
            after = text[position] if position < len(text) else " "
            opens, closes = not after.isspace(), not before.isspace()
            if run[0] == "_":
                opens, closes = opens and not before.isalnum(), closes and not after.isalnum()
            tokens.append(_Delimiter(run, opens, closes))
    tokens.append(text[position:])
    return tokens


def _code_text(text: str) -> str:
    """A code span's content: one leading and trailing space go when both are there."""
    if len(text) > 2 and text[0] == text[-1] == " " and text.strip():
        return text[1:-1]
    return text


def _emphasis(tokens: list[_Token], *, bold: bool, italic: bool) -> list[Span]:
    spans: list[Span] = []
    index = 0
    while index < len(tokens):
        token = tokens[index]
        index += 1
        if isinstance(token, Span):
            spans.append(token)
        elif isinstance(token, str):
            spans.append(Span(token, _STYLES[(bold, italic)]))
        elif token.can_open and len(token.run) <= 3 and (end := _closer(tokens, index, token)):
            strong, slanted = len(token.run) >= 2, len(token.run) != 2
            inner = tokens[index:end]
            spans += _emphasis(inner, bold=bold or strong, italic=italic or slanted)
            index = end + 1
        else:
            spans.append(Span(token.run, _STYLES[(bold, italic)]))
    return spans


def _closer(tokens: list[_Token], start: int, opener: _Delimiter) -> int | None:
    """Index of the delimiter that closes ``opener``, skipping pairs opened in between."""
    depth = 0
    for index in range(start, len(tokens)):
        token = tokens[index]
        if not isinstance(token, _Delimiter) or token.run != opener.run:
            continue
        if token.can_close:
            if depth == 0:
                return index
            depth -= 1
        else:
            depth += 1
    return None


def _merge(spans: list[Span]) -> list[Span]:
    merged: list[Span] = []
    for span in spans:
        if not span.text:
            continue
        if merged and merged[-1].style == span.style and span.style != CODE:
            merged[-1] = Span(merged[-1].text + span.text, span.style)
        else:
            merged.append(span)
    return merged
