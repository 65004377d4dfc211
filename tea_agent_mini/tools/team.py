"""The team as tools: toolkit_spawn_teammate, toolkit_list_teammates, toolkit_send_message,
toolkit_read_inbox, toolkit_broadcast.

The work is done by the runtime's ``agent.team.Team``. Who is speaking follows from the
conversation: a teammate's own topic speaks and reads as the teammate; a user's session as
``lead`` (reading ``lead`` and its own ``topic:<id>``); another subagent as its topic. Spawning
and broadcasting are the lead's (``identities.PARENT_ONLY``).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Annotated, Literal

from tea_agent_mini.errors import TeaAgentError, ToolError
from tea_agent_mini.toolkit.context import ToolContext
from tea_agent_mini.toolkit.modelcall import require_runtime
from tea_agent_mini.toolkit.registry import tool

if TYPE_CHECKING:
    from tea_agent_mini.agent.team import Team
    from tea_agent_mini.store.agents import AgentMessage

LEAD = "lead"  # agent.team.LEAD, without loading the team when the toolkit loads its tools
TOPIC = "topic:"
MAX_WAIT = 300


def team_of(ctx: ToolContext) -> Team:
    return require_runtime(ctx).team


def addresses(ctx: ToolContext, team: Team) -> tuple[str, list[str]]:
    """(who this conversation sends as, the inboxes it reads); blocking: reads the store."""
    name = team.name_of(ctx.topic_id)
    if name is not None:
        return name, [name]
    own = [TOPIC + ctx.topic_id] if ctx.topic_id else []
    if ctx.depth >= 1 and own:
        return own[0], own
    return LEAD, [LEAD, *own]


@tool(
    "toolkit_spawn_teammate",
    keywords="team teammate spawn colleague",
)
async def toolkit_spawn_teammate(
    ctx: ToolContext, name: str, role: str, prompt: str, agent: str = ""
) -> str:
    """Start a teammate: an agent that stays, with its own conversation and inbox. Each
    message you send it (toolkit_send_message) starts a turn of its own, and its answer
    arrives in your inbox (toolkit_read_inbox). Spawning a teammate that is offline (after a
    restart) or shut down revives it with its history.

    Args:
        name: how messages reach it: lowercase letters, digits, - or _ (e.g. reviewer-1)
        role: what it does in the team, e.g. 'reviews every change to the parser'
        prompt: its standing instructions
        agent: whose tools and model it uses (an identity: explorer, researcher, reviewer,
            coder, tester ...; default worker)
    """
    if ctx.depth >= 1:
        raise ToolError("only the lead spawns teammates")
    try:
        member = await team_of(ctx).spawn(
            name, role, prompt, agent or None, lead_topic=ctx.topic_id
        )
    except TeaAgentError as exc:
        raise ToolError(str(exc)) from exc
    return (
        f"Teammate {member.name} ({member.role}) is {member.status}, working in topic "
        f"{(member.topic_id or '')[:8]}. Send it work with toolkit_send_message to={member.name}."
    )


@tool("toolkit_list_teammates", concurrency_safe=True, keywords="team teammates")
async def toolkit_list_teammates(ctx: ToolContext) -> str:
    """The team: each teammate's name, role, status (working, idle, offline, shutdown) and
    unread messages."""
    members = await asyncio.to_thread(team_of(ctx).members)
    if not members:
        return "There are no teammates (the lead starts them with toolkit_spawn_teammate)."
    return "\n".join(
        f"- {m.name} [{m.status}] {m.role} ({m.unread} unread)"
        + (f", agent {m.agent}" if m.agent else "")
        for m in members
    )


@tool("toolkit_send_message", keywords="team teammate message lead plan approval")
async def toolkit_send_message(
    ctx: ToolContext,
    to: str,
    text: str,
    kind: Literal["message", "plan_approval"] = "message",
) -> str:
    """Send a message to a teammate (by name) or to "lead". A teammate answers in a turn of
    its own; its answer arrives in your inbox. kind=plan_approval: a teammate sends the lead
    its plan before acting; the lead answers with the same kind and a text starting with
    approve or reject.

    Args:
        to: a teammate's name, or lead
        text: the message, complete in itself (the recipient does not see this conversation)
        kind: message, or plan_approval (a plan for the lead, or the lead's verdict on one)
    """
    team = team_of(ctx)
    sender, _ = await asyncio.to_thread(addresses, ctx, team)
    try:
        await team.message(sender, to.strip(), text, kind)
    except TeaAgentError as exc:
        raise ToolError(str(exc)) from exc
    return f"Sent to {to.strip()}." + (
        " Its answer will arrive in your inbox (toolkit_read_inbox)." if to.strip() != LEAD else ""
    )


@tool("toolkit_read_inbox", keywords="team inbox teammate answers")
async def toolkit_read_inbox(
    ctx: ToolContext, wait: Annotated[int, {"minimum": 0, "maximum": MAX_WAIT}] = 0
) -> str:
    """Read your unread messages: teammates' answers, plans waiting for approval, messages to
    you. Messages read here are not answered automatically: answer with toolkit_send_message.

    Args:
        wait: seconds to wait for a message when none is there yet (0-300, default 0)
    """
    team = team_of(ctx)
    _, inboxes = await asyncio.to_thread(addresses, ctx, team)
    if wait > 0:
        await team.wait_for(inboxes, float(min(wait, MAX_WAIT)))
    found: list[AgentMessage] = []
    for inbox in inboxes:
        found += await asyncio.to_thread(team.store.inbox.read, inbox)
    if not found:
        return "Your inbox is empty."
    return "\n\n".join(render(message) for message in sorted(found, key=lambda m: m.id))


def render(message: AgentMessage) -> str:
    """A message as the model reads it."""
    head = f"From {message.sender} ({message.kind})"
    if message.kind == "plan_approval" and "approved" not in message.data:
        head += (
            f" - answer with toolkit_send_message to={message.sender} kind=plan_approval, "
            "text starting with approve or reject"
        )
    elif message.data.get("ok") is False:
        head += " - it failed"
    return f"{head}:\n{message.text}"


@tool("toolkit_broadcast", keywords="team broadcast teammates announce")
async def toolkit_broadcast(ctx: ToolContext, text: str) -> str:
    """Send one message to every running teammate; each answers in your inbox.

    Args:
        text: the message, complete in itself
    """
    if ctx.depth >= 1:
        raise ToolError("only the lead broadcasts to the team")
    try:
        names = await team_of(ctx).broadcast(LEAD, text)
    except TeaAgentError as exc:
        raise ToolError(str(exc)) from exc
    if not names:
        raise ToolError("no teammate is running: spawn one with toolkit_spawn_teammate")
    return f"Sent to {', '.join(names)}. Their answers will arrive in your inbox."
