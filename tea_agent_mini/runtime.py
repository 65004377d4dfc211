"""The composition root: builds the store, toolkit and model clients once, hands out sessions.

The CLI, the server and the tests all go through :class:`Runtime`; nothing else constructs these
parts. Each part is built on first use so a command pays only for what it touches.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from typing import TYPE_CHECKING, Any

from .config import Config, load_config
from .types import ApprovalCallback, AskUserCallback, NoticeCallback

if TYPE_CHECKING:
    from .agent.background import BackgroundWorker
    from .agent.session import Session, UserContent
    from .llm.client import OpenAIChatClient
    from .llm.tokens import TokenCalibrator
    from .mcp.manager import McpManager
    from .memory.manager import MemoryManager
    from .scheduler.runner import SchedulerRunner
    from .store import Store
    from .toolkit.registry import Toolkit
    from .types import Done, Message

log = logging.getLogger(__name__)

BORROWABLE = ("store", "toolkit")

SHUTDOWN_DRAIN_SECONDS = 30.0


class Runtime:
    def __init__(self, config: Config) -> None:
        self.config = config
        # the scheduled-task runner, when this process runs one (set by start_scheduler)
        self.scheduler: SchedulerRunner | None = None
        self._borrowed: tuple[str, ...] = ()  # parts shared from the runtime we derive from

    @classmethod
    def from_profile(cls, profile: str | None = None) -> Runtime:
        return cls(load_config(profile))

    @functools.cached_property
    def store(self) -> Store:
        from .store import Store

        return Store.open(self.config.db_path)

    @functools.cached_property
    def toolkit(self) -> Toolkit:
        from .toolkit.registry import Toolkit
        from .toolkit.usertools import sync_user_tools

        toolkit = Toolkit.load()
        sync_user_tools(toolkit, self.config.home)
        if self.mcp is not None:
            self.mcp.register_into(toolkit, wait=False)  # servers' tools join as they start
        for module, error in toolkit.load_errors.items():
            log.warning("tool module %s failed to load: %s", module, error)
        return toolkit

    @functools.cached_property
    def main_llm(self) -> OpenAIChatClient:
        from .llm.client import OpenAIChatClient

        return OpenAIChatClient(self.config.require_model())

    @functools.cached_property
    def cheap_llm(self) -> OpenAIChatClient:
        from .llm.client import OpenAIChatClient

        if not self.config.cheap_model.model_name:
            return self.main_llm
        return OpenAIChatClient(self.config.cheap)

    @functools.cached_property
    def mcp(self) -> McpManager | None:
        """The MCP servers' manager, or None when none are configured."""
        from .mcp.servers import SERVERS_FILE

        if not self.config.mcp_servers and not (self.config.home / SERVERS_FILE).is_file():
            return None
        from .mcp.manager import McpManager

        return McpManager(self.config.mcp_servers, self.config.home)

    @functools.cached_property
    def memory(self) -> MemoryManager:
        from .memory.manager import MemoryManager

        cheap = self.cheap_llm if self.config.main_model.is_set else None
        return MemoryManager.from_config(self.store, self.config, cheap)

    @functools.cached_property
    def background(self) -> BackgroundWorker:
        """The one worker for follow-up jobs (titles, summaries, memory extraction)."""
        from .agent.background import BackgroundWorker

        return BackgroundWorker()

    @functools.cached_property
    def token_calibrator(self) -> TokenCalibrator:
        """Corrects the main model's token estimates from the prompt_tokens it reports."""
        from .llm.tokens import TokenCalibrator

        return TokenCalibrator()

    def tool_context(
        self,
        topic_id: str | None,
        approve: ApprovalCallback | None = None,
        ask_user: AskUserCallback | None = None,
        on_notice: NoticeCallback | None = None,
    ) -> Any:
        from .toolkit.context import ToolContext

        agent = self.config.agent
        return ToolContext(
            workspace=self.config.workspace,
            home=self.config.home,
            allow_outside_workspace=agent.allow_outside_workspace,
            store=self.store,
            topic_id=topic_id,
            approval=agent.approval,
            approve=approve,
            exec_timeout=agent.exec_timeout,
            runtime=self,
            toolkit=self.toolkit,
            ask_user=ask_user,
            on_notice=on_notice,
        )

    def session(
        self,
        topic_id: str | None = None,
        *,
        approve: ApprovalCallback | None = None,
        ask_user: AskUserCallback | None = None,
        on_notice: NoticeCallback | None = None,
    ) -> Session:
        """A session on an existing topic, or on a new one when ``topic_id`` is None.

        ``approve``, ``ask_user`` and ``on_notice`` are the front end's ways to reach the user
        from a tool (see :class:`~tea_agent_mini.toolkit.context.ToolContext`)."""
        from .agent.session import Session, TurnSettings
        from .errors import ConfigError
        from .toolkit.executor import ToolExecutor

        llm = self.main_llm  # raises ConfigError first when no model is configured
        if topic_id is None:
            topic_id = self.store.topics.create(profile=self.config.profile).id
        elif self.store.topics.get(topic_id) is None:
            raise ConfigError(f"no topic with id {topic_id!r}")
        executor = ToolExecutor(
            self.toolkit,
            self.tool_context(topic_id, approve, ask_user, on_notice),
            max_output_bytes=self.config.agent.tool_output_limit,
        )
        settings = TurnSettings(
            max_iterations=self.config.agent.max_iterations,
            max_context_tokens=self.config.main_model.max_context_tokens,
        )
        return Session(
            topic_id=topic_id,
            llm=llm,
            executor=executor,
            store=self.store,
            build_context=self.build_context,
            settings=settings,
            calibrator=self.token_calibrator,
            after_turn=self.after_turn,
        )

    def build_context(
        self, session: Session, history: list[Message], target_tokens: int | None = None
    ) -> list[dict[str, Any]]:
        """The request for the session's next model call: L0 (system prompt, memories, skills,
        mode, unfinished work), L3, L2 and L1 within the budget (see ``context/builder.py``).
        ``target_tokens`` asks for a harder trim than the usual 80 % of the window."""
        from .agent.prompts import PromptParts, build_system_prompt
        from .context.builder import ContextInputs, build_request, load_levels
        from .context.resume import unfinished_work_section
        from .skills.catalog import skills_prompt_section
        from .skills.loader import load_skills
        from .toolkit.modes import mode_prompt_section

        topic_id = session.topic_id
        topic = self.store.topics.get(topic_id)
        query = next((m.text for m in reversed(history) if m.role == "user"), "")
        memories = self.memory.prompt_block(query) if query else ""
        skills = load_skills(self.config.home, self.config.workspace).skills.values()
        parts = PromptParts(
            workspace=self.config.workspace,
            tool_names=self.toolkit.names(),
            extra_sections=(
                memories,
                skills_prompt_section(skills),
                mode_prompt_section(self.store, topic_id, self.toolkit.names()),
                unfinished_work_section(self.store, topic_id),
            ),
            topic_prompt=topic.system_prompt if topic else None,
            approval=self.config.agent.approval,
        )
        settings = getattr(session, "settings", None)
        max_tokens = (
            settings.max_context_tokens if settings else self.config.main_model.max_context_tokens
        )
        pairs, summary = load_levels(self.store, topic_id)
        return build_request(
            ContextInputs(
                system_prompt=build_system_prompt(parts),
                history=history,
                pairs=pairs,
                summary=summary,
                max_tokens=max_tokens,
                target_tokens=target_tokens,
                tools_tokens=_tools_tokens(session) if max_tokens or target_tokens else 0,
                calibrator=self.token_calibrator,
            )
        )

    def after_turn(self, session: Session, content: UserContent, done: Done) -> None:
        """Queue a finished turn's follow-up jobs on the background worker."""
        from .context.upkeep import TurnUpkeep
        from .types import Message

        upkeep = TurnUpkeep(self.store, self.cheap_llm, self.memory)
        text = Message(role="user", content=content).text
        for name, job, time_cap in upkeep.jobs(session.topic_id, text, done):
            self.background.submit(name, job, time_cap=time_cap)

    def derive(self, config: Config) -> Runtime:
        """A runtime for another profile that shares this one's store and toolkit (one database
        connection and one tool registry per process) and brings its own model clients."""
        derived = Runtime(config)
        for name in BORROWABLE:
            derived.__dict__[name] = getattr(self, name)
        derived._borrowed = BORROWABLE
        return derived

    async def reconfigure(self, config: Config) -> None:
        """Switch to ``config`` (another profile): the parts built from the old settings — model
        clients and the memory manager — are closed and rebuilt on next use."""
        await self._close_models()
        memory = self.__dict__.pop("memory", None)
        if memory is not None:
            memory.close()
        self.config = config

    async def _close_models(self) -> None:
        for name in ("main_llm", "cheap_llm"):
            client = self.__dict__.pop(name, None)
            if client is not None:
                await client.aclose()

    async def aclose(self) -> None:
        """Finish the background jobs (for a while), then close network clients and the database
        (parts borrowed from another runtime are left to their owner)."""
        for name in self._borrowed:
            self.__dict__.pop(name, None)
        background = self.__dict__.pop("background", None)
        if background is not None:
            await background.aclose(timeout=SHUTDOWN_DRAIN_SECONDS)
        await self._close_models()
        mcp = self.__dict__.pop("mcp", None)
        if mcp is not None:
            await asyncio.to_thread(mcp.close)
        memory = self.__dict__.pop("memory", None)
        if memory is not None:
            memory.close()
        self.close_store()

    def close_store(self) -> None:
        store = self.__dict__.pop("store", None)
        if store is not None:
            store.close()


def _tools_tokens(session: Any) -> int:
    """Estimated tokens of the tool schemas the session sends (0 for a bare session-like)."""
    from .llm.tokens import estimate_tools_tokens

    executor = getattr(session, "executor", None)
    return estimate_tools_tokens(session.tools) if executor is not None else 0
