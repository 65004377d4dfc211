"""What a turn's model calls share, computed once when the turn starts: :class:`TurnContext`.

The requests of one turn must begin with the same bytes (servers reuse a cached prompt only for
an identical prefix), and the work of choosing memories, skills and tools should not repeat on
every call. So :class:`TurnPlanner` computes the stable system prompt, the volatile context
sections, the L2/L3 levels and the tools once per turn; each call then only adds the new
messages (and the tools enabled meanwhile, appended at the end of the list).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from ..llm.tokens import MESSAGE_OVERHEAD, REPLY_PRIMING, estimate_message_tokens
from ..llm.tokens import estimate_text_tokens as _tokens
from .budget import BUDGET_FILL, window_limit
from .builder import ContextInputs, build_window, load_levels
from .records import TopicSummary, TurnPair

if TYPE_CHECKING:
    from ..llm.tokens import TokenCalibrator
    from ..store import Store
    from ..toolkit.selection import ToolMenu
    from ..types import Message
    from .prompts import Profile

__all__ = ["PROMPT_SHARE", "PromptSettings", "TurnContext", "TurnPlanner", "WindowTooSmall"]

PROMPT_SHARE = 0.4  # system prompt + tools: at most this share of the window
TOOLS_SHARE = 0.25  # tools alone: at most this share, so the history keeps its room
UNLIMITED_TOOLS_BUDGET = 4500  # tool tokens when the window is unknown
# The volatile sections the runtime supplies: (topic id, user message, profile) -> sections
SectionSource = Callable[[str, str, "Profile"], Sequence[str]]


class WindowTooSmall(ConfigError):
    """The model's window cannot hold even the smallest request for this message."""


@dataclass(frozen=True)
class PromptSettings:
    """The slice of the config the request builder needs."""

    workspace: Path
    approval: str = "auto"
    profile: Profile = "full"
    max_tokens: int = 0


@dataclass(frozen=True)
class TurnContext:
    """The parts of a turn's requests fixed when the turn starts. ``prompt_version``: the
    version of the guidelines in its system prompt (0: built in; ``guidelines.py``)."""

    system_prompt: str
    sections: tuple[str, ...]
    pairs: tuple[TurnPair, ...]
    summary: TopicSummary | None
    tools: tuple[str, ...]
    profile: Profile
    prompt_version: int = 0


class TurnPlanner:
    """Builds a :class:`TurnContext` when a turn starts, and each request of the turn from it."""

    def __init__(
        self,
        store: Store,
        menu: ToolMenu,
        settings: PromptSettings,
        sections: SectionSource,
        calibrator: TokenCalibrator | None = None,
    ) -> None:
        self.store = store
        self.menu = menu
        self.settings = settings
        self.sections = sections
        self.calibrator = calibrator

    def start(self, topic_id: str, history: Sequence[Message]) -> TurnContext:
        """The turn's shared parts; records the guidelines' version on the turn's user message."""
        from ..toolkit.selection import enable_tools, topic_tools, used_tools
        from .guidelines import guidelines_in_use
        from .prompts import PromptParts, build_system_prompt

        settings = self.settings
        version, guidelines = guidelines_in_use(self.store.prompts.active(), settings.profile)
        system = build_system_prompt(
            PromptParts(
                workspace=settings.workspace,
                topic_prompt=self.store.topics.system_prompt(topic_id),
                approval=settings.approval,
                profile=settings.profile,
                guidelines=guidelines,
            )
        )
        opening = next((m.id for m in reversed(history) if m.role == "user"), None)
        if opening is not None:
            self.store.prompts.record_turn(opening, version)
        query = _current_text(history)
        sections = tuple(self.sections(topic_id, query, settings.profile))
        wanted = ["toolkit_skills"] if any(s.startswith("Skills") for s in sections) else []
        choice = self.menu.choose(
            query,
            topic_tools(self.store, topic_id),
            [*wanted, *used_tools(history)],
            self._tools_budget(system),
        )
        if choice.added:
            enable_tools(self.store, topic_id, choice.added)
        pairs, summary = load_levels(self.store, topic_id)
        return TurnContext(
            system, sections, tuple(pairs), summary, choice.names, settings.profile, version
        )

    def tool_names(self, turn: TurnContext, topic_id: str) -> list[str]:
        """The turn's tools, then any enabled since it started (appended: the prefix holds)."""
        from ..toolkit.selection import topic_tools

        names = list(turn.tools)
        names += [n for n in topic_tools(self.store, topic_id) if n not in names]
        return names

    def _tools_budget(self, system: str) -> int:
        if self.settings.max_tokens <= 0:
            return UNLIMITED_TOOLS_BUDGET
        ratio = self.calibrator.ratio if self.calibrator is not None else 1.0
        window = self.settings.max_tokens
        prompt = window_limit(window, ratio, int(window * PROMPT_SHARE))
        tools = window_limit(window, ratio, int(window * TOOLS_SHARE))
        return max(0, min(tools, prompt - _tokens(system) - MESSAGE_OVERHEAD))

    def request(
        self,
        turn: TurnContext,
        history: Sequence[Message],
        tools_tokens: int,
        target_tokens: int | None = None,
    ) -> list[dict[str, Any]]:
        """The messages of one request of the turn.

        Raises:
            WindowTooSmall: the system prompt, the tools and the current message (cut as far
                as it may be) do not fit the window.
        """
        window = build_window(
            ContextInputs(
                system_prompt=turn.system_prompt,
                history=history,
                pairs=turn.pairs,
                summary=turn.summary,
                max_tokens=self.settings.max_tokens,
                target_tokens=target_tokens,
                tools_tokens=tools_tokens,
                calibrator=self.calibrator,
                context_sections=turn.sections,
            )
        )
        if not window.fits:
            raise WindowTooSmall(self._too_small(window, tools_tokens))
        return window.render()

    def _too_small(self, window: Any, tools_tokens: int) -> str:
        ratio = self.calibrator.ratio if self.calibrator is not None else 1.0
        limit = self.settings.max_tokens
        system = _tokens(window.system) + MESSAGE_OVERHEAD + REPLY_PRIMING
        last = estimate_message_tokens(window.messages[-1]) if window.messages else 0
        need = round((system + tools_tokens + last) * ratio)
        return (
            f"The request does not fit the model's context window of {limit:,} tokens "
            f"(main_model.max_context_tokens): even cut down it needs about {need:,} tokens "
            f"(system prompt ~{round(system * ratio):,}, tools "
            f"~{round(tools_tokens * ratio):,}, the latest message ~{round(last * ratio):,}), "
            f"and {int(limit * BUDGET_FILL):,} is the most a request may use so the reply "
            "has room. Raise max_context_tokens (and the server's own context size, e.g. "
            "llama-server -c), set agent.prompt: compact, or send a shorter message."
        )


def _current_text(history: Sequence[Message]) -> str:
    return next((m.text for m in reversed(history) if m.role == "user"), "")
