"""A short title for a topic: asked of the cheap model, or the first words of the user's message."""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING

from ..errors import LLMError

if TYPE_CHECKING:
    from ..types import ChatModel

__all__ = ["TITLE_MARKER", "clean_title", "fallback_title", "generate_title"]

log = logging.getLogger(__name__)

MAX_TITLE_CHARS = 60
FALLBACK_WORDS = 8
# The title prompt starts with this; tests and fake models recognise title requests by it.
TITLE_MARKER = "Write a short title for the conversation below"
TITLE_PROMPT = (
    TITLE_MARKER + ": 3 to 6 words in the user's language, no quotes, no final punctuation. "
    "Answer with the title only."
)
_THINK = re.compile(r"<think(?:ing)?>.*?(?:</think(?:ing)?>|\Z)", re.S | re.I)
_PREFIX = re.compile(r"^(?:title|topic|标题)\s*[:：]\s*", re.I)
_WRAPPING = "\"'`*#“”‘’「」《》 "


def fallback_title(user_text: str) -> str:
    """The first words of the user's message, cut to a title's length."""
    words = " ".join(user_text.split()).split(" ")[:FALLBACK_WORDS]
    return _cut(" ".join(words)) or "New conversation"


def clean_title(text: str) -> str:
    """The model's answer as a title: no think block, prefix, quotes or trailing dot; one line."""
    cleaned = _THINK.sub("", text or "").strip()
    line = next((ln.strip() for ln in cleaned.splitlines() if ln.strip()), "")
    line = _PREFIX.sub("", line.strip(_WRAPPING)).strip(_WRAPPING).rstrip(".。!！?？:：;；,")
    return _cut(" ".join(line.split()))


def _cut(text: str) -> str:
    if len(text) <= MAX_TITLE_CHARS:
        return text
    cut = text[:MAX_TITLE_CHARS].rsplit(" ", 1)[0]
    return (cut if len(cut) >= MAX_TITLE_CHARS // 2 else text[:MAX_TITLE_CHARS]).rstrip() + "…"


async def generate_title(llm: ChatModel | None, user_text: str, answer_text: str) -> str:
    """A title for a conversation that starts with this exchange; never raises for the model."""
    if llm is not None and user_text.strip():
        exchange = f"User: {user_text.strip()[:800]}\n\nAssistant: {answer_text.strip()[:600]}"
        messages = [
            {"role": "system", "content": TITLE_PROMPT},
            {"role": "user", "content": exchange},
        ]
        try:
            title = clean_title((await llm.complete(messages)).content)
        except LLMError as exc:
            log.info("title from the model failed (%s); using the first words", exc)
            title = ""
        if title:
            return title
    return fallback_title(user_text)
