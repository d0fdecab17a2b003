"""The interactive session's slash commands: a small registry and what a command may ask of the terminal.

A line typed at the prompt whose first word is ``/name`` (letters, digits,
``-``) is a command when ``name`` is registered; anything else — ``/usr/bin``
included — goes to the model as typed. Commands run between turns only. The
commands themselves live in :mod:`catui.cli.tui.slash_session` (``/resume``,
``/clear``, ``/compact``, ``/model``, ``/cost``, ``/status``) and
:mod:`catui.cli.tui.slash_work` (``/agents``, ``/tasks``), :mod:`catui.cli.tui.slash_workflows` (``/workflows``)
and :mod:`catui.cli.tui.slash_rewind` (``/rewind``).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from catui.errors import CatuiError

if TYPE_CHECKING:
    from catui.app.services import AgentApp

COMMAND_LINE = re.compile(r"^/([A-Za-z][A-Za-z0-9-]*)(?:\s+(.*))?$", re.DOTALL)


class CommandHost(Protocol):
    """What the terminal offers a command."""

    app: AgentApp
    """The running :class:`~catui.app.build.AgentApp` (replaced by :meth:`switch_session`)."""
    context_tokens: int | None

    def say(self, text: str, style: str | None = None) -> None:
        """Print a permanent line (``style``: dim, red, bold, …)."""

    async def ask(self, prompt: str) -> str | None:
        """Read one answer typed at the prompt; None when the user gave up (Ctrl-C, end of input)."""

    async def switch_session(self, resume: str | None, reason: str) -> bool:
        """Close this session and start a new one (``resume``: an old session's id); False when it failed."""

    async def watch(self, render: Callable[[], list[str]], *, until: Callable[[], bool]) -> None:
        """Show ``render()``'s lines, redrawn as they change, until a key is pressed or ``until()`` holds;
        the last lines stay on the screen (without a terminal: printed once)."""


Handler = Callable[[CommandHost, str], Awaitable[None]]


@dataclass(frozen=True)
class SlashCommand:
    """One command: ``/name``, a one-line summary for /help, its argument synopsis, and what it does."""

    name: str
    summary: str
    run: Handler
    usage: str = ""


class SlashCommands:
    """The registered commands, looked up by name."""

    def __init__(self, commands: Iterable[SlashCommand] = ()) -> None:
        self._by_name: dict[str, SlashCommand] = {}
        for command in commands:
            self.register(command)

    def register(self, command: SlashCommand) -> None:
        if command.name in self._by_name:
            raise ValueError(f"slash command /{command.name} is registered twice")
        self._by_name[command.name] = command

    def find(self, line: str) -> tuple[SlashCommand, str] | None:
        """The command ``line`` invokes and its argument text, or None when it is not a command."""
        found = COMMAND_LINE.match(line.strip())
        if found is None:
            return None
        command = self._by_name.get(found.group(1).lower())
        return None if command is None else (command, (found.group(2) or "").strip())

    def names(self) -> list[str]:
        """The registered names, sorted."""
        return sorted(self._by_name)

    def help_lines(self) -> list[str]:
        """One line per command, in name order."""
        width = max((len(c.name) + len(c.usage) for c in self._by_name.values()), default=0) + 3
        return [f"  /{c.name}{' ' + c.usage if c.usage else ''}".ljust(width + 3) + c.summary
                for c in sorted(self._by_name.values(), key=lambda c: c.name)]

    async def dispatch(self, host: CommandHost, line: str) -> bool:
        """Run the command of ``line``; False when ``line`` is not a command (it goes to the model)."""
        found = self.find(line)
        if found is None:
            return False
        command, argument = found
        try:
            await command.run(host, argument)
        except CatuiError as exc:  # a bad argument or a refused action is one line, never the end of the session
            host.say(f"/{command.name}: {exc}", "red")
        return True
