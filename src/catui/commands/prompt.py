"""A typed ``/name args`` prompt that names a custom command (or a skill): what the model receives.

Claude Code sends a command as a ``<command-message>`` / ``<command-name>`` / ``<command-args>`` block
followed by the expanded body (observed with 2.1.92; docs/commands.md), with the files its ``@``
references name attached before them; the command's ``allowed-tools`` are allowed without asking until
that prompt's run ends. :func:`command_prompt` builds that for every front end: print mode, stream-json
input (the SDKs), catui's SDK and the terminal.
"""

from __future__ import annotations

import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from catui.commands.expand import CommandExpansionError, expand_command
from catui.commands.listing import BUILTIN_PROMPT_COMMANDS
from catui.messages import Block
from catui.permissions.context import PermissionRule
from catui.skills.model import SkillDefinition
from catui.skills.permission_rules import skill_permission_rules

if TYPE_CHECKING:
    from catui.app.services import AgentApp
    from catui.session.events import Event
    from catui.session.session import Session

COMMAND_PROMPT = re.compile(r"^/([A-Za-z0-9_][\w.:-]*)(?:[ \t\n](.*))?$", re.DOTALL)


@dataclass
class CommandPrompt:
    """A prompt that invoked a command: its blocks for the model, or why it could not be run."""

    name: str
    args: str
    skill: SkillDefinition | None = None
    blocks: list[Block] = field(default_factory=list)
    rules: tuple[PermissionRule, ...] = ()
    error: str | None = None
    """Set when the command is unknown or its expansion failed: the run ends with this text, no model call."""


def parse_command_line(prompt: str) -> tuple[str, str] | None:
    """``(name, args)`` of a ``/name args`` prompt; None for anything else (``/usr/bin/env`` is not a command)."""
    found = COMMAND_PROMPT.match(prompt.strip())
    if found is None:
        return None
    return found.group(1), found.group(2) or ""


def command_header(name: str, args: str) -> str:
    """The block that names the command the user ran, as Claude Code writes it."""
    return (f"<command-message>{name}</command-message>\n<command-name>/{name}</command-name>\n"
            f"<command-args>{args}</command-args>\n")


def command_text(prompt: Any) -> tuple[str, list[Block]] | None:
    """The text that may name a command, and the blocks before it; None when there is no such text.

    A prompt is a string, or (stream-json input) a list of content blocks: the official TypeScript SDK
    sends a string prompt as one text block. As in Claude Code, the last block is the one that may be a
    ``/name args`` line; the blocks before it (an image, say) go to the model ahead of the expansion.
    """
    if isinstance(prompt, str):
        return prompt, []
    if isinstance(prompt, list) and prompt:
        last = prompt[-1]
        if isinstance(last, dict) and last.get("type") == "text" and isinstance(last.get("text"), str):
            return last["text"], list(prompt[:-1])
    return None


async def command_prompt(app: AgentApp, prompt: Any) -> CommandPrompt | None:
    """The command ``prompt`` runs, expanded; None when ``prompt`` is not a ``/name`` line.

    An unknown name gives Claude Code's ``Unknown skill: <name>`` as the error. ``disable-model-invocation``
    keeps a command from the model only: the user may always run it.
    """
    split = command_text(prompt)
    if split is None:
        return None
    text, preceding = split
    parsed = parse_command_line(text)
    if parsed is None:
        return None
    name, args = parsed
    registry = app.skills
    if registry is not None:
        registry.reload_if_changed()
    skill = registry.get(name) if registry is not None else None
    if skill is None and name in BUILTIN_PROMPT_COMMANDS:
        return None
    if skill is None:
        return CommandPrompt(name, args, error=f"Unknown skill: {name}")
    ctx = app.session.ctx
    try:
        expanded = await expand_command(skill, args, ctx)
    except CommandExpansionError as exc:
        return CommandPrompt(name, args, skill=skill, error=f"Error: {exc}")
    blocks: list[Block] = [*preceding, *expanded.attachments, {"type": "text", "text": command_header(name, args)},
                           {"type": "text", "text": expanded.text}]
    return CommandPrompt(name, args, skill=skill, blocks=blocks,
                         rules=skill_permission_rules(skill.name, skill.allowed_tools))


def grant_for_run(session: Session, rules: tuple[PermissionRule, ...]) -> None:
    """Allow ``rules`` until the session's next run ends (the loop takes run rules back when a run ends)."""
    if rules:
        session.ctx.permissions = session.ctx.permissions.with_rules(*rules)
        session.run_state.grant_run_rules(list(rules))


async def refusal_events(app: AgentApp, command: CommandPrompt) -> AsyncIterator[Event]:
    """The run of a command that could not be sent: no model call, a result with the reason.

    An unknown name ends as Claude Code's does (``success``, the text ``Unknown skill: <name>``); a failed
    expansion is an error result naming the shell line and why it did not run.
    """
    started = time.monotonic()
    unknown = command.skill is None
    yield app.session.result_event("success" if unknown else "error_during_execution", not unknown,
                                   command.error or "", started=started)

