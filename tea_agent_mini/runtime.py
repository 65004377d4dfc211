"""The composition root: builds the store, toolkit and model clients once, hands out sessions.

The CLI, the server and the tests all go through :class:`Runtime`; nothing else constructs these
parts. Each part is built on first use so a command pays only for what it touches.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .config import Config
from .home_sync import catch_up
from .types import ApprovalCallback, AskUserCallback, NoticeCallback

if TYPE_CHECKING:
    from .agent.background import BackgroundWorker
    from .agent.session import Session, UserContent
    from .agent.subagents import ChildRequest, Subagents
    from .agent.team import Team
    from .context.prompt_versions import PromptVersions
    from .context.prompts import Profile
    from .context.turn import TurnContext, TurnPlanner
    from .llm.client import OpenAIChatClient
    from .llm.tokens import TokenCalibrator
    from .mcp.manager import McpManager
    from .memory.manager import MemoryManager
    from .scheduler.runner import SchedulerRunner
    from .shell.sandbox import Sandbox
    from .skills.cache import SkillsCache
    from .store import Store
    from .toolkit.context import ToolContext
    from .toolkit.registry import Toolkit
    from .toolkit.selection import ToolMenu
    from .types import ChatModel, Done, Message

log = logging.getLogger(__name__)

# the toolkit holds the MCP servers' tools; one team per process, whichever profile asks
BORROWABLE = ("store", "toolkit", "mcp", "team")

SHUTDOWN_DRAIN_SECONDS = 30.0


class Runtime:
    def __init__(self, config: Config) -> None:
        self.config = config
        # the scheduled-task runner, when this process runs one (set by start_scheduler)
        self.scheduler: SchedulerRunner | None = None
        self._borrowed: tuple[str, ...] = ()  # parts shared from the runtime we derive from
        self._profile_llms: dict[str, OpenAIChatClient] = {}  # subagents on another profile
        # how a changed profile file is read again (the server's pool keeps its fixed settings)
        self.config_loader: Callable[[str], Config] | None = None
        self._retired: list[Any] = []  # clients and managers of an older config, to close

    @functools.cached_property
    def store(self) -> Store:
        from .store import Store

        return Store.open(self.config.store_target)

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

    def llm_for(self, model: str) -> ChatModel:
        """The client of ``model``: ``main``, ``cheap`` or the main model of a profile (for a
        subagent identity's ``model:``). Raises ConfigError when it cannot be used."""
        if model == "main":
            return self.main_llm
        if model == "cheap":
            return self.cheap_llm
        client = self._profile_llms.get(model)
        if client is None:
            from .config import load_config
            from .llm.client import OpenAIChatClient

            profile = load_config(model, home=self.config.home)
            client = self._profile_llms[model] = OpenAIChatClient(profile.require_model())
        return client

    @functools.cached_property
    def subagents(self) -> Subagents:
        """Runs subagents for this runtime's sessions (``agent/subagents.py``)."""
        from .agent.identities import load_identities
        from .agent.subagents import Subagents

        config = self.config
        return Subagents(
            self,
            lambda: load_identities(self.config.home, self.config.workspace),
            config.agent.subagents,
            self.store,
        )

    @functools.cached_property
    def team(self) -> Team:
        """The teammates of this runtime (``agent/team.py``); the first use marks the ones an
        earlier process ran offline."""
        from .agent.team import Team

        return Team(self.subagents, self.store, self.config.profile)

    def child_session(self, request: ChildRequest) -> Session:
        """A subagent's session (``agent/children.py``)."""
        from .agent.children import build_child_session

        return build_child_session(self, request)

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
    def skills(self) -> SkillsCache:
        """The skills of home and workspace, parsed again only when a SKILL.md changes."""
        from .skills.cache import SkillsCache

        return SkillsCache(self.config.home, self.config.workspace)

    @functools.cached_property
    def background(self) -> BackgroundWorker:
        """The one worker for follow-up jobs (titles, summaries, memory extraction, task
        evaluation, lessons), kept in the store until done (``agent/jobs.py``)."""
        from .agent.background import BackgroundWorker
        from .agent.jobs import follow_up_kinds

        return BackgroundWorker(jobs=self.store.jobs, kinds=follow_up_kinds(self))

    async def resume_jobs(self) -> int:
        """At start: queue the follow-up jobs that processes which are gone left unfinished."""
        return await self.background.resume()

    @functools.cached_property
    def token_calibrator(self) -> TokenCalibrator:
        """Corrects the main model's token estimates from the prompt_tokens it reports."""
        from .llm.tokens import TokenCalibrator

        return TokenCalibrator()

    @property
    def sandbox(self) -> Sandbox:
        """How shell commands are confined (read at call time: a profile switch changes it)."""
        from .shell.sandbox import sandbox_for

        return sandbox_for(self.config)

    def tool_context(
        self,
        topic_id: str | None,
        approve: ApprovalCallback | None = None,
        ask_user: AskUserCallback | None = None,
        on_notice: NoticeCallback | None = None,
    ) -> ToolContext:
        """What the tools of a session on ``topic_id`` get besides their arguments."""
        from .toolkit.context import ToolContext

        agent = self.config.agent
        return ToolContext(
            workspace=self.config.workspace,
            home=self.config.home,
            allow_outside_workspace=agent.allow_outside_workspace,
            allow_private_fetch=agent.allow_private_fetch,
            store=self.store,
            topic_id=topic_id,
            approval=agent.approval,
            approve=approve,
            exec_timeout=agent.exec_timeout,
            sandbox=self.sandbox,
            tools_config=self.config.tools,
            runtime=self,
            toolkit=self.toolkit,
            mcp=self.mcp,
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
        source: str = "cli",
        follow_up: bool = True,
    ) -> Session:
        """A session on an existing topic, or on a new one when ``topic_id`` is None.

        ``approve``, ``ask_user`` and ``on_notice`` are the front end's ways to reach the user
        from a tool (see :class:`~tea_agent_mini.toolkit.context.ToolContext`). ``source`` says
        which front end made a new topic (``store.topics.SOURCES``; the terminal and the Python
        facade leave the default). ``follow_up=False`` queues no background jobs after its
        turns (titles, summaries, memories): for a session that is about to be discarded."""
        from .agent.session import Session, TurnSettings
        from .errors import ConfigError
        from .toolkit.executor import ToolExecutor

        catch_up(self)
        llm = self.main_llm  # raises ConfigError first when no model is configured
        if topic_id is None:
            topic_id = self.store.topics.create(profile=self.config.profile, source=source).id
        elif not self.store.topics.exists(topic_id):
            raise ConfigError(f"no topic with id {topic_id!r}")
        executor = ToolExecutor(
            self.toolkit,
            self.tool_context(topic_id, approve, ask_user, on_notice),
            max_output_bytes=self.config.agent.tool_output_limit,
        )
        settings = TurnSettings(
            max_iterations=self.config.agent.max_iterations,
            max_context_tokens=self.config.main_model.max_context_tokens,
            max_output_tokens=self.config.main_model.max_tokens,
        )
        return Session(
            topic_id=topic_id,
            llm=llm,
            executor=executor,
            store=self.store,
            build_context=self.build_context,
            settings=settings,
            calibrator=self.token_calibrator,
            after_turn=self.after_turn if follow_up else None,
            offer_tools=self.offered_tools,
        )

    @functools.cached_property
    def tool_menu(self) -> ToolMenu:
        """Chooses and renders the tools of each request (cached until the toolkit changes)."""
        from .toolkit.selection import ToolMenu

        return ToolMenu(self.toolkit, "compact" if self.prompt_profile == "compact" else "full")

    @property
    def prompt_profile(self) -> Profile:
        from .context.prompts import profile_for

        return profile_for(self.config.agent.prompt, self.config.main_model.max_context_tokens)

    @property
    def prompts(self) -> PromptVersions:
        """The versions of the guidelines in the system prompt (``context/prompt_versions.py``),
        for the prompt profile in use."""
        from .context.prompt_versions import PromptVersions

        return PromptVersions(self.store, self.prompt_profile, lambda: config_secrets(self.config))

    @functools.cached_property
    def planner(self) -> TurnPlanner:
        """Builds each turn's shared request parts, then each request (``context/turn.py``)."""
        from .context.turn import PromptSettings, TurnPlanner

        settings = PromptSettings(
            workspace=self.config.workspace,
            approval=self.config.agent.approval,
            profile=self.prompt_profile,
            max_tokens=self.config.main_model.max_context_tokens,
        )
        return TurnPlanner(
            self.store, self.tool_menu, settings, self.turn_sections, self.token_calibrator
        )

    def turn_context(self, session: Session, history: list[Message]) -> TurnContext:
        """The session's current turn context, computed on the turn's first request."""
        turn = getattr(session, "turn_context", None)
        if turn is None:
            turn = self.planner.start(session.topic_id, history)
            session.turn_context = turn
        return turn

    def offered_tools(self, session: Session, history: list[Message]) -> list[dict[str, Any]]:
        """The tool schemas of the session's next model call (see ``toolkit/selection.py``)."""
        turn = self.turn_context(session, history)
        return self.tool_menu.schemas(self.planner.tool_names(turn, session.topic_id))

    def build_context(
        self, session: Session, history: list[Message], target_tokens: int | None = None
    ) -> list[dict[str, Any]]:
        """The messages of the session's next model call: the stable system prompt, then the
        history within the budget with the turn's context block before the current message.
        ``target_tokens`` asks for a harder trim than the usual 80 % of the window.

        Raises:
            WindowTooSmall: not even the smallest request fits the configured window.
        """
        turn = self.turn_context(session, history)
        names = self.planner.tool_names(turn, session.topic_id)
        return self.planner.request(turn, history, self.tool_menu.tokens(names), target_tokens)

    def turn_sections(self, topic_id: str, query: str, profile: Profile) -> list[str]:
        """The volatile context of a turn (``context/sections.py``)."""
        from .context.sections import SectionSources, turn_sections

        skills = self.skills.catalog().skills.values()
        memory = self.memory if query else None  # built on first use: not for an empty query
        sources = SectionSources(
            self.store, memory, skills, self.toolkit.names(), self.config.workspace
        )
        return turn_sections(sources, topic_id, query, profile)

    def after_turn(self, session: Session, content: UserContent, done: Done) -> None:
        """Queue a finished turn's follow-up jobs on the background worker."""
        from .agent.jobs import evolution_job, turn_follow_ups
        from .evaluation.evolution import EVOLUTION_TIMEOUT
        from .types import Message

        text = Message(role="user", content=content).text
        turn = session.turn_message_id
        self.background.enqueue(turn_follow_ups(self, session.topic_id, text, done, turn))
        # the evolution pass times itself (hourly at most): kept in memory, not a durable job
        self.background.submit("evolution", evolution_job(self), time_cap=EVOLUTION_TIMEOUT)

    def derive(self, config: Config) -> Runtime:
        """A runtime for another profile that shares this one's store, toolkit and MCP servers
        (one database connection, one tool registry and one set of server processes per
        process) and brings its own model clients."""
        derived = Runtime(config)
        for name in BORROWABLE:
            derived.__dict__[name] = getattr(self, name)
        derived._borrowed = BORROWABLE
        return derived

    async def reconfigure(self, config: Config) -> None:
        """Switch to ``config`` (another profile): the parts built from the old settings — model
        clients and the memory manager — are closed and rebuilt on next use."""
        self.adopt(config)
        await self._close_models()

    def adopt(self, config: Config) -> None:
        """Use ``config`` from now on without waiting: the parts built from the old settings
        are rebuilt on next use, the old ones closed later (a turn running may still use
        them): at the next :meth:`reconfigure` or :meth:`aclose`."""
        self._retired += [self.__dict__.pop(name, None) for name in ("main_llm", "cheap_llm")]
        self._retired += self._profile_llms.values()
        self._profile_llms = {}
        self._retired.append(self.__dict__.pop("memory", None))
        for name in ("planner", "tool_menu", "skills"):  # built from the old profile's settings
            self.__dict__.pop(name, None)
        self.config = config

    def built(self, part: str) -> bool:
        """Whether the part (``toolkit``, ``memory`` ...) has been built yet."""
        return part in self.__dict__

    def profile_file(self, profile: str | None = None) -> str:
        """The file of ``profile`` (default: this runtime's) relative to the home."""
        from .config import profile_path

        home = self.config.home
        return profile_path(profile or self.config.profile, home).relative_to(home).as_posix()

    def reload_config(self) -> Config:
        """This runtime's profile read again; the workspace and the store stay as they are."""
        from .config import load_config

        if self.config_loader is not None:
            return self.config_loader(self.config.profile)
        config = load_config(self.config.profile, home=self.config.home)
        config.agent = replace(config.agent, workspace=str(self.config.workspace))
        config.store = self.config.store
        return config

    async def _close_models(self) -> None:
        """Close the parts retired by :meth:`adopt` (and the model clients in use, on the way
        out: :meth:`aclose` pops them first)."""
        parts, self._retired = self._retired, []
        for part in parts:
            if part is None:
                continue
            if hasattr(part, "aclose"):
                await part.aclose()
            else:
                part.close()

    async def aclose(self) -> None:
        """Finish the background jobs (for a while), then close network clients and the database
        (parts borrowed from another runtime are left to their owner)."""
        for name in self._borrowed:
            self.__dict__.pop(name, None)
        team = self.__dict__.pop("team", None)
        if team is not None:
            await team.aclose()
        subagents = self.__dict__.pop("subagents", None)
        if subagents is not None:
            await subagents.aclose()
        background = self.__dict__.pop("background", None)
        if background is not None:
            await background.aclose(timeout=SHUTDOWN_DRAIN_SECONDS)
        self._retired += [self.__dict__.pop(name, None) for name in ("main_llm", "cheap_llm")]
        self._retired += self._profile_llms.values()
        self._profile_llms = {}
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


def config_secrets(config: Config) -> list[str]:
    """Every secret the configuration holds, for the log guard (``redact.guard_logs``): API
    keys, header values, credentials in URLs (the tools' endpoints and the store's too) and
    what the MCP servers' entries carry (``${VAR}`` values, headers, secret-looking env)."""
    from .mcp.servers import load_servers
    from .redact import header_secrets, url_secrets, usable_secrets

    found: list[str] = [config.server.api_key, config.embedding.api_key]
    found += url_secrets(config.embedding.api_url) + url_secrets(config.store.url)
    for url in vars(config.tools).values():  # the tools' endpoints may carry a key
        found += url_secrets(url)
    for model in (config.main_model, config.cheap_model):
        found += [model.api_key, *url_secrets(model.api_url)]
        found += header_secrets(model.extra_headers)
    for server in load_servers(config.mcp_servers, config.home).servers.values():
        found += server.secrets
    return usable_secrets(found)
