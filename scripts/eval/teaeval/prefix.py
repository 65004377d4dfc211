"""Does each request of a session extend the one before it?

A server's prompt cache can only reuse the part of a request that repeats the previous one from
its first token. So request k should consist of request k-1's messages, unchanged, followed by
new ones, with the same tools. The messages are compared in a canonical serialisation (sorted
keys, one message per line) so that key order on the wire does not count as a change.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class PrefixStep:
    """How request ``index`` (0-based within its session) relates to request ``index - 1``."""

    index: int
    common_chars: int
    previous_chars: int
    tools_same: bool

    @property
    def fraction(self) -> float:
        """The share of the previous request's messages that request ``index`` repeats."""
        return 1.0 if self.previous_chars == 0 else self.common_chars / self.previous_chars

    @property
    def extends(self) -> bool:
        return self.tools_same and self.common_chars == self.previous_chars


def serialize_messages(messages: Any) -> str:
    if not isinstance(messages, list):
        return ""
    return "".join(
        json.dumps(m, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"
        for m in messages
    )


def _tools(body: dict[str, Any]) -> str:
    return json.dumps(body.get("tools") or [], ensure_ascii=False, sort_keys=True)


def prefix_steps(bodies: Sequence[Any]) -> list[PrefixStep]:
    """One step per consecutive pair of request bodies (none for fewer than two)."""
    steps = []
    dicts = [body if isinstance(body, dict) else {} for body in bodies]
    for index in range(1, len(dicts)):
        before, after = dicts[index - 1], dicts[index]
        old = serialize_messages(before.get("messages"))
        new = serialize_messages(after.get("messages"))
        steps.append(
            PrefixStep(
                index=index,
                common_chars=len(os.path.commonprefix([old, new])),
                previous_chars=len(old),
                tools_same=_tools(before) == _tools(after),
            )
        )
    return steps
