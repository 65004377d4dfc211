"""The team in the terminal chat: ``/team`` lists the teammates, ``/inbox`` reads what they
sent the lead (the user's side) and the open topic."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from ..agent.team import Team
    from ..store import Store

LEAD = "lead"  # agent.team.LEAD, without loading the team for a chat that never uses it


def inboxes(topic_id: str) -> list[str]:
    """What the user reads in a chat on ``topic_id``: the lead's inbox and the topic's."""
    return [LEAD, f"topic:{topic_id}"]


def print_team(team: Team, out: TextIO) -> None:
    members = team.members()
    if not members:
        print("no teammates (the agent starts them with toolkit_spawn_teammate)", file=out)
        return
    for m in members:
        agent = f" [{m.agent}]" if m.agent else ""
        print(f"{m.name:<16} {m.status:<8} {m.unread:>3} unread  {m.role}{agent}", file=out)


def print_inbox(store: Store, addresses: list[str], out: TextIO) -> int:
    """Print and mark read the unread messages of ``addresses``; how many there were."""
    found = [message for address in addresses for message in store.inbox.read(address)]
    if not found:
        print("the inbox is empty", file=out)
    for message in sorted(found, key=lambda m: m.id):
        when = datetime.fromtimestamp(message.created_at).strftime("%H:%M")
        print(f"[{when}] {message.sender} ({message.kind}):\n{message.text}\n", file=out)
    return len(found)


def unread_line(store: Store, addresses: list[str]) -> str:
    """``[team: 2 unread messages, /inbox reads them]``, or nothing."""
    count = sum(store.inbox.unread_count(address) for address in addresses)
    if not count:
        return ""
    return f"[team: {count} unread message{'s' if count > 1 else ''}, /inbox reads them]"
