"""How a subagent's session is built from its identity and its parent's context.

The child gets a topic of its own (source ``subagent``, naming its parent and identity, with the
identity's prompt as the topic's system prompt, so the stable prefix holds across its calls)
or continues the one the request names (a teammate's, kept across its turns),
the identity's tools only (offered and enforced), the identity's model and turn limit, and the
parent's way to reach the user for approvals. A read-only identity runs under ``approval:
never``; otherwise the child inherits the parent's policy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from .identities import PARENT_ONLY, Identity
from .subagents import ChildRequest, SubagentError

if TYPE_CHECKING:
    from ..config import Config
    from ..context.turn import TurnContext, TurnPlanner
    from ..store import Store
    from ..toolkit.context import ToolContext
    from ..toolkit.registry import Toolkit
    from ..toolkit.selection import ToolMenu
    from ..types import ChatModel, Message
    from .session import Session

TITLE_CHARS = 60


class ChildParts(Protocol):
    """What building a child session needs of the runtime (``runtime.Runtime``)."""

    config: Config

    @property
    def store(self) -> Store: ...

    @property
    def toolkit(self) -> Toolkit: ...

    @property
    def tool_menu(self) -> ToolMenu: ...

    @property
    def planner(self) -> TurnPlanner: ...

    def llm_for(self, model: str) -> ChatModel: ...

    def tool_context(self, topic_id: str | None, *args: Any) -> ToolContext: ...

    def turn_context(self, session: Session, history: list[Message]) -> TurnContext: ...

    def offered_tools(self, session: Session, history: list[Message]) -> list[dict[str, Any]]: ...


def build_child_session(parts: ChildParts, request: ChildRequest) -> Session:
    """A session for ``request``'s identity in a new topic under the parent's topic (or in the
    topic the request names).

    Raises:
        SubagentError: the identity's model cannot be used, or it may use no installed tool.
    """
    from ..toolkit.executor import ToolExecutor
    from .session import Session, TurnSettings

    identity, parent = request.identity, request.parent
    llm, window = _model(parts, identity)
    allowed = identity.allowed(parts.toolkit.names())
    if identity.tools is not None and not allowed:
        raise SubagentError(f"none of the {identity.name} subagent's tools is installed")
    topic_id = request.topic_id
    if topic_id is None:
        topic_id = parts.store.topics.create(
            title=f"{identity.name}: {_title(request.task)}",
            profile=parts.config.profile,
            source="subagent",
            parent_id=parent.topic_id if parent is not None else None,
            agent=identity.name,
            system_prompt=identity.prompt,
        ).id
    context = _child_context(parts, topic_id, identity, parent)
    executor = ToolExecutor(
        parts.toolkit,
        context,
        max_output_bytes=parts.config.agent.tool_output_limit,
        allowed=frozenset(allowed),
        owner=f"{identity.name} subagent's",
    )
    offer = _Offer(parts, identity, allowed)
    return Session(
        topic_id=topic_id,
        llm=llm,
        executor=executor,
        store=parts.store,
        build_context=offer.build_context,
        settings=TurnSettings(
            max_iterations=identity.max_turns,
            max_context_tokens=window,
            max_output_tokens=parts.config.main_model.max_tokens,
        ),
        offer_tools=offer.tools,
    )


class _Offer:
    """The child's tools in each request: exactly its list when it has one; otherwise the usual
    choice without the tools only a parent has."""

    def __init__(self, parts: ChildParts, identity: Identity, allowed: list[str]) -> None:
        self.parts = parts
        self.listed = identity.tools is not None
        self.allowed = allowed

    def names(self, session: Session, history: list[Message]) -> list[str]:
        if self.listed:
            return self.allowed
        turn = self.parts.turn_context(session, history)
        names = self.parts.planner.tool_names(turn, session.topic_id)
        return [name for name in names if name not in PARENT_ONLY and name in self.allowed]

    def tools(self, session: Session, history: list[Message]) -> list[dict[str, Any]]:
        return self.parts.tool_menu.schemas(self.names(session, history))

    def build_context(
        self, session: Session, history: list[Message], target_tokens: int | None = None
    ) -> list[dict[str, Any]]:
        turn = self.parts.turn_context(session, history)
        tokens = self.parts.tool_menu.tokens(self.names(session, history))
        return self.parts.planner.request(turn, history, tokens, target_tokens)


def _model(parts: ChildParts, identity: Identity) -> tuple[ChatModel, int]:
    """The identity's chat model and its window (0: unknown)."""
    from ..errors import ConfigError

    try:
        llm = parts.llm_for(identity.model)
    except ConfigError as exc:
        raise SubagentError(
            f"the {identity.name} subagent's model {identity.model!r} cannot be used: {exc}"
        ) from exc
    config = parts.config
    model = config.cheap if identity.model == "cheap" else config.main_model
    return llm, model.max_context_tokens


def _child_context(
    parts: ChildParts, topic_id: str, identity: Identity, parent: ToolContext | None
) -> ToolContext:
    if parent is None:
        context = parts.tool_context(topic_id)
    else:
        context = parts.tool_context(topic_id, parent.approve, parent.ask_user, parent.on_notice)
        context.approval = parent.approval
    if identity.read_only:
        context.approval = "never"
    context.depth = (parent.depth if parent is not None else 0) + 1
    return context


def _title(task: str) -> str:
    flat = " ".join(task.split())
    return flat if len(flat) <= TITLE_CHARS else flat[: TITLE_CHARS - 3] + "..."
