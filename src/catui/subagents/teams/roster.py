"""The team in memory: its members (busy or idle, colour, last message) and what wakes the lead."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from catui.subagents.run import SubagentRun
from catui.subagents.teams.files import TeamFiles
from catui.subagents.teams.protocol import LEAD_NAME


@dataclass
class Member:
    """One teammate: who it is and where its run stands."""

    name: str
    agent_id: str
    color: str
    agent_type: str
    model: str
    run: SubagentRun
    plan_mode_required: bool = False
    index: int = 0
    """Its place in spawn order (its colour; the order members are listed in)."""
    busy: bool = False
    active: bool = True
    """False once it has stopped (shutdown approved, forced, or a crash); the roster keeps it for display."""
    exiting: bool = False
    """Its shutdown was approved: it stops at once and sends no idle notification."""
    stop_reason: str | None = None
    crash: str | None = None
    """Why its runner failed between turns (an unreadable inbox, say), when it did."""
    last_message: str | None = None
    """The last thing it said to anyone (for the team view)."""
    peer_summaries: list[str] = field(default_factory=list)
    """What it sent peers during the current turn (the idle notification's summary)."""
    wake: asyncio.Event = field(default_factory=asyncio.Event, repr=False)
    """Set when a message for it arrives; its runner waits on it while idle."""


@dataclass
class Team:
    """The team this session leads (a leader manages one team at a time)."""

    name: str
    files: TeamFiles
    lead_agent_id: str
    members: dict[str, Member] = field(default_factory=dict)
    spawned: int = 0
    """How many teammates were ever spawned (the next colour)."""
    reserved: dict[str, int] = field(default_factory=dict)
    """Names taken by spawns still being prepared, with their spawn index (concurrent Agent calls)."""
    lead_mail: asyncio.Event = field(default_factory=asyncio.Event, repr=False)
    changed: asyncio.Event = field(default_factory=asyncio.Event, repr=False)
    """Set whenever a teammate's state changes (a turn ends, it stops), for whoever waits on the team."""
    reminded: bool = False
    """Print mode: the lead was told once to shut its team down."""

    def active_members(self) -> list[Member]:
        """Members still on the team: running and not leaving (an approved shutdown counts as gone)."""
        return sorted((m for m in self.members.values() if m.active and not m.exiting), key=lambda m: m.index)

    def running_members(self) -> list[Member]:
        """Members whose runner has not ended yet (leaving ones included)."""
        return [m for m in self.members.values() if m.active]

    def busy_members(self) -> list[Member]:
        return [m for m in self.members.values() if m.active and m.busy]

    def member(self, name: str) -> Member | None:
        return self.members.get(name)

    def names(self) -> list[str]:
        return [LEAD_NAME, *self.members, *self.reserved]

    def notify_change(self) -> None:
        self.changed.set()

    def snapshot(self) -> list[dict[str, Any]]:
        """Members as the team view and the SDK show them."""
        return [{"name": m.name, "agentId": m.agent_id, "color": m.color, "busy": m.busy,
                 "active": m.active and not m.exiting,
                 "lastMessage": m.last_message} for m in sorted(self.members.values(), key=lambda m: m.index)]
