"""The team: teammates that stay, each with its own worker, topic and inbox.

    member = await runtime.team.spawn("alice", "reviewer", "Review the parser changes.")
    await runtime.team.message("lead", "alice", "Look at parser.py")
    # alice's answer arrives in the lead's inbox: store.inbox.read("lead")

A teammate is a subagent that stays. Its topic (source ``subagent``, its system prompt the
role and prompt) keeps its history across its turns and across restarts. Its worker
(``agent/teammate.py``), an asyncio task on the loop that spawned it, sleeps until a message
reaches its inbox (``send`` wakes it; a slow check of the store finds messages another process
wrote), runs one turn for the batch of unread messages, sends its final answer back to the
senders and sleeps again. Statuses live in the store: ``working`` during a turn, ``idle``
between turns, ``shutdown`` after it answered a ``shutdown_request``, ``offline`` when its
process ended; a new process marks the teammates it finds ``offline`` until they are spawned
again, which revives them in the same topic. One process runs a team: another process on the
same home that uses its team marks them offline too.

Plan approval: a teammate sends the lead its plan (kind ``plan_approval``); the lead answers
with the same kind and a text starting with ``approve`` or ``reject``, which the teammate's
next turn reads as its verdict.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import StoreError, TeaAgentError
from ..toolkit.selection import enable_tools
from .identities import NAME_RE
from .subagents import INBOX_PREFIX
from .teammate import LEAD, POLL_SECONDS, Worker, sleep_until

if TYPE_CHECKING:
    from ..store import Store
    from ..store.agents import AgentMessage, Teammate
    from .identities import Identity
    from .subagents import Subagents

__all__ = ["LEAD", "Team", "TeamError", "TeamMember", "TeammateExists", "UnknownTeammate"]

DEFAULT_IDENTITY = "worker"
SEND_KINDS = ("message", "plan_approval")
# What a teammate always gets, whatever its identity's list: its way to talk to the team.
TEAM_TOOLS = ("toolkit_send_message", "toolkit_read_inbox", "toolkit_list_teammates")
MAX_ROLE_CHARS = 200
MAX_PROMPT_CHARS = 8000
LIVE = ("working", "idle")

RULES = (
    "How the team works: each message to you starts a turn of yours, and your final answer is "
    "sent back to whoever wrote. toolkit_send_message writes to a teammate by name or to "
    '"lead" (the user\'s side); toolkit_list_teammates shows the team. Before a large or risky '
    'change, send your plan to "lead" with kind=plan_approval and end your turn: the verdict '
    "arrives as your next message."
)


class TeamError(TeaAgentError):
    """A teammate cannot be spawned or reached: a bad name, a missing role, an empty message."""


class TeammateExists(TeamError):
    """The name belongs to a teammate that is running."""


class UnknownTeammate(TeamError, LookupError):
    """No teammate has that name."""


@dataclass(frozen=True)
class TeamMember:
    """A teammate as the front ends show it."""

    name: str
    role: str
    status: str
    agent: str | None
    topic_id: str | None
    unread: int

    def as_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


class Team:
    """The teammates of one runtime (``Runtime.team``)."""

    def __init__(self, subagents: Subagents, store: Store, profile: str = "") -> None:
        self.subagents = subagents
        self.store = store
        self.profile = profile
        self._workers: dict[str, Worker] = {}
        self._waiters: dict[str, set[tuple[asyncio.AbstractEventLoop, asyncio.Event]]] = {}
        store.teammates.mark_offline()  # their workers died with the process that ran them

    # ---- members ----

    async def spawn(
        self,
        name: str,
        role: str = "",
        prompt: str = "",
        agent: str | None = None,
        *,
        lead_topic: str | None = None,
    ) -> TeamMember:
        """Start a teammate, or revive one that is offline or shut down (same topic, same
        history, its first role and prompt). Call it on the loop its worker is to run on.

        Raises:
            TeamError: an invalid name, no role for a new teammate, an unknown identity.
            TeammateExists: the name belongs to a teammate that is running.
        """
        name = check_name(name)
        mate = await asyncio.to_thread(self.store.teammates.get, name)
        if self.live_worker(name):
            raise TeammateExists(f"teammate {name!r} is already running; send it a message")
        if mate is not None and mate.status in LIVE and name not in self._workers:
            raise TeammateExists(f"teammate {name!r} is run by another process ({mate.status})")
        if mate is None:
            mate = await asyncio.to_thread(self._create, name, role, prompt, agent, lead_topic)
        else:
            mate = await asyncio.to_thread(self._revive, mate, lead_topic)
        assert mate.topic_id is not None
        if self.live_worker(name):  # revived by another caller while this one waited
            raise TeammateExists(f"teammate {name!r} is already running; send it a message")
        loop = asyncio.get_running_loop()
        worker = Worker(name, mate.topic_id, self._identity(mate), loop, asyncio.Event())
        worker.start(self)
        self._workers[name] = worker
        return await asyncio.to_thread(self.member, mate.name)

    def _create(
        self, name: str, role: str, prompt: str, agent: str | None, lead_topic: str | None
    ) -> Teammate:
        role = " ".join(role.split())
        if not role:
            raise TeamError(f"a new teammate needs a role: say what {name} does in the team")
        if len(role) > MAX_ROLE_CHARS or len(prompt) > MAX_PROMPT_CHARS:
            raise TeamError(
                f"the role is limited to {MAX_ROLE_CHARS} characters and the prompt to "
                f"{MAX_PROMPT_CHARS}"
            )
        identity = self._base_identity(agent)  # an unknown one is refused before anything exists
        if lead_topic is not None and not self.store.topics.exists(lead_topic):
            lead_topic = None
        agent_name = identity.name if agent else None
        topic = self._topic(name, role, prompt.strip(), agent_name, lead_topic)
        try:
            return self.store.teammates.add(name, role, prompt.strip(), agent or None, topic)
        except StoreError as exc:  # spawned at the same moment by another caller
            self.store.topics.delete(topic)
            raise TeammateExists(str(exc)) from exc

    def _revive(self, mate: Teammate, lead_topic: str | None) -> Teammate:
        self._base_identity(mate.agent)
        if mate.topic_id is None or not self.store.topics.exists(mate.topic_id):
            topic = self._topic(mate.name, mate.role, mate.prompt, mate.agent, lead_topic)
            self.store.teammates.set_topic(mate.name, topic)
        else:
            enable_tools(self.store, mate.topic_id, TEAM_TOOLS)
        self.store.teammates.set_status(mate.name, "idle")
        revived = self.store.teammates.get(mate.name)
        assert revived is not None
        return revived

    def _base_identity(self, agent: str | None) -> Identity:
        from .subagents import SubagentError

        try:
            return self.subagents.identity(agent or DEFAULT_IDENTITY)
        except SubagentError as exc:
            raise TeamError(str(exc)) from exc

    def _identity(self, mate: Teammate) -> Identity:
        """The teammate's identity: its tools and model, its name, the team's tools added."""
        base = self._base_identity(mate.agent)
        tools = None if base.tools is None else (*base.tools, *TEAM_TOOLS)
        return dataclasses.replace(base, name=mate.name, tools=tools)

    def members(self) -> list[TeamMember]:
        """Every teammate with its status and unread messages (blocking: store reads)."""
        return [self._as_member(mate) for mate in self.store.teammates.all()]

    def member(self, name: str) -> TeamMember:
        """One teammate (blocking). Raises UnknownTeammate."""
        mate = self.store.teammates.get(name)
        if mate is None:
            raise UnknownTeammate(f"no teammate named {name!r}")
        return self._as_member(mate)

    def _as_member(self, mate: Teammate) -> TeamMember:
        unread = self.store.inbox.unread_count(mate.name)
        return TeamMember(mate.name, mate.role, mate.status, mate.agent, mate.topic_id, unread)

    def live(self) -> list[str]:
        """The names of the teammates whose workers run in this process."""
        return sorted(name for name, worker in self._workers.items() if worker.alive())

    def live_worker(self, name: str) -> Worker | None:
        """The worker of ``name`` when it runs in this process."""
        worker = self._workers.get(name)
        return worker if worker is not None and worker.alive() else None

    def name_of(self, topic_id: str | None) -> str | None:
        """The teammate working in ``topic_id``, if one does (blocking: may read the store)."""
        if topic_id is None:
            return None
        for worker in self._workers.values():
            if worker.topic_id == topic_id:
                return worker.name
        found = [m.name for m in self.store.teammates.all() if m.topic_id == topic_id]
        return found[0] if found else None

    # ---- messages ----

    async def message(self, sender: str, to: str, text: str, kind: str = "message") -> AgentMessage:
        """A message from ``sender`` to a teammate (running or not: it is read when it runs)
        or to the lead. The lead answers a plan with kind ``plan_approval`` and a text that
        starts with ``approve`` or ``reject``.

        Raises:
            TeamError: an empty text, a kind other than message or plan_approval, a plan
                sent elsewhere than to the lead, a verdict that neither approves nor rejects.
            UnknownTeammate: ``to`` is no teammate's name.
        """
        text = text.strip()
        if not text:
            raise TeamError("the message is empty")
        if kind not in SEND_KINDS:
            raise TeamError(f"kind must be one of {', '.join(SEND_KINDS)}, not {kind!r}")
        named = to != LEAD and not to.startswith(INBOX_PREFIX)
        if named and await asyncio.to_thread(self.store.teammates.get, to) is None:
            raise UnknownTeammate(f"no teammate named {to!r}")
        data: dict[str, Any] = {}
        if kind == "plan_approval":
            if sender == LEAD:
                data["approved"] = verdict(text)
            elif to != LEAD:
                raise TeamError('a plan goes to "lead" for approval')
        return await self.send(sender, to, text, kind, data)

    async def send(
        self,
        sender: str,
        to: str,
        text: str,
        kind: str = "message",
        data: dict[str, Any] | None = None,
    ) -> AgentMessage:
        """Store a message of any kind and wake whoever waits for it. Raises StoreError for an
        unknown kind."""
        sent = await asyncio.to_thread(self.store.inbox.send, sender, to, text, kind, data)
        self.poke(to)
        return sent

    async def broadcast(self, sender: str, text: str) -> list[str]:
        """Send ``text`` to every teammate running here (but the sender); their names.
        Raises TeamError for an empty text."""
        if not text.strip():
            raise TeamError("the broadcast is empty")
        names = [name for name in self.live() if name != sender]
        for name in names:
            await self.send(sender, name, text.strip(), "broadcast")
        return names

    async def shutdown(self, name: str, sender: str = LEAD) -> bool:
        """Ask a teammate to stop after its current work. True when a running one was asked
        (it answers with a shutdown_response); False when it was not running here (it is
        marked shut down at once). Raises UnknownTeammate."""
        mate = await asyncio.to_thread(self.store.teammates.get, name)
        if mate is None:
            raise UnknownTeammate(f"no teammate named {name!r}")
        if self.live_worker(name):
            await self.send(
                sender, name, "Please stop after your current work.", "shutdown_request"
            )
            return True
        await asyncio.to_thread(self.store.teammates.set_status, name, "shutdown")
        return False

    def poke(self, address: str) -> None:
        """Wake the worker or waiters of ``address`` (from any thread)."""
        targets = list(self._waiters.get(address, ()))
        worker = self.live_worker(address)
        if worker is not None:
            targets.append((worker.loop, worker.wake))
        for loop, event in targets:
            with contextlib.suppress(RuntimeError):  # its loop closed meanwhile
                loop.call_soon_threadsafe(event.set)

    async def wait_for(self, addresses: Sequence[str], timeout: float) -> bool:
        """Wait up to ``timeout`` seconds until one of ``addresses`` has an unread message."""
        loop = asyncio.get_running_loop()
        entry = (loop, asyncio.Event())
        deadline = loop.time() + max(0.0, timeout)
        for address in addresses:
            self._waiters.setdefault(address, set()).add(entry)
        try:
            while True:
                entry[1].clear()
                if await asyncio.to_thread(self._unread, addresses):
                    return True
                left = deadline - loop.time()
                if left <= 0:
                    return False
                await sleep_until(entry[1], min(left, POLL_SECONDS))
        finally:
            for address in addresses:
                self._waiters.get(address, set()).discard(entry)

    def _unread(self, addresses: Sequence[str]) -> int:
        return sum(self.store.inbox.unread_count(address) for address in addresses)

    def _topic(
        self, name: str, role: str, prompt: str, agent: str | None, lead_topic: str | None
    ) -> str:
        topic = self.store.topics.create(
            title=f"teammate {name}: {role}"[:80],
            profile=self.profile,
            source="subagent",
            parent_id=lead_topic,
            agent=agent,
            system_prompt=system_prompt(name, role, prompt),
        ).id
        enable_tools(self.store, topic, TEAM_TOOLS)  # offered in every turn, not only when named
        return topic

    async def aclose(self) -> None:
        """Stop the workers (at shutdown); they are left offline."""
        here = asyncio.get_running_loop()
        tasks = []
        for worker in self._workers.values():
            if worker.task is None or not worker.alive():
                continue
            if worker.loop is here:
                worker.task.cancel("the agent is shutting down")
                tasks.append(worker.task)
            else:  # a worker on a loop that is not running now cannot be awaited here
                await asyncio.to_thread(self.store.teammates.set_status, worker.name, "offline")
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)


def check_name(name: str) -> str:
    """``name`` as a teammate's name. Raises TeamError: the same rule as identities' names."""
    name = name.strip()
    if name == LEAD or not NAME_RE.match(name):
        raise TeamError(
            f"teammate name {name!r} is not valid: 1-40 lowercase letters, digits, - or _, "
            f'starting with a letter, and not "{LEAD}"'
        )
    return name


def system_prompt(name: str, role: str, prompt: str) -> str:
    head = f"You are {name}, a teammate in a team of agents. Your role: {role}."
    return "\n\n".join(part for part in (head, prompt.strip(), RULES) if part)


def verdict(text: str) -> bool:
    """The lead's answer to a plan: True for approve, False for reject. Raises TeamError."""
    word = text.split(maxsplit=1)[0].strip(".,:;!").lower()
    if word in ("approve", "approved"):
        return True
    if word in ("reject", "rejected"):
        return False
    raise TeamError("an answer to a plan starts with approve or reject (then any comments)")
