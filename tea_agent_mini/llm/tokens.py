"""Token estimates without a tokenizer, and a calibrator that learns from real counts.

Rough rates of BPE tokenizers: English and other Latin text ~4 characters per token, CJK ~1.5,
other scripts (Cyrillic, Arabic, emoji ...) ~2. Good enough to decide when to trim a context;
:class:`TokenCalibrator` corrects the bias per model from the provider's ``prompt_tokens``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any

__all__ = [
    "IMAGE_TOKENS",
    "MESSAGE_OVERHEAD",
    "TokenCalibrator",
    "estimate_message_tokens",
    "estimate_messages_tokens",
    "estimate_text_tokens",
    "estimate_tools_tokens",
]

MESSAGE_OVERHEAD = 4
REPLY_PRIMING = 3
IMAGE_TOKENS = 85
_LATIN_END = 0x250  # Basic Latin .. Latin Extended-B
_CJK_RANGES = (
    (0x2E80, 0x9FFF),  # radicals, punctuation, kana, CJK unified ideographs
    (0xAC00, 0xD7AF),  # Hangul syllables
    (0xF900, 0xFAFF),  # compatibility ideographs
    (0xFF00, 0xFFEF),  # full-width forms
    (0x20000, 0x2FFFF),  # extension B and beyond
)


def _is_cjk(code: int) -> bool:
    return any(low <= code <= high for low, high in _CJK_RANGES)


def estimate_text_tokens(text: str) -> int:
    """Estimated tokens in ``text`` (0 for empty)."""
    if not text:
        return 0
    if text.isascii():
        return math.ceil(len(text) / 4)
    latin = cjk = other = 0
    for char in text:
        code = ord(char)
        if code < _LATIN_END:
            latin += 1
        elif _is_cjk(code):
            cjk += 1
        else:
            other += 1
    return math.ceil(latin / 4 + cjk / 1.5 + other / 2)


def _content_tokens(content: Any) -> int:
    if content is None:
        return 0
    if isinstance(content, str):
        return estimate_text_tokens(content)
    if isinstance(content, list):
        total = 0
        for part in content:
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "text":
                total += estimate_text_tokens(str(part.get("text", "")))
            elif kind in ("image_url", "image", "input_image"):
                total += IMAGE_TOKENS
            else:
                total += estimate_text_tokens(json.dumps(part, ensure_ascii=False))
        return total
    return estimate_text_tokens(json.dumps(content, ensure_ascii=False))


def estimate_message_tokens(message: dict[str, Any]) -> int:
    """Estimated tokens for one OpenAI-format message: overhead, role, content, reasoning, the
    names and arguments of its tool calls, images at ~85 each."""
    total = MESSAGE_OVERHEAD + _content_tokens(message.get("content"))
    for key in ("name", "reasoning_content", "tool_call_id"):
        value = message.get(key)
        if isinstance(value, str):
            total += estimate_text_tokens(value)
    for call in message.get("tool_calls") or []:
        if not isinstance(call, dict):
            continue
        function = call.get("function") or {}
        arguments = function.get("arguments", "")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments, ensure_ascii=False)
        total += MESSAGE_OVERHEAD + estimate_text_tokens(str(function.get("name") or ""))
        total += estimate_text_tokens(arguments)
    return total


def estimate_messages_tokens(messages: Iterable[dict[str, Any]]) -> int:
    """Estimated prompt tokens for a whole message list (plus the reply priming)."""
    total = sum(estimate_message_tokens(message) for message in messages)
    return total + REPLY_PRIMING if total else 0


def estimate_tools_tokens(tools: Iterable[dict[str, Any]] | None) -> int:
    """Estimated tokens the tool schemas add to a prompt."""
    if not tools:
        return 0
    return sum(
        estimate_text_tokens(json.dumps(tool, ensure_ascii=False, separators=(",", ":")))
        for tool in tools
    )


class TokenCalibrator:
    """Learns how far the estimates are off for one model and corrects them.

    ``observe(estimated, actual)`` after each call that reported ``prompt_tokens``; ``apply`` then
    scales later estimates by a moving average of actual/estimated, bounded to 0.5..2.0.
    """

    MIN_RATIO = 0.5
    MAX_RATIO = 2.0

    def __init__(self, smoothing: float = 0.3) -> None:
        self.smoothing = smoothing
        self.ratio = 1.0
        self.samples = 0

    def observe(self, estimated: int, actual: int) -> None:
        if estimated <= 0 or actual <= 0:
            return
        sample = min(self.MAX_RATIO, max(self.MIN_RATIO, actual / estimated))
        if self.samples == 0:
            self.ratio = sample
        else:
            self.ratio += self.smoothing * (sample - self.ratio)
        self.samples += 1

    def apply(self, estimated: int) -> int:
        return math.ceil(estimated * self.ratio) if estimated > 0 else 0

    def estimate_messages(self, messages: Iterable[dict[str, Any]]) -> int:
        return self.apply(estimate_messages_tokens(messages))
