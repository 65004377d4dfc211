"""Simple Markdown for a terminal, rendered as the answer streams in: headings, **bold**,
`code`, fenced code blocks, lists, quotes and rules, with ANSI escapes.

Text is passed on as soon as its meaning is known: the start of a line waits until it is clear
whether it opens a heading, list item, quote, rule or fence; a ``*`` or a backtick at the end of
a piece waits for the next piece. Styles left open at the end of a line are closed there.
"""

from __future__ import annotations

import re

BOLD, CODE, DIM, HEADING, RESET = "\x1b[1m", "\x1b[36m", "\x1b[2m", "\x1b[1;4m", "\x1b[0m"
MARKS = {"**": BOLD, "`": CODE}
FENCE = "```"

_HEADING = re.compile(r"#{1,6} ")
_BULLET = re.compile(r"(\s*)[-*+] ")
_RULE = re.compile(r"-{3,}|\*{3,}|_{3,}")
_RULE_SO_FAR = re.compile(r"[-*_]+")
_LINES = re.compile(r"[^\n]*\n|[^\n]+")


class MarkdownStream:
    """Feed it the answer's pieces; it returns what to write to the terminal."""

    def __init__(self) -> None:
        self._held = ""  # the start of the current line, until its kind is known
        self._started = False  # the start of the current line was written
        self._in_code = False  # inside a fenced block
        self._base = ""  # the style of the whole line (heading, code block)
        self._marks: list[str] = []  # inline marks open on this line: "**" or "`"
        self._pending = ""  # trailing "*" or "`" that the next piece may extend

    def feed(self, text: str) -> str:
        return "".join(self._feed_line(line) for line in _LINES.findall(text))

    def close(self) -> str:
        """The end of the answer (or of its text before a tool call): whatever is still held.
        A code block the model left open ends here too."""
        out = ""
        if self._started or self._held:
            out = self._continue("", final=True) if self._started else self._begin(final=True)
            out += self._end_line()
        self._in_code = False
        return out

    def _feed_line(self, piece: str) -> str:
        ends = piece.endswith("\n")
        body = piece.removesuffix("\n")
        if self._started:
            out = self._continue(body, final=ends)
        else:
            self._held += body
            out = self._begin(final=ends)
        return out + (self._end_line() + "\n" if ends else "")

    def _end_line(self) -> str:
        was_styled = bool(self._marks or self._base)
        self._held, self._pending, self._started = "", "", False
        self._base, self._marks = "", []
        return RESET if was_styled else ""

    def _begin(self, final: bool) -> str:
        """The start of the line in its style once its kind is clear ("" until then)."""
        line = self._held
        stripped = line.lstrip()
        if not final and _undecided(stripped, self._in_code):
            return ""
        self._started = True
        if stripped.startswith(FENCE):
            self._in_code = not self._in_code
            self._base = DIM
            return DIM + line
        if self._in_code:
            self._base = CODE
            return CODE + line
        if final and _RULE.fullmatch(stripped.rstrip()):
            return DIM + "─" * 40 + RESET
        heading = _HEADING.match(line)
        if heading:
            self._base = HEADING
            return HEADING + self._continue(line[heading.end() :], final)
        bullet = _BULLET.match(line)
        if bullet:
            return bullet.group(1) + "• " + self._continue(line[bullet.end() :], final)
        if stripped.startswith("> "):
            return DIM + "│ " + RESET + self._continue(stripped[2:], final)
        return self._continue(line, final)

    def _continue(self, text: str, final: bool) -> str:
        """More of a started line, its ``**`` and backticks turned into styles."""
        text, self._pending = self._pending + text, ""
        if self._base in (CODE, DIM):  # code and fence lines are shown as they are
            return text
        if not final:
            held = len(text) - len(text.rstrip("*`"))
            text, self._pending = text[: len(text) - held], text[len(text) - held :]
        out = []
        for part in re.split(r"(\*\*|`)", text):
            if part == "`" or (part == "**" and "`" not in self._marks):
                out.append(self._toggle(part))
            else:
                out.append(part)
        return "".join(out)

    def _toggle(self, mark: str) -> str:
        if mark in self._marks:
            self._marks.remove(mark)
            return RESET + self._base + "".join(MARKS[m] for m in self._marks)
        self._marks.append(mark)
        return MARKS[mark]


def _undecided(stripped: str, in_code: bool) -> bool:
    """Whether more of the line is needed to know what kind of line it is."""
    if FENCE.startswith(stripped) or in_code:
        return FENCE.startswith(stripped)
    if stripped[0] == "#":
        return len(stripped) <= 6 and set(stripped) == {"#"}
    if stripped[0] in "-*+_":
        return _RULE_SO_FAR.fullmatch(stripped) is not None
    return stripped == ">"
