"""`ToolContext`: what a tool function gets besides its arguments.

It confines paths to the workspace and gives tools a small per-topic key/value state.
"""

from __future__ import annotations

import contextvars
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from tea_agent_mini.config import Config, ToolsConfig
from tea_agent_mini.errors import ConfigError, ToolError, WorkspaceError
from tea_agent_mini.shell.sandbox import Sandbox
from tea_agent_mini.types import (
    ApprovalCallback,
    AskUserCallback,
    ChatModel,
    EventSink,
    NoticeCallback,
)

if TYPE_CHECKING:
    from tea_agent_mini.agent.subagents import Subagents
    from tea_agent_mini.agent.team import Team
    from tea_agent_mini.context.prompt_versions import PromptVersions
    from tea_agent_mini.memory.manager import MemoryManager
    from tea_agent_mini.store import Store
    from tea_agent_mini.toolkit.registry import Toolkit


APPROVAL_POLICIES = ("auto", "ask", "never")
# Directories a listing shows but does not descend into (toolkit_file, toolkit_glob/grep, the
# workspace overview of the context block).
SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", "node_modules", "__pycache__", "venv", ".venv", ".tox", ".mypy_cache"}
    | {".pytest_cache", ".ruff_cache"}
)


class ToolRuntime(Protocol):
    """What tools reach of the runtime that built their context (``runtime.Runtime``), read
    when used: a profile switch replaces the config, ``toolkit_config`` changes it in place,
    the memory manager is built on first use and the scheduler when it starts."""

    @property
    def config(self) -> Config: ...

    @property
    def memory(self) -> MemoryManager: ...

    @property
    def scheduler(self) -> object:
        """The started ``scheduler.runner.SchedulerRunner``, or None. Typed ``object`` here:
        the scheduler lies above the toolkit, and ``TaskService`` checks what it gets."""
        ...

    @property
    def subagents(self) -> Subagents:
        """Runs subagents for the sessions of this runtime (``agent/subagents.py``)."""
        ...

    @property
    def team(self) -> Team:
        """The teammates of this runtime (``agent/team.py``)."""
        ...

    @property
    def prompts(self) -> PromptVersions:
        """The guidelines' versions (``context/prompt_versions.py``)."""
        ...

    def llm_for(self, model: str) -> ChatModel:
        """The chat client of ``main``, ``cheap`` or a profile's main model."""
        ...


@dataclass
class TurnLedger:
    """What the subagents of one turn have used, against the turn's budget for them."""

    started: float = field(default_factory=time.monotonic)
    tokens: int = 0
    children: int = 0


# The tool call a tool is running for (set by the executor for each call; contextvars follow
# the call into its task or thread). Subagents label their relayed events with it.
CURRENT_CALL: contextvars.ContextVar[str] = contextvars.ContextVar("tool_call", default="")


@dataclass
class ToolContext:
    """Per-session settings for tools.

    ``approval``: ``auto`` runs mutating tools, ``ask`` asks ``approve(name, arguments_json)``
    first, ``never`` refuses them (read-only mode for files and commands; tools that only keep
    the agent's own records in the store — todo, plan, memory — still run).
    """

    workspace: Path
    home: Path
    allow_outside_workspace: bool = False
    allow_private_fetch: bool = False  # toolkit_web_fetch may reach loopback/private addresses
    store: Store | None = None
    topic_id: str | None = None
    approval: str = "auto"
    approve: ApprovalCallback | None = None
    exec_timeout: float = 30.0
    sandbox: Sandbox = field(default_factory=Sandbox)  # how toolkit_exec confines commands
    # the config's tools: section (endpoints of toolkit_search and toolkit_weather_my)
    tools_config: ToolsConfig = field(default_factory=ToolsConfig)
    # The Runtime that built this context: the config, the memory manager and the scheduler
    # for the tools that need them. None in bare tests.
    runtime: ToolRuntime | None = None
    toolkit: Toolkit | None = field(default=None, repr=False)  # the live one (self-made tools join)
    # The McpManager, when MCP servers are configured. Typed ``object``: mcp/ lies above the
    # toolkit; the MCP tool (tools/mcp.py) checks what it gets.
    mcp: object = field(default=None, repr=False)
    # Asks the user a question: (question, choices or None, timeout seconds, default) -> answer,
    # or None when nobody answered in time. Set by the front end (CLI prompt, web UI dialog).
    ask_user: AskUserCallback | None = None
    # Shows a stored notice at once (toolkit_notify without a desktop), e.g. as a web UI toast.
    on_notice: NoticeCallback | None = None
    # 0 in a user's session, 1 in a subagent's (which may not start subagents of its own)
    depth: int = 0
    # What this turn's subagents have used; the executor starts a new ledger each turn.
    turn: TurnLedger = field(default_factory=TurnLedger, repr=False, compare=False)
    # Where a running tool sends its subagents' events; set by the executor while calls run.
    emit: EventSink | None = field(default=None, repr=False, compare=False)
    # Set by the executor when the turn running these tools is cancelled; long tools poll it.
    cancel_event: threading.Event = field(
        default_factory=threading.Event, init=False, repr=False, compare=False
    )
    _memory_state: dict[tuple[str, str], Any] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        self.workspace = Path(self.workspace)
        self.home = Path(self.home)
        if self.approval not in APPROVAL_POLICIES:
            raise ConfigError(
                f"approval must be one of {', '.join(APPROVAL_POLICIES)}, not {self.approval!r}"
            )

    @property
    def memory(self) -> MemoryManager | None:
        """The runtime's MemoryManager (shared embedder and vector index), if there is one."""
        return self.runtime.memory if self.runtime is not None else None

    def resolve(self, path: str | os.PathLike[str], *, must_exist: bool = False) -> Path:
        """An absolute, symlink-free path for ``path`` (relative ones start at the workspace).

        Raises WorkspaceError when it lies outside the workspace (unless allowed) and ToolError
        when ``must_exist`` and nothing is there.
        """
        text = os.fspath(path)
        if not text.strip():
            raise ToolError("empty path")
        candidate = Path(os.path.expanduser(text))
        workspace = Path(os.path.realpath(self.workspace))
        if not candidate.is_absolute():
            candidate = workspace / candidate
        resolved = Path(os.path.realpath(candidate))
        if not self.allow_outside_workspace and not is_within(resolved, workspace):
            raise WorkspaceError(
                f"path '{text}' is outside the workspace {workspace}; "
                "use a path inside the workspace (relative paths start there)"
            )
        if must_exist and not resolved.exists():
            raise ToolError(f"path '{text}' does not exist (resolved to {resolved})")
        return resolved

    def relative(self, path: Path) -> str:
        """``path`` as shown to the model: relative to the workspace when inside it."""
        workspace = Path(os.path.realpath(self.workspace))
        if is_within(path, workspace):
            rel = path.relative_to(workspace).as_posix()
            return rel or "."
        return str(path)

    @property
    def _scope(self) -> str:
        return f"topic:{self.topic_id or 'default'}"

    def state_get(self, key: str, default: Any = None) -> Any:
        """Per-topic state: from the store when there is one, else from this context's memory."""
        if self.store is None:
            return self._memory_state.get((self._scope, key), default)
        return self.store.state.get(self._scope, key, default)

    def state_set(self, key: str, value: Any) -> None:
        if self.store is None:
            self._memory_state[(self._scope, key)] = value
        else:
            self.store.state.put(self._scope, key, value)


def is_within(path: Path, directory: Path) -> bool:
    """True when ``path`` is ``directory`` or below it (both already resolved)."""
    try:
        return os.path.commonpath([path, directory]) == str(directory)
    except ValueError:  # different drives on Windows
        return False
