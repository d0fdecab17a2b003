"""The interactive session's team commands: ``/team`` shows the team, ``/msg NAME TEXT`` writes to a teammate."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from catui.app.services import AgentApp
    from catui.subagents.teams.coordinator import TeamCoordinator

TEAM_HELP = "/team shows your agent team (members, colour, busy or idle, last message); /msg NAME TEXT writes to a teammate."
USER_SENDER = "user"
"""Who a message typed with /msg is from, as the teammate reads it (teammate_id="user")."""


TERMINAL_COLOURS = {"blue": "blue", "green": "green", "yellow": "yellow", "purple": "magenta", "orange": "yellow",
                    "pink": "magenta", "cyan": "cyan", "red": "red"}
"""A member's colour as one of the terminal's styles (catui.cli.tui.screen.STYLES)."""


def leading_team(app: AgentApp) -> TeamCoordinator | None:
    """The app's team coordinator when its main agent leads a team, else None."""
    return app.leading_team()


def team_view(app: AgentApp, style: Callable[[str, str], str]) -> str:
    """The team as ``/team`` prints it: one line per member."""
    teams = leading_team(app)
    team = teams.team if teams is not None else None
    if team is None:
        return "No agent team: ask for one (TeamCreate), with CATUI_AGENT_TEAMS=1."
    lines = [style(f"Team {team.name}", "bold") + style(f" · {team.files.config_path}", "dim")]
    for member in team.snapshot():
        state = "busy" if member["busy"] else ("idle" if member["active"] else "stopped")
        last = member["lastMessage"]
        tail = style(f" · last: {' '.join(str(last).split())[:60]}", "dim") if last else ""
        lines.append(f"  {style('●', TERMINAL_COLOURS.get(member['color'], 'bold'))} {member['name']} ({member['agentId']}) {state}{tail}")
    if len(lines) == 1:
        lines.append("  no teammates yet")
    return "\n".join(lines)


def send_to_teammate(app: AgentApp, command: str) -> str:
    """``/msg NAME TEXT``: put TEXT in the teammate's inbox (it becomes its next turn); what to print."""
    parts = command.split(maxsplit=2)
    if len(parts) < 3:
        return "Usage: /msg NAME TEXT  (NAME: a teammate shown by /team)"
    _, name, text = parts
    teams = leading_team(app)
    team = teams.team if teams is not None else None
    member = team.member(name) if team is not None else None
    if teams is None or member is None or not member.active or member.exiting:
        names = ", ".join(m.name for m in team.active_members()) if team is not None else ""
        return f"No active teammate called {name!r}" + (f" (teammates: {names})." if names else ".")
    teams.post(name, USER_SENDER, text, summary="from the user")
    return f"Sent to {name}."


def team_command(app: AgentApp, text: str, style: Callable[[str, str], str]) -> str | None:
    """The output of a team command, or None when ``text`` is not one."""
    if text == "/team":
        return team_view(app, style)
    if text == "/msg" or text.startswith("/msg "):
        return send_to_teammate(app, text)
    return None
