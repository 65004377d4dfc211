"""A small reader of POSIX shell command lines, for the deny-list (not for running them).

It splits a line into simple commands and words the way the shell would see them after quote
removal: ``r''m`` reads as ``rm``, ``$'\\x2f'`` as ``/``. Variables assigned earlier on the line
(``X=/; rm -rf $X``), ``$HOME`` (read as ``~``) and command substitutions whose output is fixed
(`` `echo /` ``, ``$(printf rm)``) are expanded; anything else that is only known at run time
stays as written and marks its word *dynamic*. The text of every command substitution is kept
so the caller can check it as a command of its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

ASSIGNMENT = re.compile(r"^([A-Za-z_]\w*)=(.*)$", re.S)
NAME = re.compile(r"[A-Za-z_]\w*")
OUTPUT_OPS = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
DECLARE = frozenset({"export", "declare", "local", "readonly", "typeset"})
_ESCAPES = re.compile(r"\\(x[0-9a-fA-F]{1,2}|[0-7]{1,3}|u[0-9a-fA-F]{4}|.)", re.S)
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "e": "\x1b", "0": "\0"}


@dataclass(frozen=True)
class Word:
    text: str
    dynamic: bool = False  # part of it is only known at run time
    sources: tuple[str, ...] = ()  # the command substitutions it was built from


@dataclass
class Command:
    """One simple command: its words, redirections, and how it joins the one before it."""

    joined_by: str = ""  # "", ";", "&&", "||", "|", "&" ...
    words: list[Word] = field(default_factory=list)
    redirects: list[tuple[str, Word]] = field(default_factory=list)
    stdin_text: str = ""  # a here-document or here-string


@dataclass
class Parsed:
    commands: list[Command]
    substitutions: list[str]  # text of every $(...), `...`, <(...) and >(...)


def unescape(text: str) -> str:
    """Backslash escapes as ``$'...'`` and ``printf`` read them (\\x2f, \\057, \\n ...)."""

    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        if code[0] == "x" and len(code) > 1:
            return chr(int(code[1:], 16))
        if code[0] == "u" and len(code) == 5:
            return chr(int(code[1:], 16))
        if code[0] in "01234567":
            return chr(int(code, 8) & 0xFF)
        return _SIMPLE_ESCAPES.get(code, code)

    return _ESCAPES.sub(one, text)


def echo_output(words: list[Word]) -> str | None:
    """What ``echo ...`` / ``printf ...`` prints when all its words are known, else None."""
    if not words or any(w.dynamic for w in words):
        return None
    name, args = words[0].text.rsplit("/", 1)[-1], [w.text for w in words[1:]]
    if name == "echo":
        escapes = False
        while args and re.fullmatch(r"-[neE]+", args[0]):
            escapes = escapes or "e" in args[0]
            args = args[1:]
        text = " ".join(args)
        return unescape(text) if escapes else text
    if name == "printf" and args:
        fmt, rest = args[0], args[1:]
        if fmt.replace("%%", "") in ("%s", "%s\\n"):
            return " ".join(rest)
        if "%" not in fmt.replace("%%", "") and not rest:
            return unescape(fmt.replace("%%", "%"))
    return None


def parse(text: str, env: dict[str, Word] | None = None) -> Parsed:
    """Split ``text`` into simple commands; ``env`` holds variables assigned before it."""
    reader = _Reader(text, dict(env or {}))
    reader.run()
    return Parsed(reader.commands, reader.substitutions)


class _Reader:
    def __init__(self, text: str, env: dict[str, Word]) -> None:
        self.text, self.pos, self.env = text, 0, env
        self.commands: list[Command] = []
        self.substitutions: list[str] = []
        self.current = Command()
        self.parts: list[str] = []
        self.in_word = False
        self.dynamic = False
        self.sources: list[str] = []
        self.redirect: str | None = None
        self.heredocs: list[tuple[str, bool, Command]] = []

    def run(self) -> None:
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if char in " \t":
                self.end_word()
                self.pos += 1
            elif char == "\\":
                if text[self.pos + 1 : self.pos + 2] != "\n":
                    self.add(text[self.pos + 1 : self.pos + 2])
                self.pos += 2
            elif char == "'":
                end = _find(text, "'", self.pos + 1)
                self.add(text[self.pos + 1 : end])
                self.pos = end + 1
            elif char == '"':
                self.double_quoted()
            elif char == "$" or char == "`":
                self.expansion(quoted=False)
            elif char == "#" and not self.in_word:
                self.pos = _find(text, "\n", self.pos)
            elif char == "\n":
                self.end_command(";")
                self.pos += 1
                self.read_heredocs()
            elif char in "<>" and text[self.pos + 1 : self.pos + 2] == "(":
                self.end_word()
                self.substitution(self.pos + 1, quoted=False, run=False)
            elif char in "<>" or text.startswith(("&>", "&>>"), self.pos):
                self.redirection()
            elif char in ";&|()":
                self.operator()
            else:
                self.add(char)
                self.pos += 1
        self.end_command("")

    def add(self, piece: str, dynamic: bool = False, sources: tuple[str, ...] = ()) -> None:
        self.parts.append(piece)
        self.in_word = True
        self.dynamic = self.dynamic or dynamic
        self.sources.extend(sources)

    def add_unquoted(self, word: Word) -> None:
        """An unquoted expansion is split into words at blanks, as the shell does."""
        pieces = word.text.split()
        if not pieces:
            if word.text:  # only blanks, e.g. ${IFS}: a word break
                self.end_word()
            return
        if word.text[:1].isspace():
            self.end_word()
        for index, piece in enumerate(pieces):
            if index:
                self.end_word()
            self.add(piece, word.dynamic, word.sources)
        if word.text[-1:].isspace():
            self.end_word()

    def end_word(self) -> None:
        if not self.in_word:
            return
        word = Word("".join(self.parts), self.dynamic, tuple(self.sources))
        self.parts, self.in_word, self.dynamic, self.sources = [], False, False, []
        if self.redirect is None:
            self.current.words.append(word)
        elif self.redirect == "<<<":
            self.current.stdin_text = word.text
        else:
            self.current.redirects.append((self.redirect, word))
        self.redirect = None

    def end_command(self, joined_by: str) -> None:
        self.end_word()
        self.redirect = None
        command = self.current
        if command.words or command.redirects or command.stdin_text:
            self.remember_assignments(command.words)
            self.commands.append(command)
        self.current = Command(joined_by)

    def remember_assignments(self, words: list[Word]) -> None:
        texts = [w.text for w in words]
        if texts and texts[0] in DECLARE:
            words = words[1:]
        elif len(texts) >= 3 and texts[0] == "for" and texts[2] == "in":
            # the loop variable stands for all its values; unquoted, it splits back into them
            values = words[3:]
            self.env[texts[1]] = Word(
                " ".join(w.text for w in values),
                any(w.dynamic for w in values),
                tuple(s for w in values for s in w.sources),
            )
            return
        elif not all(ASSIGNMENT.match(t) for t in texts):
            return  # VAR=x cmd: the value is the command's own, not the line's
        for word in words:
            match = ASSIGNMENT.match(word.text)
            if match:
                self.env[match.group(1)] = Word(match.group(2), word.dynamic, word.sources)

    def operator(self) -> None:
        for op in ("&&", "||", ";;", "|&", ";", "&", "|", "(", ")"):
            if self.text.startswith(op, self.pos):
                self.pos += len(op)
                self.end_command("|" if op == "|&" else op)
                return

    def redirection(self) -> None:
        if self.in_word and all(p.isdigit() for p in self.parts):
            self.parts, self.in_word = [], False  # the fd number of 2>file
        self.end_word()
        ops = ("&>>", "&>", "<<<", "<<-", "<<", ">>", ">|", ">&", "<&", "<>", ">", "<")
        op = next(o for o in ops if self.text.startswith(o, self.pos))
        self.pos += len(op)
        if op in ("<<", "<<-"):
            self.heredoc(strip_tabs=op == "<<-")
        else:
            self.redirect = op

    def heredoc(self, strip_tabs: bool) -> None:
        match = re.compile(r"[ \t]*(['\"]?)([^\s;&|<>'\"]+)\1").match(self.text, self.pos)
        if match is None:
            return
        self.pos = match.end()
        self.heredocs.append((match.group(2), strip_tabs, self.current))

    def read_heredocs(self) -> None:
        for delimiter, strip_tabs, command in self.heredocs:
            lines = []
            while self.pos < len(self.text):
                end = _find(self.text, "\n", self.pos)
                line = self.text[self.pos : end]
                self.pos = end + 1
                if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                    break
                lines.append(line)
            command.stdin_text = "\n".join(lines)
        self.heredocs = []

    def double_quoted(self) -> None:
        text = self.text
        self.pos += 1
        self.in_word = True
        while self.pos < len(text) and text[self.pos] != '"':
            char = text[self.pos]
            if char == "\\" and text[self.pos + 1 : self.pos + 2] in ('"', "\\", "$", "`", "\n"):
                if text[self.pos + 1] != "\n":
                    self.add(text[self.pos + 1])
                self.pos += 2
            elif char in "$`":
                self.expansion(quoted=True)
            else:
                self.add(char)
                self.pos += 1
        self.pos += 1

    def expansion(self, quoted: bool) -> None:
        text, start = self.text, self.pos
        if text[start] == "`":
            self.substitution(start, quoted, backtick=True)
        elif text.startswith("$((", start):
            end = _closing(text, start + 1)
            self.add(text[start : end + 1], dynamic=True)
            self.pos = end + 1
        elif text.startswith("$(", start):
            self.substitution(start + 1, quoted)
        elif text.startswith("$'", start) and not quoted:
            end = _find_unescaped(text, "'", start + 2)
            self.add(unescape(text[start + 2 : end]))
            self.pos = end + 1
        elif text.startswith("${", start):
            end = _find(text, "}", start + 2)
            self.pos = end + 1
            self.put(self.braced(text[start + 2 : end]), quoted)
        elif (match := NAME.match(text, start + 1)) is not None:
            self.pos = match.end()
            self.put(self.variable(match.group()), quoted)
        elif start + 1 < len(text) and text[start + 1] in "0123456789@*#?$!-":
            self.add(text[start : start + 2], dynamic=True)
            self.pos = start + 2
        else:
            self.add("$")
            self.pos += 1

    def put(self, word: Word, quoted: bool) -> None:
        if quoted:
            self.add(word.text, word.dynamic, word.sources)
        else:
            self.add_unquoted(word)

    def variable(self, name: str) -> Word:
        if name in self.env:
            return self.env[name]
        if name == "HOME":
            return Word("~")
        if name == "IFS":
            return Word(" ")
        return Word(f"${name}", dynamic=True)

    def braced(self, expression: str) -> Word:
        match = re.fullmatch(r"([A-Za-z_]\w*)(?::?[-=])?(.*)", expression, re.S)
        if match is None:
            return Word(f"${{{expression}}}", dynamic=True)
        name, default = match.group(1), match.group(2)
        if name not in self.env and name not in ("HOME", "IFS") and expression != name:
            # ${X:-default} with X unset on this line: the default is what the check can know
            commands = parse(default, self.env).commands
            words = commands[0].words if commands else []
            return Word(" ".join(w.text for w in words), any(w.dynamic for w in words))
        return self.variable(name)

    def substitution(
        self, open_paren: int, quoted: bool, backtick: bool = False, run: bool = True
    ) -> None:
        text = self.text
        if backtick:
            end = _find_unescaped(text, "`", open_paren + 1)
            inner = text[open_paren + 1 : end].replace("\\`", "`")
        else:
            end = _closing(text, open_paren)
            inner = text[open_paren + 1 : end]
        self.pos = end + 1
        self.substitutions.append(inner)
        if not run:  # process substitution: a file name only known at run time
            self.add(text[open_paren - 1 : end + 1], dynamic=True, sources=(inner,))
            self.end_word()
            return
        commands = parse(inner, self.env).commands
        output = echo_output(commands[0].words) if len(commands) == 1 else None
        if output is None:
            word = Word(f"$({inner})", dynamic=True, sources=(inner,))
        else:
            word = Word(output.rstrip("\n"))
        self.put(word, quoted)


def _find(text: str, char: str, start: int) -> int:
    """Index of ``char`` at or after ``start``; the end of the text when there is none."""
    found = text.find(char, start)
    return len(text) if found < 0 else found


def _find_unescaped(text: str, char: str, start: int) -> int:
    index = start
    while index < len(text) and text[index] != char:
        index += 2 if text[index] == "\\" else 1
    return min(index, len(text))


def _closing(text: str, open_paren: int) -> int:
    """Index of the parenthesis closing the one at ``open_paren`` (quotes respected)."""
    depth, index = 0, open_paren
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 1
        elif char == "'":
            index = _find(text, "'", index + 1)
        elif char == '"':
            index = _find_unescaped(text, '"', index + 1)
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return index
        index += 1
    return len(text)
