"""Incremental Server-Sent Events parser (the subset of the WHATWG spec chat streams use).

Feed it text as it arrives, in chunks of any size; it returns complete events. Lines may end in
``\\r\\n``, ``\\n`` or ``\\r``; comment lines (``:``) are ignored; several ``data:`` lines join with
``\\n``. ``finish()`` flushes what is left when the connection ends.
"""

from __future__ import annotations

from dataclasses import dataclass

DONE = "[DONE]"

__all__ = ["DONE", "SSEEvent", "SSEParser", "parse_sse"]


@dataclass(frozen=True)
class SSEEvent:
    """One dispatched event; ``data`` is the payload string (usually one JSON document)."""

    data: str
    event: str = ""
    id: str | None = None

    @property
    def is_done(self) -> bool:
        """The OpenAI end-of-stream sentinel ``data: [DONE]``."""
        return self.data.strip() == DONE


class SSEParser:
    """Turns a text stream into :class:`SSEEvent` objects; keeps partial lines between feeds."""

    def __init__(self) -> None:
        self._buffer = ""
        self._data: list[str] = []
        self._event = ""
        self._last_id: str | None = None
        self._started = False

    def feed(self, text: str) -> list[SSEEvent]:
        """Add received text; return the events it completed."""
        if not self._started and text:
            self._started = True
            text = text.removeprefix("\ufeff")
        self._buffer += text
        events: list[SSEEvent] = []
        while True:
            line = self._take_line(final=False)
            if line is None:
                return events
            self._process(line, events)

    def finish(self) -> list[SSEEvent]:
        """The stream ended: treat a trailing partial line as complete and dispatch pending data.

        Strictly, an event without its closing blank line is discarded; chat servers that close
        the connection right after ``data: [DONE]`` exist, so this parser is lenient.
        """
        events: list[SSEEvent] = []
        while (line := self._take_line(final=True)) is not None:
            self._process(line, events)
        self._process("", events)
        return events

    def _take_line(self, *, final: bool) -> str | None:
        buffer = self._buffer
        cr, lf = buffer.find("\r"), buffer.find("\n")
        ends = [pos for pos in (cr, lf) if pos >= 0]
        if not ends:
            if final and buffer:
                self._buffer = ""
                return buffer
            return None
        pos = min(ends)
        if buffer[pos] == "\r" and pos + 1 == len(buffer) and not final:
            return None  # a "\n" may follow in the next chunk
        skip = 2 if buffer.startswith("\r\n", pos) else 1
        self._buffer = buffer[pos + skip :]
        return buffer[:pos]

    def _process(self, line: str, events: list[SSEEvent]) -> None:
        if not line:
            if self._data:
                events.append(SSEEvent("\n".join(self._data), self._event, self._last_id))
            self._data = []
            self._event = ""
            return
        if line.startswith(":"):
            return
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._last_id = value
        # "retry" and unknown fields are ignored, as the spec says.


def parse_sse(text: str) -> list[SSEEvent]:
    """Parse a complete SSE transcript (tests, recorded fixtures)."""
    parser = SSEParser()
    return parser.feed(text) + parser.finish()
