"""Slash commands about the conversation itself: /resume, /clear, /compact, /model, /cost, /status."""

from __future__ import annotations

from pathlib import Path

from catui import __version__
from catui.cli.tui.format import format_tokens
from catui.cli.tui.session_picker import session_choices
from catui.cli.tui.slash_commands import CommandHost, SlashCommand
from catui.errors import ConfigurationError
from catui.session.compaction import conversation_tokens
from catui.session.context_window import ContextPolicy
from catui.session.store import find_session_file


async def resume_command(host: CommandHost, argument: str) -> None:
    """``/resume [ID]``: continue an earlier session of this project (a numbered list without an id)."""
    cwd = Path(host.app.session.ctx.cwd)
    session_id = argument.split()[0] if argument else await _pick(host, cwd)
    if session_id is None:
        return
    if session_id == host.app.session.session_id:
        host.say("That is the session you are in.", "dim")
        return
    if find_session_file(session_id, cwd) is None and find_session_file(session_id) is None:
        raise ConfigurationError(f"no saved session {session_id!r}; /resume without an id lists this project's")
    if await host.switch_session(session_id, "resume"):
        count = len(host.app.session.messages)
        host.say(f"Resumed session {session_id} ({count} earlier messages)", "dim")


async def _pick(host: CommandHost, cwd: Path) -> str | None:
    choices = [(sid, label) for sid, label in session_choices(cwd) if sid != host.app.session.session_id]
    if not choices:
        host.say("No other saved session in this project.", "dim")
        return None
    host.say("Sessions of this project (newest first):")
    for number, (session_id, label) in enumerate(choices, start=1):
        host.say(f"  {number:>2}. {label}  [{session_id}]")
    answer = await host.ask(f"Resume which? [1-{len(choices)}, Enter to cancel] ")
    answer = (answer or "").strip()
    if not answer:
        return None
    if not answer.isdigit() or not 1 <= int(answer) <= len(choices):
        raise ConfigurationError(f"{answer!r} is not one of the numbers 1-{len(choices)}")
    return choices[int(answer) - 1][0]


async def clear_command(host: CommandHost, argument: str) -> None:
    """``/clear``: start a new conversation (a new session id); the old one stays resumable."""
    old = host.app.session.session_id
    if await host.switch_session(None, "clear"):
        host.say(f"Started a new conversation ({host.app.session.session_id}); /resume {old} goes back.", "dim")


async def compact_command(host: CommandHost, argument: str) -> None:
    """``/compact [instructions]``: summarise the conversation now and go on from the summary."""
    session = host.app.session
    if not session.messages:
        host.say("Nothing to compact yet.", "dim")
        return
    host.say("Compacting the conversation…", "dim")
    outcome = await session.compact(argument or None)
    host.context_tokens = outcome.post_tokens
    host.say(f"Compacted: {outcome.summarised} earlier messages summarised, {outcome.kept} kept "
             f"({format_tokens(outcome.pre_tokens)} → {format_tokens(outcome.post_tokens)} tokens).", "dim")


async def model_command(host: CommandHost, argument: str) -> None:
    """``/model [NAME]``: show the model, or use another one (alias, id or provider:model) from the next turn."""
    app = host.app
    if not argument:
        host.say(f"Model: {app.model_display} ({app.session.config.model}). /model NAME switches "
                 "(sonnet, opus, haiku, a model id, or provider:model).")
        return
    resolved = app.switch_model(argument.split()[0])
    host.say(f"Model set to {resolved.display} ({resolved.model_id}).", "dim")


async def cost_command(host: CommandHost, argument: str) -> None:
    """``/cost``: tokens and cost of this session per model, sub-agents included."""
    tracker = host.app.session.config.usage_tracker
    if not tracker.by_model:
        host.say("No model call yet in this session.", "dim")
        return
    host.say(f"Total cost: ${tracker.total_cost_usd:.4f} (the main agent and its sub-agents)")
    for model, usage in tracker.by_model.items():
        host.say(f"  {model}: {format_tokens(usage.input_tokens)} input, {format_tokens(usage.output_tokens)} output, "
                 f"{format_tokens(usage.cache_read_input_tokens)} cache read, "
                 f"{format_tokens(usage.cache_creation_input_tokens)} cache write · ${usage.cost_usd:.4f}")


async def status_command(host: CommandHost, argument: str) -> None:
    """``/status``: version, session, model, folder, permission mode, context use, transcript, tasks."""
    app = host.app
    session = app.session
    policy = session.config.context_policy or ContextPolicy()
    window = policy.window(session.config.model)
    used = conversation_tokens(session.state, session) if session.messages else 0
    live = [task for task in app.tasks.list() if task.is_live]
    auto = "on" if policy.auto_enabled else "off"
    lines = [
        f"catui {__version__}",
        f"  Session: {session.session_id}",
        f"  Model: {app.model_display} ({session.config.model})",
        f"  Folder: {session.ctx.cwd}",
        f"  Permission mode: {session.ctx.permissions.mode}",
        f"  Context: ~{format_tokens(used)} of {format_tokens(window)} tokens "
        f"({used * 100 // max(window, 1)}%), auto-compaction {auto}",
        f"  Transcript: {app.transcript_path or '(not saved)'}",
        f"  Background tasks running: {len(live)}",
    ]
    for line in lines:
        host.say(line)


SESSION_COMMANDS: tuple[SlashCommand, ...] = (
    SlashCommand("resume", "continue an earlier session of this project", resume_command, "[ID]"),
    SlashCommand("clear", "start a new conversation", clear_command),
    SlashCommand("compact", "summarise the conversation to free context", compact_command, "[instructions]"),
    SlashCommand("model", "show or switch the model", model_command, "[NAME]"),
    SlashCommand("cost", "tokens and cost per model, sub-agents included", cost_command),
    SlashCommand("status", "session, model, context use and more", status_command),
)
